"""The outcome, subject and setting bars of entity coverage (issue 12): fit `agent.max_outcome_df`,
`agent.max_subject_df` and `agent.max_setting_df` on TRAIN questions, write the held-out swapped unanswerable
questions.

"Does vitamin D supplementation prevent fractures in older adults?" has one key concept ("vitamin D
supplementation"); "fractures" is in 0.7 % of the indexed abstracts, far above the key-concept bar
(`agent.max_concept_df`, 0.05 %), so no check saw that no abstract on vitamin D mentions fractures. The
asked outcome (the first chunk after an outcome verb, agent/coverage.py) is checked with its own, looser
bar. Too loose, and a source abstract that words the outcome differently is reported "not covered"; too
strict, and a swapped outcome goes unseen.

Data and split: the PubMedQA development questions split BY QUESTION (`biocite.pubmedqa.split_questions`,
seed 13, 60 % train / 40 % held out), the same split as bench/agent_answers.py.
- false miss: share of questions whose own source abstract lacks every term of the asked outcome (the
  answer is there, the agent would say "not covered");
- outcome swap: each question with a key concept and an asked outcome gets the asked outcome of another
  question of the same part (the next three in split order that fit, three swaps per question) such that NO indexed abstract covering
  all the question's key concepts has any content word of the new outcome: the corpus cannot answer it.
  Detected when the new outcome is a concept (key or outcome) of the swapped question; the coverage check
  then finds it in no covering abstract by construction (bench/agent_answers.py runs the agent on them).
- the bar: the grid value with the largest (detection - false miss) on TRAIN; held-out figures printed
  after the choice. `--write` saves the held-out swaps to bench/agent_unanswerable_outcomes.json.
- partial outcome swaps: one word of a question's asked outcome of two or more terms replaced by a word of
  another question's outcome (same part, seeded) that no indexed abstract covering the question's other
  concepts has ("muscle pain" -> "joint pain" where no statin abstract says "joint"). Detected when no
  abstract covering the other concepts covers the new outcome. The shipped rule (an outcome is covered by ALL
  its terms) against the rule it replaced (ANY of its terms: "muscle pain" was covered by "abdominal pain"),
  computed in the same run, with the false miss of each. `--write` or `--write-partial` (this set alone) saves
  the held-out partial swaps to bench/agent_unanswerable_partial_outcomes.json.
- subject and setting swaps: the same construction for the entity asked about (the first chunk after the
  question's opening word) and the population or condition (the first chunk after "in"/"among"/"after"/
  "before"/"during"/"with", or "for" when it names a disease, an age group or a sex), a swap kept only where
  the new part is read in that role in the swapped question ("for | hair" is no setting, so no setting swap):
  their bars `agent.max_setting_df`, then `agent.max_subject_df`, are the grid values with the largest
  (detection - false miss) on TRAIN among those whose TRAIN false miss (setting and subject concepts together)
  is at most 0.05 (a missed subject or setting makes an answerable question "not covered", and issue 12 allows
  0.10 of false abstention), the setting's at most `SETTING_CAP` (words in a fifth of the abstracts), the
  subject's at most `SUBJECT_CAP` (the subjects the expert questions gain above it are printed: template words
  of spoken questions); `--write` saves the held-out swaps to
  bench/agent_unanswerable_settings.json and _subjects.json.
- unseen words: concepts of the questions with no specific word the index ever saw (PubMedQA questions are
  titles, the index holds abstracts) and how many of them their own source abstract covers, without and
  with reading a word as the evidence writes it ("shockwave": "shock wave", agent/coverage.py); and, for
  every concept of the unanswerable sets the index never saw, whether ANY indexed abstract writes it
  otherwise (it must not: that would answer a question about a new drug with an old one).
- conversational words: the concepts that words of conversation ("okay", "anything", "someone") made in
  the expert questions (K-QA and BioGen 2024/2025 topics), and how many PubMedQA and unanswerable questions
  change, with and without `coverage.CONVERSATIONAL`.
- word forms: every pair of index words the noun / adjective reading joins ("parkinsonian" / "Parkinson",
  `coverage.WORD_FORMS`; printed, to be read), and the false miss of every concept on the source abstracts
  and the partial outcome swaps detected with and without it.
- all terms (measured, not shipped): the false miss of the setting and the subject if they were covered by all
  their terms, as an asked outcome is, rather than by the rarest.
- spellings: the groups of index terms that British -> American spelling merges (printed, to be read: a
  merge of two different words would be a defect), and for the expert questions (K-QA and BioGen
  2024/2025 topics) each concept whose required (rarest) term the index has in both spellings, with how many
  indexed abstracts have that term as written and in either spelling.

    python bench/agent_concepts.py [--write]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
from collections.abc import Callable
from pathlib import Path
from unittest import mock

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from biocite.agent import coverage  # noqa: E402
from biocite.agent.coverage import (  # noqa: E402
    GENERIC,
    Concept,
    DocumentFrequencies,
    DocumentTerms,
    asked_outcome,
    asked_setting,
    asked_subject,
    covers,
    key_concepts,
    never_indexed,
)
from biocite.index.build import open_index  # noqa: E402
from biocite.index.store import DocStore  # noqa: E402
from biocite.kqa import load_questions as load_kqa  # noqa: E402
from biocite.pubmedqa import Question, load_questions, split_questions  # noqa: E402
from biocite.settings import load_settings  # noqa: E402
from biocite.tokenize import american_spelling, tokenize  # noqa: E402
from biocite.topics import load_topics  # noqa: E402

OUT = Path(__file__).with_name("agent_unanswerable_outcomes.json")
HERE = Path(__file__).parent
PARTIAL_OUT = HERE / "agent_unanswerable_partial_outcomes.json"
GRID = [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2]
ROLE_GRID = [0.0, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 1.0]
# A setting or subject missed on an answerable question makes its answer "not covered" with no verdict, and
# the agent's budget for that is issue 12's false-abstention bar (0.10): the two roles together may spend half
# of it (the setting is fitted first, the subject on what is left).
MISS_BUDGET = 0.05
# PubMedQA titles name their subject as a noun phrase; patients speak in templates ("How long ...", "Is it
# normal ...", "What type of ...", "the first-line treatment"). `expert_subjects_report` prints the subjects the
# expert questions gain at each looser bar: at 0.02 mostly entities ("antibiotic", "nausea", "vaccination",
# "steroid"), from 0.05 on mostly template words ("short term", "success", "live", "prevalence", "long",
# "normal", "type", "line"), which no abstract needs to contain. So the subject bar is capped at 0.02 whatever
# TRAIN allows.
SUBJECT_CAP = 0.02
# A setting above 0.2 is a word in more than a fifth of the abstracts: "in | disease prevention", "in risk |
# groups", "in 2 | days". The swap construction lets such a swap in (no abstract covering the question's other
# concepts writes "disease", though most others do), but no answer needs the word: with "before" and "during",
# 1.0 beat 0.2 by one of 260 TRAIN swaps, "restenosis after | disease". So the setting bar is capped at 0.2.
SETTING_CAP = 0.2
ROLE_ABOUT = {
    "setting": "setting (the population or condition after 'in'/'among')",
    "subject": "subject (the entity asked about: the first chunk after the question's opening word)",
}


def content_stems(text: str) -> set[str]:
    return {t for t in tokenize(text, stem=True) if t not in GENERIC}


class Corpus:
    """Every indexed abstract's terms, to check that a swapped question has no answer in the index."""

    def __init__(self, store: DocStore) -> None:
        self.df = DocumentFrequencies.from_token_lists(t for _, t in store.iter_tokens())
        self.docs = store.get_many(store.pmids())
        self.terms = {p: DocumentTerms.of(d) for p, d in self.docs.items()}

    def covering(self, keys: list[Concept]) -> list[DocumentTerms]:
        """The abstracts that cover all these concepts."""
        return [t for t in self.terms.values() if all(covers(k, t) for k in keys)]

    def answerable(self, keys: list[Concept], outcome: str) -> bool:
        stems = content_stems(outcome)
        return any(stems & t.stems for t in self.covering(keys))


