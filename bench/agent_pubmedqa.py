"""Agent benchmark (issue 3): PubMedQA validation questions and questions the corpus cannot answer.

Prints, per mode (generate with the preset's LLM, and extractive):
- median seconds per answer and per node (a node that runs twice in an answer counts its total);
- share of answers citing the question's source abstract (and of those that retrieved it);
- share of generated sentences kept by the agent's own verifier (before repair), and the share of final
  (sentence, citation) pairs judged "Supports" by the evaluator's citation-support head when it is trained
  (an independent judge: a MiniLM head, not the LLM that verified them);
- abstention rate on the PubMedQA questions and on bench/agent_unanswerable.json.

    python bench/agent_pubmedqa.py [--n 20] [--modes generate,extractive] [--preset default] [--set k=v]
Writes the per-question records to --out (JSON) when given. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from biocite.agent.graph import Agent  # noqa: E402
from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.pubmedqa import read_items  # noqa: E402
from biocite.records import Answer  # noqa: E402
from biocite.settings import Settings, load_settings  # noqa: E402

UNANSWERABLE = Path(__file__).with_name("agent_unanswerable.json")


def pubmedqa_questions(settings: Settings, n: int) -> list[tuple[str, str]]:
    """(source PMID, question): the reranker's validation split when available, else the last n questions."""
    try:
        from biocite.index.rerank import validation_questions

        return [(q.pmid, q.question) for q in validation_questions(settings)[:n]]
    except ImportError:
        return [(item.pmid, item.question) for item in read_items()[-n:]]


def unanswerable_questions(agent: Agent) -> list[str]:
    """The written questions, re-checked: none of their absent terms may occur in the indexed documents."""
    spec = json.loads(UNANSWERABLE.read_text())["questions"]
    store = agent.retriever.documents
    texts = [d.text.lower() for d in store.get_many(store.pmids()).values()]
    out = []
    for item in spec:
        hits = [t for t in item["absent_terms"] if any(t in text for text in texts)]
        if hits:
            print(f"  skipped (the index mentions {hits}): {item['question']}")
        else:
            out.append(item["question"])
    return out


def node_seconds(answer: Answer) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for timing in answer.trace.timings:
        totals[timing.node] += timing.seconds
    return totals


def verifier_counts(answer: Answer) -> tuple[int, int]:
    """(drafts kept without re-citing, drafts judged) from the verify note; (0, 0) if verify did not run."""
    for note in answer.trace.notes:
        match = re.match(r"verification: (\d+) kept, (\d+) re-cited, (\d+) dropped", note)
        if match:
            kept, recited, dropped = map(int, match.groups())
            return kept, kept + recited + dropped
    return 0, 0


class LLMSupportJudge:
    """A second opinion from another LLM (e.g. qwen0.5b): P(yes) of the agent's support prompt >= 0.5."""

    def __init__(self, settings: Settings, model: str) -> None:
        from biocite.llm import make_chat_model

        other = settings.model_copy(deep=True)
        other.llm.model = model
        self.model = make_chat_model(other)
        self.name = f"llm:{model}"

    def judge(self, pairs):  # noqa: ANN001, ANN201 - the evaluator's Judge shape
        from types import SimpleNamespace

        from biocite.agent.prompting import load_prompt
        from biocite.llm import yes_probability

        prompt = load_prompt("support")
        out = []
        for evidence, statement in pairs:
            p = yes_probability(self.model, prompt.messages(evidence=evidence, statement=statement))
            label = "undetermined" if p is None else ("Supports" if p >= 0.5 else "Not supported")
            out.append(SimpleNamespace(label=label))
        return out


def citation_judge(settings: Settings, llm_model: str | None = None):  # noqa: ANN201 - a judge or None
    if llm_model:
        return LLMSupportJudge(settings, llm_model)
    try:
        from biocite.app.evaluation import _judge
        from biocite.evaluator.judges import JudgeCache

        return _judge(settings, "citation", JudgeCache(None), "head")
    except Exception as exc:  # noqa: BLE001 - optional independent check
        print(f"  (independent citation-support judge unavailable: {exc})")
        return None


