"""Answers that answer the question (issue 12): bottom line, answer-bearing evidence, coverage, synthesis.

Data and split: the PubMedQA development questions (data/pubmedqa/dev_questions.json) split BY QUESTION with
the reranker's seeded rule (`biocite.pubmedqa.split_questions`: sorted by PMID, shuffled with
random.Random(13), first 60 % train, last 40 % held out = 200 questions). The findings and verdict models
are trained on the train part only; every figure here is on the held-out part (the first --n of it), the
10 questions of bench/agent_unanswerable.json, the swapped held-out questions of
bench/agent_unanswerable_swapped.json (bench/make_unanswerable_swapped.py) and the held-out questions with
a swapped asked outcome, setting or subject of bench/agent_unanswerable_outcomes.json, _settings.json and
_subjects.json, or one word of the asked outcome swapped, _partial_outcomes.json (bench/agent_concepts.py).

Prints, per mode:
- verdict accuracy and macro-F1 over yes/no/maybe (maybe = "mixed"; "insufficient" or no verdict counts
  as wrong), with the majority-class baseline;
- share of yes/no answers whose first sentence is the bottom line;
- false abstention (and false "not covered") on the answerable held-out questions;
- abstention-or-not_covered on the unanswerable questions;
- share of answers whose first cited evidence sentence is in the results/conclusions part of its abstract:
  "conclusions" = the sentence overlaps the PubMedQA long answer (the abstract's conclusions, exact) or a
  CONCLUSIONS-labelled section; "results or conclusions" adds sentences of RESULTS-labelled sections and,
  in PubMedQA source abstracts (unlabelled), sentences before the conclusions that report a statistic
  (p-value, CI, ratio or percentage);
- extractive mode: quoted sentences per answer, and of the quotes of the question's own source abstract the
  share in its conclusions / results or conclusions (how much of an answer reports findings);
- generate mode: numbers of generated sentences found in their cited evidence, and sentences that copy one
  evidence sentence while citing another abstract (each sentence checked against every evidence sentence
  of its answer);
- median seconds per answer; the demo question's answer.

    python bench/agent_answers.py [--n 200] [--modes extractive,generate] [--gen-n 20] [--skip 0] [--split train] [--set k=v]
                                  [--out f] [--records-out f]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
from agent_concepts import OUT as OUTCOMES  # noqa: E402
from agent_concepts import Corpus  # noqa: E402
from make_unanswerable_designators import still_unanswerable as designation_unanswerable  # noqa: E402
from make_unanswerable_opposites import still_unanswerable as opposite_unanswerable  # noqa: E402
from make_unanswerable_post_qualifiers import still_unanswerable as post_unanswerable  # noqa: E402

from biocite.agent.coverage import (  # noqa: E402
    ANIMALS_ONLY,
    DocumentTerms,
    covers,
    key_concepts,
    uncited_concepts,
)
from biocite.agent.findings import overlaps_long_answer  # noqa: E402
from biocite.agent.graph import Agent  # noqa: E402
from biocite.agent.synthesis import audit  # noqa: E402
from biocite.heads import top_label_calibration_error  # noqa: E402
from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.populations import studied_in_animals  # noqa: E402
from biocite.pubmedqa import load_questions, long_answers, read_items, split_questions  # noqa: E402
from biocite.records import Answer  # noqa: E402
from biocite.sentences import section_label  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

HERE = Path(__file__).parent
SETTINGS, SUBJECTS, PARTIAL, DESIGNATORS, OPPOSITES, POST_QUALIFIERS = (
    HERE / f"agent_unanswerable_{p}.json"
    for p in ("settings", "subjects", "partial_outcomes", "designators", "opposites", "post_qualifiers")
)
DEMO = "Does as-needed budesonide-formoterol reduce severe exacerbations in mild asthma?"
_STATISTIC = re.compile(
    r"\bp\s*[<=>≤≥]\s*0?\.\d|\b95\s*%|\bCI\b|\b(?:a?OR|RR|a?HR)\b|odds ratio|hazard ratio|\d\s*%", re.I
)


def animal_source(agent: Agent, pmid: str) -> bool:
    doc = agent.retriever.documents.get(pmid)
    return doc is not None and studied_in_animals(f"{doc.title} {doc.abstract}", doc.mesh)


def unanswerable(agent: Agent) -> list[tuple[str, str]]:
    """The unanswerable sets, each re-checked against the index: absent terms absent; a swapped outcome,
    setting or subject (or, in the partial set, the swapped-in word) in no abstract covering the question's
    other concepts; and a swapped-in word that coverage now reads as a word of question templates ("worthwhile",
    "adequate": the swap took it from another question's subject when coverage read it as one) names no absent
    entity."""
    corpus = Corpus(agent.retriever.documents)  # type: ignore[arg-type]  # the index's DocStore
    texts = [d.text.casefold() for d in corpus.docs.values()]
    out = []
    for name in ("agent_unanswerable.json", "agent_unanswerable_swapped.json"):
        for item in json.loads((HERE / name).read_text())["questions"]:
            if any(t in text for t in item["absent_terms"] for text in texts):
                print(f"  skipped (the index mentions {item['absent_terms']}): {item['question']}")
            else:
                out.append((name.removesuffix(".json"), item["question"]))
    config = agent.config
    two = (config.max_concept_df, config.max_outcome_df)
    # the partial set was built with all four bars (bench/agent_concepts.py)
    four = (*two, config.max_setting_df, config.max_subject_df)
    # (file, the swapped concept's field, the field the index must not have with the other concepts, bars)
    sets = [(OUTCOMES, "outcome", "outcome", two), (SETTINGS, "setting", "setting", two)]
    sets += [(SUBJECTS, "subject", "subject", two), (PARTIAL, "outcome", "new_word", four)]
    for path, part, absent, bars in sets:
        for item in json.loads(path.read_text())["questions"]:
            keys = key_concepts(item["question"], corpus.df, *bars)
            if not key_concepts(item[part], corpus.df, 1.0):  # "Does worthwhile prevent seroma ...?"
                print(
                    f"  skipped (the swapped-in {item[part]!r} is a question's word, no entity): {item['question']}"
                )
            elif corpus.answerable([k for k in keys if k.text != item[part]], item[absent]):
                print(
                    f"  skipped (an abstract on the other concepts mentions {item[absent]!r}): {item['question']}"
                )
            else:
                out.append((path.stem, item["question"]))
    rechecks = (
        (DESIGNATORS, designation_unanswerable),
        (OPPOSITES, opposite_unanswerable),
        (POST_QUALIFIERS, post_unanswerable),
    )
    for path, recheck in rechecks:
        for item in json.loads(path.read_text())["questions"]:
            if recheck(corpus, item, four):
                out.append((path.stem, item["question"]))
            else:
                print(
                    f"  skipped (an abstract on the other concepts names {item['swapped']!r}): {item['question']}"
                )
    return out


def part_of(agent: Agent, answer: Answer, long_answers: dict[str, str]) -> tuple[bool, bool] | None:
    """(in conclusions, in results or conclusions) for the first cited evidence sentence; None if none."""
    findings = [s for s in answer.sentences if s.kind != "bottom_line"]
    if not findings or not findings[0].citations or not findings[0].citations[0].evidence:
        return None
    citation = findings[0].citations[0]
    evidence = citation.evidence[0]
    if citation.pmid in long_answers:
        return source_part(evidence.span.text, long_answers[citation.pmid])
    doc = agent.retriever.documents.get(citation.pmid)
    label = (section_label(doc, evidence.span.start) if doc is not None else None) or ""
    conclusions = bool(re.search(r"CONCLU|INTERPRET", label, re.I))
    results = bool(re.search(r"RESULT|FINDING", label, re.I))
    return conclusions, conclusions or results


def source_part(text: str, long_answer: str) -> tuple[bool, bool]:
    """(in conclusions, in results or conclusions) for a sentence of a PubMedQA source abstract (unlabelled):
    conclusions = it overlaps the question's long answer; results = it reports a statistic."""
    conclusions = overlaps_long_answer(text, long_answer)
    return conclusions, conclusions or bool(_STATISTIC.search(text))


def source_quotes(results: list[tuple[str, Answer, float]], long_answers: dict[str, str]) -> dict:
    """Extractive answers: quoted sentences per answer, and of the quotes of the question's own source
    abstract, the share in its conclusions (overlapping the long answer) and in results or conclusions."""
    answered = [(pmid, a) for pmid, a, _ in results if not a.abstained]
    quotes = [(pmid, s) for pmid, a in answered for s in a.sentences if s.kind != "bottom_line"]
    own = [(pmid, s.citations[0].evidence[0].span.text) for pmid, s in quotes
           if s.citations and s.citations[0].pmid == pmid and s.citations[0].evidence]  # fmt: skip
    parts = [source_part(text, long_answers[pmid]) for pmid, text in own]
    return {
        "quoted_sentences_per_answer": round(len(quotes) / max(len(answered), 1), 2),
        "source_quotes": len(own),
        "source_quotes_in_conclusions": round(sum(c for c, _ in parts) / max(len(own), 1), 3),
        "source_quotes_in_results_or_conclusions": round(sum(r for _, r in parts) / max(len(own), 1), 3),
    }


def f1_macro(gold: list[str], predicted: list[str], labels: list[str]) -> float:
    scores = []
    for label in labels:
        tp = sum(g == p == label for g, p in zip(gold, predicted, strict=True))
        fp = sum(p == label and g != label for g, p in zip(gold, predicted, strict=True))
        fn = sum(g == label and p != label for g, p in zip(gold, predicted, strict=True))
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        scores.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return sum(scores) / len(scores)


def evaluate(
    agent: Agent, mode: str, items: list[tuple[str, str]], gold: dict[str, str]
) -> tuple[dict, list]:
    conclusions = long_answers()
    results = []
    for i, (pmid, question) in enumerate(items, 1):
        start = time.perf_counter()
        answer = agent.ask(question, mode=mode)
        seconds = time.perf_counter() - start
        results.append((pmid, answer, seconds))
        state = "abstained" if answer.abstained else f"{len(answer.sentences)} sentences"
        print(
            f"  [{mode} {i}/{len(items)}] {seconds:5.1f} s {state:13} verdict {answer.verdict} "
            f"(gold {gold.get(pmid)}) {question[:60]}",
            flush=True,
        )
    answers = [a for _, a, _ in results]
    predicted = [{"mixed": "maybe"}.get(a.verdict or "", a.verdict or "none") for a in answers]
    golds = [gold[p] for p, _, _ in results]
    parts = [part_of(agent, a, conclusions) for a in answers if not a.abstained]
    parts = [p for p in parts if p is not None]
    yes_no = [a for a in answers if a.question_type == "yes/no" and not a.abstained]
    majority = max(set(golds), key=golds.count)
    figures = {
        "questions": len(answers),
        "verdict_accuracy": round(
            sum(g == p for g, p in zip(golds, predicted, strict=True)) / len(answers), 3
        ),
        "verdict_macro_f1": round(f1_macro(golds, predicted, ["yes", "no", "maybe"]), 3),
        "majority_baseline_accuracy": round(golds.count(majority) / len(golds), 3),
        "majority_baseline_macro_f1": round(
            f1_macro(golds, [majority] * len(golds), ["yes", "no", "maybe"]), 3
        ),
        "yes_no_questions": len(yes_no),
        "opens_with_verdict": round(
            sum(bool(a.sentences) and a.sentences[0].kind == "bottom_line" for a in yes_no)
            / max(len(yes_no), 1),
            3,
        ),
        "false_abstention": round(sum(a.abstained for a in answers) / len(answers), 3),
        "false_not_covered": round(sum(bool(a.not_covered) for a in answers) / len(answers), 3),
        "first_evidence_in_conclusions": round(sum(c for c, _ in parts) / max(len(parts), 1), 3),
        "first_evidence_in_results_or_conclusions": round(sum(r for _, r in parts) / max(len(parts), 1), 3),
        "median_seconds": round(statistics.median(s for _, _, s in results), 2),
        **verdict_calibration(answers, golds),
        # answers saying every cited study is in animals, beside the questions whose source abstract is one
        # (NLM's MeSH check tags: Animals, not Humans)
        "caveat_animals_only": sum(ANIMALS_ONLY in a.caveats for a in answers if not a.abstained),
        # answers saying an asked group of people is named only in the cited abstracts' MeSH headings
        "caveat_people_in_headings_only": sum(
            any("MeSH headings" in c for c in a.caveats) for a in answers if not a.abstained
        ),
        "source_abstract_in_animals": sum(animal_source(agent, p) for p, _, _ in results),
    }
    if mode == "extractive":
        figures |= source_quotes(results, conclusions)
    if mode == "generate":
        figures["synthesis"] = audit([a for a in answers if not a.abstained])
        figures["uncited_concepts"] = uncited_audit(agent, [a for a in answers if not a.abstained])
        figures["fell_back_to_extractive"] = sum(a.mode == "extractive" for a in answers if not a.abstained)
    return figures, results


def uncited_audit(agent: Agent, answers: list[Answer]) -> dict[str, int]:
    """Generated sentences that name a concept of the question none of their cited abstracts covers, read
    from the index (independently of the answer's trace), and how many the polish step dropped."""
    docs = agent.retriever.documents
    counts = {"sentences": 0, "naming_uncited_concepts": 0, "dropped_by_the_check": 0}
    for answer in answers:
        counts["dropped_by_the_check"] += sum(
            "its citations do not mention" in note for note in answer.trace.notes
        )
        concepts = agent.question_concepts(answer.question)
        for sentence in answer.sentences:
            if sentence.kind == "bottom_line" or answer.mode != "generate":
                continue
            counts["sentences"] += 1
            terms = [
                DocumentTerms.of(d) for d in docs.get_many([c.pmid for c in sentence.citations]).values()
            ]
            cited = {c.text for c in concepts if any(covers(c, t) for t in terms)}
            counts["naming_uncited_concepts"] += bool(uncited_concepts(sentence.text, concepts, cited))
    return counts


def verdict_calibration(answers: list, golds: list[str]) -> dict:
    """Over the answers that state yes, no or mixed: the top-label calibration error of the stated
    probability (10 bins) and the mean probability beside the accuracy."""
    stated = [(a.verdict_probability, {"mixed": "maybe"}.get(a.verdict, a.verdict) == g)
              for a, g in zip(answers, golds, strict=True)
              if a.verdict in ("yes", "no", "mixed") and a.verdict_probability is not None]  # fmt: skip
    if not stated:
        return {}
    confidence, correct = np.array([p for p, _ in stated]), np.array([c for _, c in stated], dtype=float)
    return {
        "verdict_stated": len(stated),
        "verdict_stated_accuracy": round(float(correct.mean()), 3),
        "verdict_mean_probability": round(float(confidence.mean()), 3),
        "verdict_calibration_error": round(top_label_calibration_error(confidence, correct), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=200, help="held-out questions (extractive)")
    parser.add_argument("--gen-n", type=int, default=20, help="held-out questions in generate mode")
    parser.add_argument("--skip", type=int, default=0, help="start after this many held-out questions")
    parser.add_argument(
        "--split",
        choices=("held_out", "train"),
        default="held_out",
        help="answer the TRAIN questions instead (to study failures without looking at the held-out ones)",
    )
    parser.add_argument("--unanswerable-n", type=int, default=200)
    parser.add_argument("--gen-unanswerable-n", type=int, default=20)
    parser.add_argument(
        "--unanswerable-sets",
        default="agent_unanswerable,agent_unanswerable_swapped,agent_unanswerable_outcomes,"
        "agent_unanswerable_settings,agent_unanswerable_subjects,agent_unanswerable_partial_outcomes,"
        "agent_unanswerable_designators,agent_unanswerable_opposites,agent_unanswerable_post_qualifiers",
        help="which unanswerable sets, in this order",
    )
    parser.add_argument("--modes", default="extractive,generate")
    parser.add_argument("--preset", default=None)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--records-out", type=Path, default=None, help="generate-mode answers, for the test")
    args = parser.parse_args()
    settings = load_settings(args.preset, args.overrides)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    agent = Agent(settings, retriever=open_retriever(settings))
    start = time.perf_counter()
    _ = agent.findings, agent.verdict_model, agent.doc_freqs
    if "generate" in modes:
        _ = agent.chat_model
    agent.ask("Does aspirin reduce the risk of myocardial infarction?", mode="extractive")  # warm-up
    print(f"load + warm-up (models trained if missing): {time.perf_counter() - start:.1f} s")
    print(f"overrides: {args.overrides}; load average {os.getloadavg()[0]:.2f}")
    gold = {item.pmid: item.final_decision for item in read_items()}
    train, held_out = split_questions(load_questions())
    asked = train if args.split == "train" else held_out
    sets = args.unanswerable_sets.split(",")
    unanswerable_questions = sorted(
        (item for item in unanswerable(agent) if item[0] in sets), key=lambda item: sets.index(item[0])
    )
    summary: dict = {"overrides": args.overrides, "figures": {}, "records": {}}
    for mode in modes:
        n = args.n if mode == "extractive" else args.gen_n
        items = [(q.pmid, q.question) for q in asked[args.skip : args.skip + n]]
        figures, results = evaluate(agent, mode, items, gold)
        k = args.unanswerable_n if mode == "extractive" else args.gen_unanswerable_n
        # the 10 written questions first, then the swapped entities, then the swapped outcomes
        chosen = unanswerable_questions[:k]
        caught: dict[str, list[bool]] = {}
        unanswerable_answers = []
        for i, (kind, question) in enumerate(chosen, 1):
            answer = agent.ask(question, mode=mode)
            unanswerable_answers.append(answer)
            ok = answer.abstained or bool(answer.not_covered)
            caught.setdefault(kind, []).append(ok)
            for note in answer.trace.notes:
                if "its citations do not mention" in note:
                    print(f"    {note}")
            print(
                f"  [{mode} unanswerable {i}/{len(chosen)}] {'caught' if ok else 'ANSWERED'}  {question[:70]}"
            )
        every = [ok for oks in caught.values() for ok in oks]
        figures["unanswerable_questions"] = len(chosen)
        figures["unanswerable_abstained_or_not_covered"] = round(sum(every) / max(len(every), 1), 3)
        figures["unanswerable_by_set"] = {kind: f"{sum(oks)}/{len(oks)}" for kind, oks in caught.items()}
        if mode == "generate":
            figures["unanswerable_uncited_concepts"] = uncited_audit(agent, unanswerable_answers)
        demo = agent.ask(DEMO, mode=mode)
        figures["demo"] = {
            "verdict": demo.verdict,
            "verdict_probability": demo.verdict_probability,
            "sentences": [s.text for s in demo.sentences],
            "abstain_reason": demo.abstain_reason,
        }
        summary["figures"][mode] = figures
        summary["records"][mode] = [
            {"pmid": p, "seconds": round(s, 2), "answer": json.loads(a.model_dump_json())}
            for p, a, s in results
        ]
        print(f"\n== {mode}")
        for key, value in figures.items():
            print(f"  {key}: {value}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1))
        print(f"records written to {args.out}")
    if args.records_out and "generate" in summary["records"]:
        run = {"about": "bench/agent_answers.py generate-mode answers (tests/unit/test_answer_run.py)"}
        args.records_out.write_text(json.dumps({**run, "records": summary["records"]["generate"]}) + "\n")


if __name__ == "__main__":
    sys.exit(main())