def swaps(
    questions: list[Question],
    corpus: Corpus,
    key_bar: float,
    per_question: int = 3,
    asked: Callable[[str], str | None] = asked_outcome,
    outcome_bar: float = 0.0,
    label: str = "outcome",
) -> list[dict]:
    """Each question's asked outcome (or its setting or subject: `asked`, `label`) replaced by other
    questions' (up to `per_question` of them, the next ones in split order that fit), where the corpus has no
    answer: no abstract covering the question's other concepts has a content word of the new part."""
    parts = [(q, asked(q.question)) for q in questions]
    pool = [o for _, o in parts if o and content_stems(o)]
    out = []
    for i, (question, part) in enumerate(parts):
        concepts = key_concepts(question.question, corpus.df, key_bar, outcome_bar)
        keys = [k for k in concepts if k.text != part]
        if not part or not keys or not pool:
            continue
        made = 0
        for j in range(len(pool)):
            new = pool[(i + j) % len(pool)]
            swapped = question.question.replace(part, new, 1)
            if swapped == question.question or content_stems(new) & content_stems(part):
                continue
            if corpus.answerable(keys, new) or asked(swapped) != new:
                continue  # answerable, or the new part is not read in its role there ("for | hair": no setting)
            out.append(
                {
                    "question": swapped,
                    "from_pmid": question.pmid,
                    "swapped": part,
                    label: new,
                    "key_concepts": [k.text for k in keys],
                }
            )
            made += 1
            if made == per_question:
                break
    return out