def run(agent: Agent, questions: list[str], mode: str) -> list[tuple[Answer, float]]:
    out = []
    for i, question in enumerate(questions, 1):
        start = time.perf_counter()
        answer = agent.ask(question, mode=mode)
        seconds = time.perf_counter() - start
        out.append((answer, seconds))
        state = "abstained" if answer.abstained else f"{len(answer.sentences)} sentences ({answer.mode})"
        print(f"  [{mode} {i}/{len(questions)}] {seconds:5.1f} s  {state}  {question[:70]}", flush=True)
    return out


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(name: str, results: list[tuple[Answer, float]], sources: list[str] | None, judge) -> dict:  # noqa: ANN001
    answers = [a for a, _ in results]
    answered = [a for a in answers if not a.abstained]
    figures: dict = {
        "answers": len(answers),
        "median_seconds": round(median([s for _, s in results]), 2),
        "abstention_rate": round(sum(a.abstained for a in answers) / len(answers), 3) if answers else None,
    }
    per_node: dict[str, list[float]] = defaultdict(list)
    for answer in answers:
        for node, seconds in node_seconds(answer).items():
            per_node[node].append(seconds)
    figures["median_node_seconds"] = {n: round(median(v), 2) for n, v in per_node.items()}
    if sources is not None:
        cites = [src in a.cited_pmids for a, src in zip(answers, sources, strict=True)]
        found = [src in a.trace.retrieved for a, src in zip(answers, sources, strict=True)]
        figures["share_citing_source"] = round(sum(cites) / len(answers), 3)
        figures["share_retrieving_source"] = round(sum(found) / len(answers), 3)
        figures["fallbacks_to_extractive"] = (
            sum(a.mode == "extractive" for a in answered) if name.startswith("generate") else None
        )
    kept = judged = 0
    for answer in answers:
        k, j = verifier_counts(answer)
        kept, judged = kept + k, judged + j
    if judged:
        figures["verifier_kept_share_of_drafts"] = round(kept / judged, 3)
    pairs = [
        (" ".join(e.span.text for e in c.evidence), s.text)
        for a in answered
        for s in a.sentences
        for c in s.citations
    ]
    if judge is not None and pairs:
        labels = [v.label for v in judge.judge(pairs)]
        figures["independent_support_share"] = round(labels.count("Supports") / len(labels), 3)
        figures["independent_pairs"] = len(labels)
        figures["independent_undetermined"] = labels.count("undetermined")
        # Negative control: each sentence against the evidence cited in ANOTHER answer. A judge that is
        # worth its figure says "Supports" far less often here; if not, the figure above means little.
        answer_of = [i for i, a in enumerate(answered) for s in a.sentences for _ in s.citations]
        half = len(pairs) // 2
        shifted = [
            (pairs[(k + half) % len(pairs)][0], text)
            for k, (_, text) in enumerate(pairs)
            if answer_of[(k + half) % len(pairs)] != answer_of[k]
        ]
        if shifted:
            control = [v.label for v in judge.judge(shifted)]
            figures["control_support_share_mismatched_pairs"] = round(
                control.count("Supports") / len(control), 3
            )
    sentences = [s for a in answered for s in a.sentences]
    figures["sentences_per_answer"] = round(len(sentences) / len(answered), 2) if answered else 0
    print(f"\n== {name}")
    for key, value in figures.items():
        print(f"  {key}: {value}")
    return figures


def records(results: list[tuple[Answer, float]], sources: list[str] | None) -> list[dict]:
    return [
        {
            "answer": json.loads(a.model_dump_json()),
            "seconds": round(s, 3),
            "source": sources[i] if sources else None,
        }
        for i, (a, s) in enumerate(results)
    ]


def rereport(path: Path, settings: Settings, llm_model: str | None = None) -> None:
    """Figures from a saved run (e.g. once the evaluator's citation head is trained)."""
    saved = json.loads(path.read_text())
    judge = citation_judge(settings, llm_model)
    for key, rows in saved["records"].items():
        if rows and "answer" not in rows[0]:  # the first format: bare answers, time = sum of node times
            rows = [{"answer": r, "seconds": sum(t["seconds"] for t in r["trace"]["timings"])} for r in rows]
        results = [(Answer.model_validate(r["answer"]), r["seconds"]) for r in rows]
        sources = None
        if key.endswith("pubmedqa"):
            sources = [r.get("source") for r in rows]
            if None in sources:
                sources = [p for p, _ in pubmedqa_questions(settings, len(rows))]
        report(key, results, sources, judge if sources else None)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--modes", default="generate,extractive")
    parser.add_argument("--preset", default=None)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--no-unanswerable", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--records", type=Path, default=None, help="Re-report a saved --out file, no runs.")
    parser.add_argument(
        "--judge-llm", default=None, help="With --records: second-opinion LLM, e.g. qwen0.5b."
    )
    args = parser.parse_args()
    settings = load_settings(args.preset, args.overrides)
    if args.records:
        return rereport(args.records, settings, args.judge_llm)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    agent = Agent(settings, retriever=open_retriever(settings))

    start = time.perf_counter()
    _ = agent.retriever, agent.cache
    if "generate" in modes:
        _ = agent.chat_model
    agent.ask("Does aspirin reduce the risk of myocardial infarction?", mode="extractive")  # warm-up
    print(f"load + warm-up: {time.perf_counter() - start:.1f} s (not counted below)")
    print(f"models: {agent.models()}; threads {settings.llm.threads}; cpu count {os.cpu_count()}")
    try:
        load = os.getloadavg()
        print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    except OSError:
        pass

    items = pubmedqa_questions(settings, args.n)
    sources = [p for p, _ in items]
    questions = [q for _, q in items]
    unanswerable = [] if args.no_unanswerable else unanswerable_questions(agent)
    judge = citation_judge(settings)
    summary: dict = {"settings": json.loads(settings.model_dump_json()), "figures": {}, "records": {}}
    for mode in modes:
        agent = Agent(
            settings, retriever=agent.retriever, chat_model=agent._chat_model
        )  # a fresh embedding cache per mode
        results = run(agent, questions, mode)
        summary["figures"][f"{mode}/pubmedqa"] = report(
            f"{mode} / PubMedQA validation", results, sources, judge
        )
        summary["records"][f"{mode}/pubmedqa"] = records(results, sources)
        if unanswerable:
            results = run(agent, unanswerable, mode)
            summary["figures"][f"{mode}/unanswerable"] = report(f"{mode} / unanswerable", results, None, None)
            summary["records"][f"{mode}/unanswerable"] = records(results, None)
    if {"generate/pubmedqa", "extractive/pubmedqa"} <= set(summary["figures"]):
        g = summary["figures"]["generate/pubmedqa"]["median_seconds"]
        e = summary["figures"]["extractive/pubmedqa"]["median_seconds"]
        print(f"\nmedian seconds, generate / extractive: {g} / {e} = {g / e:.1f}x")
    try:
        load = os.getloadavg()
        print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    except OSError:
        pass
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1))
        print(f"records written to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