def figures(
    questions: list[Question],
    swapped: list[dict],
    corpus: Corpus,
    bars: dict[str, float],
    role: str,
    counted: tuple[str, ...] = ("setting", "subject"),
) -> tuple[float, float]:
    """(false miss on the source abstracts, detection of the swapped parts of one role: "outcome", "setting"
    or "subject") at the bars given (keyword arguments of `key_concepts`). The false miss counts the concepts
    of the `counted` roles: the setting and subject together by default (the subject is fitted after the
    setting, on what the setting left)."""
    detected = sum(
        any(c.text == s[role] for c in key_concepts(s["question"], corpus.df, **bars)) for s in swapped
    )
    return false_miss(questions, corpus, bars, counted), detected / max(len(swapped), 1)


def false_miss(
    questions: list[Question],
    corpus: Corpus,
    bars: dict[str, float],
    counted: tuple[str, ...],
    rule: Callable[[Concept, DocumentTerms], bool] = covers,
) -> float:
    """Share of the questions whose own source abstract misses a concept of the `counted` roles (by `rule`)."""
    missed = 0
    for q in questions:
        of_roles = [c for c in key_concepts(q.question, corpus.df, **bars) if c.role in counted]
        missed += any(not rule(c, corpus.terms[q.pmid]) for c in of_roles)
    return missed / len(questions)


def outcome_figures(
    questions: list[Question], swapped: list[dict], corpus: Corpus, key_bar: float, bar: float
) -> tuple[float, float]:
    """(false miss on the source abstracts, detection of the swapped outcomes) at one outcome bar."""
    bars = {"max_df_share": key_bar, "max_outcome_df_share": bar}
    return figures(questions, swapped, corpus, bars, "outcome", counted=("outcome",))


def fit_role_bar(
    role: str,
    train: list[Question],
    held_out: list[Question],
    corpus: Corpus,
    bars: dict[str, float],
    write: bool,
) -> float:
    """A role's bar ("setting": the population or condition; "subject": the entity asked about): the grid
    value with the largest (detection - false miss) on TRAIN, then the held-out figures at it."""
    asked = {"setting": asked_setting, "subject": asked_subject}[role]
    key_bar, outcome_bar = bars["max_df_share"], bars["max_outcome_df_share"]
    train_swaps, held_swaps = (
        swaps(part, corpus, key_bar, asked=asked, outcome_bar=outcome_bar, label=role)
        for part in (train, held_out)
    )
    print(f"{role} swaps: {len(train_swaps)} train, {len(held_swaps)} held-out")
    print(f"TRAIN: bar -> false miss on source abstracts, swapped {role}s detected, detection - false miss")
    arg = f"max_{role}_df_share"
    scores, misses = {}, {}
    for bar in ROLE_GRID:
        miss, detected = figures(train, train_swaps, corpus, {**bars, arg: bar}, role)
        scores[bar], misses[bar] = detected - miss, miss
        print(f"  {bar:<6} {miss:.3f}  {detected:.3f}  {scores[bar]:+.3f}")
    cap = SUBJECT_CAP if role == "subject" else SETTING_CAP
    within = [b for b in ROLE_GRID if misses[b] <= MISS_BUDGET and b <= cap]
    chosen = max(within, key=lambda b: (scores[b], -b))  # ties: the stricter bar
    print(
        f"chosen on TRAIN (best detection - false miss with false miss <= {MISS_BUDGET}, bar <= {cap}): "
        f"max_{role}_df = {chosen}"
    )
    for bar in sorted({chosen, ROLE_GRID[0]}):
        miss, detected = figures(held_out, held_swaps, corpus, {**bars, arg: bar}, role)
        print(f"HELD-OUT at {bar}: false miss {miss:.3f}, swapped {role}s detected {detected:.3f}")
    if write:
        about = (
            f"Held-out PubMedQA questions (seed-13 split by question) whose {ROLE_ABOUT[role]} is replaced by "
            f"another held-out question's, such that no indexed abstract covering the other concepts has any "
            f"content word of the new {role} (bench/agent_concepts.py)."
        )
        out = HERE / f"agent_unanswerable_{role}s.json"
        out.write_text(json.dumps({"about": about, "questions": held_swaps}, indent=1) + "\n")
        print(f"{len(held_swaps)} questions written to {out}")
    return chosen


def covers_any_term(concept: Concept, terms: DocumentTerms) -> bool:
    """The reference: the outcome rule until 2026-11-28, an asked outcome covered by any of its terms."""
    if not concept.outcome:
        return covers(concept, terms)
    initials = concept.initials()
    return bool(initials and initials in terms.words) or any(
        covers(dataclasses.replace(concept, terms=[t], role=""), terms) for t in concept.terms
    )


def partial_outcome_swaps(questions: list[Question], corpus: Corpus, bars: dict[str, float]) -> list[dict]:
    """Each word of a question's asked outcome of two or more terms replaced in turn by a word of another
    question's outcome that no abstract covering the question's other concepts has (seeded choice)."""
    concepts = {q.pmid: key_concepts(q.question, corpus.df, **bars) for q in questions}
    pool = sorted(
        {w for cs in concepts.values() for c in cs if c.outcome for w in c.words if content_stems(w)}
    )
    rng = random.Random(13)
    out = []
    for q in questions:
        outcome = next((c for c in concepts[q.pmid] if c.outcome and len(c.terms) >= 2), None)
        keys = [c for c in concepts[q.pmid] if not c.outcome]
        if outcome is None or not keys or outcome.text not in q.question:  # "mortality, transfusion" is cut
            continue
        covering = corpus.covering(keys)
        for word in (w for w in outcome.words if content_stems(w)):
            for new in rng.sample(pool, min(20, len(pool))):
                stems = content_stems(new)
                if stems & content_stems(outcome.text) or any(stems & t.stems for t in covering):
                    continue
                part = outcome.text.replace(word, new, 1)
                question = q.question.replace(outcome.text, part, 1)
                out.append({"question": question, "from_pmid": q.pmid, "outcome": part, "new_word": new})
                break
    return out


def partial_swap_figures(
    questions: list[Question],
    swapped: list[dict],
    corpus: Corpus,
    bars: dict[str, float],
    rule: Callable[[Concept, DocumentTerms], bool],
) -> tuple[float, float]:
    """(false miss of the asked outcome on the source abstracts, partial swaps detected) under one rule."""
    detected = n = 0
    for s in swapped:
        concepts = key_concepts(s["question"], corpus.df, **bars)
        outcomes = [c for c in concepts if c.outcome]
        if not outcomes:
            continue
        n += 1
        keys = [c for c in concepts if not c.outcome]
        covering = corpus.covering(keys)
        detected += not any(all(rule(c, t) for c in outcomes) for t in covering)
    return false_miss(questions, corpus, bars, ("outcome",), rule), detected / max(n, 1)


def partial_swap_report(
    train: list[Question], held_out: list[Question], corpus: Corpus, bars: dict[str, float], write: bool
) -> None:
    for name, part in (("TRAIN", train), ("HELD-OUT", held_out)):
        swapped = partial_outcome_swaps(part, corpus, bars)
        print(
            f"{name}: {len(swapped)} partial outcome swaps (e.g. {swapped[0]['outcome']!r})"
            if swapped
            else f"{name}: no partial swaps"
        )
        ref = partial_swap_figures(part, swapped, corpus, bars, covers_any_term)
        new = partial_swap_figures(part, swapped, corpus, bars, covers)
        print(f"  any term (reference): false miss {ref[0]:.3f}, partial swaps detected {ref[1]:.3f}")
        print(f"  all terms (shipped):  false miss {new[0]:.3f}, partial swaps detected {new[1]:.3f}")
        if write and name == "HELD-OUT":
            about = (
                "Held-out PubMedQA questions (seed-13 split by question) with one word of their asked outcome "
                "replaced by a word of another held-out question's outcome that no indexed abstract covering "
                "the other concepts has (bench/agent_concepts.py)."
            )
            PARTIAL_OUT.write_text(json.dumps({"about": about, "questions": swapped}, indent=1) + "\n")
            print(f"{len(swapped)} questions written to {PARTIAL_OUT}")


def unseen(question: str, df: DocumentFrequencies, key_bar: float) -> list[Concept]:
    """The question's concepts none of whose specific words the index has ever seen."""
    return [c for c in key_concepts(question, df, key_bar) if never_indexed(c, df)]


def unseen_read(questions: list[Question], corpus: Corpus, key_bar: float) -> tuple[int, int, int]:
    """(unseen concepts, covered by their own source abstract without reading words otherwise, with it)."""
    found = [(c, corpus.terms[q.pmid]) for q in questions for c in unseen(q.question, corpus.df, key_bar)]
    before = sum(covers(dataclasses.replace(c, unseen=[]), t) for c, t in found)
    return len(found), before, sum(covers(c, t) for c, t in found)


def unanswerable_questions() -> list[str]:
    return [
        item["question"]
        for name in ("agent_unanswerable", "agent_unanswerable_swapped", "agent_unanswerable_outcomes")
        for item in json.loads(Path(__file__).with_name(f"{name}.json").read_text())["questions"]
    ]


def unanswerable_read(corpus: Corpus, key_bar: float) -> tuple[int, int]:
    """(unseen concepts of the unanswerable sets, those some indexed abstract would read as its own word)."""
    concepts = [c for q in unanswerable_questions() for c in unseen(q, corpus.df, key_bar)]
    # a typo's respelling ("lightning" -> "lightening") is left out: it is only read when the question's
    # own evidence has it (tests/unit/test_answering.py); a word written otherwise is read the same way
    read = [c.text for c in concepts if any(t.variant(w) for w in c.unseen for t in corpus.terms.values())]
    print(f"  written otherwise in some indexed abstract: {read}")
    return len(concepts), len(read)


def expert_questions() -> list[str]:
    questions = [q.question for q in load_kqa()]
    return questions + [t.question for spec in ("biogen2024", "biogen2025") for t in load_topics(spec).topics]


def conversational_report(corpus: Corpus, key_bar: float, outcome_bar: float, others: list[str]) -> None:
    """The concepts that words of conversation ("okay", "anything", "someone") made before they were left out
    of concepts (agent/coverage.py CONVERSATIONAL), for the expert questions and for `others`."""

    def concepts(questions: list[str]) -> list[list[str]]:
        return [[c.text for c in key_concepts(q, corpus.df, key_bar, outcome_bar)] for q in questions]

    experts = expert_questions()
    after, others_after = concepts(experts), concepts(others)
    with mock.patch.object(coverage, "CONVERSATIONAL", frozenset()):
        before, others_before = concepts(experts), concepts(others)
    changed = [(q, b, a) for q, b, a in zip(experts, before, after, strict=True) if b != a]
    n_others = sum(b != a for b, a in zip(others_before, others_after, strict=True))
    print(f"conversational words: {len(changed)} of {len(experts)} expert questions change, concepts "
          f"{sum(map(len, before))} -> {sum(map(len, after))}; PubMedQA + unanswerable questions changed: "
          f"{n_others} of {len(others)}")  # fmt: skip
    for question, b, a in changed:
        print(f"  {question[:60]!r}: {b} -> {a}")


def roles_report(corpus: Corpus, bars: dict[str, float]) -> None:
    """The subject and setting concepts of the expert questions (K-QA, BioGen 2024/2025), to be read: no
    label says which entity a patient's question is about."""
    questions = expert_questions()
    print(f"subjects and settings of the expert questions ({len(questions)}):")
    found = 0
    for question in questions:
        roles = [
            f"{c.text} [{c.role}]"
            for c in key_concepts(question, corpus.df, **bars)
            if c.role in ("subject", "setting")
        ]
        found += bool(roles)
        if roles:
            print(f"  {question[:70]!r}: {'; '.join(roles)}")
    print(f"  {found} of {len(questions)} expert questions have a subject or setting concept")


def expert_subjects_report(corpus: Corpus, bars: dict[str, float]) -> None:
    """The subjects the expert questions gain at each bar looser than `SUBJECT_CAP` (the first bar each
    appears at), to be read: why the subject bar is capped."""

    def subjects(question: str, bar: float) -> set[str]:
        found = key_concepts(question, corpus.df, **{**bars, "max_subject_df_share": bar})
        return {c.text for c in found if c.role == "subject"}

    looser = [b for b in ROLE_GRID if b > SUBJECT_CAP]
    gained: dict[float, list[str]] = {b: [] for b in looser}
    for question in expert_questions():
        capped = subjects(question, SUBJECT_CAP)
        for bar in looser:
            if new := subjects(question, bar) - capped:
                gained[bar].extend(sorted(new))
                break
    print(f"expert questions gaining a subject above the cap ({SUBJECT_CAP}):")
    for bar, words in gained.items():
        print(f"  at {bar}: {len(words)}: {', '.join(words)}")


def spelling_report(corpus: Corpus, key_bar: float, outcome_bar: float) -> None:
    """The merged spelling groups of the index, and the expert questions' concepts they change."""
    groups: dict[str, set[str]] = {}
    for term in corpus.df.counts:
        groups.setdefault(american_spelling(term), set()).add(term)
    merged = sorted("/".join(sorted(g)) for g in groups.values() if len(g) > 1)
    print(f"spellings: {len(merged)} groups of index terms merged: {' '.join(merged)}")
    questions = expert_questions()
    print(f"expert questions (K-QA, BioGen 2024/2025): {len(questions)}")
    for question in questions:
        for c in key_concepts(question, corpus.df, key_bar, outcome_bar):
            key = c.terms[0]  # the term coverage requires
            if " " in key or len(groups.get(american_spelling(key), ())) < 2:
                continue
            exact = sum(key in t.stems for t in corpus.terms.values())
            either = sum(american_spelling(key) in t.spellings for t in corpus.terms.values())
            print(f"  {question[:60]!r}: {key!r} ({c.text!r}) in {exact} -> {either} abstracts")


def word_forms_report(
    train: list[Question], held_out: list[Question], corpus: Corpus, bars: dict[str, float]
) -> None:
    """Every pair of index words that `coverage.WORD_FORMS` joins (to be read: a pair of unrelated words is
    a defect), then the false miss of every role on the source abstracts and the partial outcome swaps
    detected, with the noun / adjective reading and without it (the reference, same run)."""
    vocabulary = {w for t in corpus.terms.values() for w in re.findall(r"[a-z]+", t.flat)}
    groups: dict[tuple[str, int], set[str]] = {}
    for word in vocabulary:
        for key in coverage.word_forms(word):
            groups.setdefault(key, set()).add(word)
    for pair, (noun, adjective, _) in enumerate(coverage.WORD_FORMS):
        joined = sorted(  # not a plural and its singular (listed by every pair)
            "/".join(sorted(g))
            for (_, p), g in groups.items()
            if p == pair
            and len(set(map(coverage._phrase_stem, g))) > 1
            and len(set(map(coverage.singular, g))) > 1
        )
        print(f"word forms -{noun or '()'} / -{adjective}: {len(joined)} groups: {' '.join(joined)}")
    roles = ("", "outcome", "setting", "subject")
    without = mock.patch.object(
        coverage, "_has_form", lambda _c, term, terms: coverage._has_term(term, terms)
    )
    print("expert questions (K-QA, BioGen 2024/2025): concepts the word forms change the coverage of")
    for question in expert_questions():
        for c in key_concepts(question, corpus.df, **bars):
            # only an abstract sharing a form with the concept's words, or any for an inflammation, can change
            asked = {key for w in c.words for key in coverage.word_forms(w.casefold())}
            inflamed = any(w.casefold().endswith("itis") for w in c.words)
            maybe = [t for t in corpus.terms.values() if inflamed or asked & t.forms]
            with without:
                before = sum(covers(c, t) for t in maybe)
            after = sum(covers(c, t) for t in maybe)
            if after != before:
                print(f"  {question[:60]!r}: {c.described()!r}: {after - before:+d} abstracts cover it")
    for name, part in (("TRAIN", train), ("HELD-OUT", held_out)):
        swapped = partial_outcome_swaps(part, corpus, bars)
        with without:
            ref = (
                false_miss(part, corpus, bars, roles),
                partial_swap_figures(part, swapped, corpus, bars, covers)[1],
            )
        new = (
            false_miss(part, corpus, bars, roles),
            partial_swap_figures(part, swapped, corpus, bars, covers)[1],
        )
        print(
            f"{name}: false miss (any concept) {ref[0]:.3f} -> {new[0]:.3f} with word forms; partial outcome "
            f"swaps detected {ref[1]:.3f} -> {new[1]:.3f} ({len(swapped)})"
        )


def all_terms_report(
    train: list[Question], held_out: list[Question], corpus: Corpus, bars: dict[str, float]
) -> None:
    """Measured, not shipped: a setting or subject covered by ALL its terms, as an asked outcome is ("head injury"
    is covered by a cancer abstract's "head and neck" under the shipped rarest-term rule)."""

    def all_terms(concept: Concept, terms: DocumentTerms) -> bool:
        if concept.role in ("setting", "subject") and len(concept.terms) > 1:
            return covers(dataclasses.replace(concept, role="outcome"), terms)
        return covers(concept, terms)

    for name, part in (("TRAIN", train), ("HELD-OUT", held_out)):
        row = []
        for role in ("setting", "subject"):
            shipped, every = (false_miss(part, corpus, bars, (role,), rule) for rule in (covers, all_terms))
            row.append(f"{role} {shipped:.3f} -> {every:.3f}")
        print(f"{name}: false miss with a setting / subject covered by all its terms: {'; '.join(row)}")


def association_report(
    train: list[Question], held_out: list[Question], corpus: Corpus, key_bar: float, bar: float
) -> None:
    """The questions that ask about an association ("associated with | X", "a risk factor for | Y"): their
    outcome swaps detected and their source abstracts' false miss at the shipped outcome bar, with the
    association reading (`coverage.ASSOCIATION_LINKS`) and without it (the reference, same run)."""
    for name, part in (("TRAIN", train), ("HELD-OUT", held_out)):
        asked = [q for q in part if coverage.asks_association(q.question)]
        swapped = swaps(asked, corpus, key_bar, outcome_bar=bar)
        row = []
        for reading in (coverage.ASSOCIATION_LINKS, {}):
            with mock.patch.object(coverage, "ASSOCIATION_LINKS", reading):
                miss, detected = outcome_figures(asked, swapped, corpus, key_bar, bar)
            row.append(f"false miss {miss * len(asked):.0f}, swaps detected {detected * len(swapped):.0f}")
        print(
            f"{name}: {len(asked)} association questions, {len(swapped)} outcome swaps (made with the reading); "
            f"with the reading: {row[0]}; without: {row[1]}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write", action="store_true", help=f"write the held-out swaps to {OUT.name}")
    parser.add_argument(
        "--write-partial",
        action="store_true",
        help=f"write only the held-out partial swaps to {PARTIAL_OUT.name}",
    )
    args = parser.parse_args()
    settings = load_settings(None, [])
    key_bar = settings.agent.max_concept_df
    corpus = Corpus(open_index(settings).docs)
    train, held_out = split_questions(load_questions())
    train_swaps, held_swaps = swaps(train, corpus, key_bar), swaps(held_out, corpus, key_bar)
    print(f"split: {len(train)} train / {len(held_out)} held-out questions (seed 13, by question)")
    print(f"outcome swaps: {len(train_swaps)} train, {len(held_swaps)} held-out; key-concept bar {key_bar}")
    print("TRAIN: bar -> false miss on source abstracts, swapped outcomes detected, detection - false miss")
    scores = {}
    for bar in GRID:
        miss, detected = outcome_figures(train, train_swaps, corpus, key_bar, bar)
        scores[bar] = detected - miss
        print(f"  {bar:<6} {miss:.3f}  {detected:.3f}  {scores[bar]:+.3f}")
    chosen = max(GRID, key=lambda b: (scores[b], -b))  # ties: the stricter bar
    miss, detected = outcome_figures(held_out, held_swaps, corpus, key_bar, chosen)
    print(f"chosen on TRAIN: max_outcome_df = {chosen} (settings: {settings.agent.max_outcome_df})")
    print(f"HELD-OUT at {chosen}: false miss {miss:.3f}, swapped outcomes detected {detected:.3f}")
    bars = {"max_df_share": key_bar, "max_outcome_df_share": settings.agent.max_outcome_df}
    bars["max_setting_df_share"] = fit_role_bar("setting", train, held_out, corpus, bars, args.write)
    bars["max_subject_df_share"] = fit_role_bar("subject", train, held_out, corpus, bars, args.write)
    for name, part in (("TRAIN", train), ("HELD-OUT", held_out)):
        n, before, after = unseen_read(part, corpus, key_bar)
        print(
            f"{name}: {n} concepts with no word the index saw; their source abstract covers {before} "
            f"({after} reading words as the abstract writes them)"
        )
    association_report(train, held_out, corpus, key_bar, settings.agent.max_outcome_df)
    partial_swap_report(train, held_out, corpus, bars, args.write or args.write_partial)
    roles_report(corpus, bars)
    expert_subjects_report(corpus, bars)
    spelling_report(corpus, key_bar, settings.agent.max_outcome_df)
    word_forms_report(train, held_out, corpus, bars)
    all_terms_report(train, held_out, corpus, bars)
    pubmedqa = [q.question for q in train + held_out]
    conversational_report(corpus, key_bar, settings.agent.max_outcome_df, pubmedqa + unanswerable_questions())
    n, read = unanswerable_read(corpus, key_bar)
    print(f"unanswerable sets: {n} concepts with no word the index saw; {read} written otherwise anywhere")
    if args.write:
        about = (
            "Held-out PubMedQA questions (seed-13 split by question) whose asked outcome is replaced by "
            "another held-out question's, such that no indexed abstract covering all the key concepts has "
            "any content word of the new outcome (bench/agent_concepts.py)."
        )
        OUT.write_text(json.dumps({"about": about, "questions": held_swaps}, indent=1) + "\n")
        print(f"{len(held_swaps)} questions written to {OUT}")


if __name__ == "__main__":
    main()
