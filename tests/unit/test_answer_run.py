"""Issue 12: the saved generate-mode benchmark runs (bench/agent_answers_generate_run*.json, written by
`bench/agent_answers.py --modes generate --records-out ...`) have no number missing from its cited evidence,
no sentence copying one abstract's evidence sentence while citing another, and none citing the right abstract
with another of its sentences as the quote; each sentence is checked against every evidence sentence of its
answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biocite.agent.synthesis import audit, opens_with_answer_word
from biocite.records import Answer, Citation, Span

BENCH = Path(__file__).resolve().parents[2] / "bench"
RUN = BENCH / "agent_answers_generate_run.json"  # held-out questions 1-30
RUN_91_120 = BENCH / "agent_answers_generate_run_91_120.json"
RUN_121_150 = BENCH / "agent_answers_generate_run_121_150.json"
CURRENT = [
    RUN,
    RUN_91_120,
    RUN_121_150,
    BENCH / "agent_answers_generate_run_151_180.json",
    BENCH / "agent_answers_generate_run_181_200.json",
]  # answered at the code of the synthesis checks below (31-90 predate some)
# all 200 held-out questions with the topic check (thirty-ninth session; the run before it is at 9374706): one
# extractive fallback quotes an aim (the only sentence left), so it is not among CURRENT
ALL_200 = BENCH / "agent_answers_generate_run_1_200.json"
RUNS = [
    *CURRENT,
    ALL_200,
    BENCH / "agent_answers_generate_run_31_60.json",
    BENCH / "agent_answers_generate_run_61_90.json",
]


@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_generated_numbers_occur_in_cited_evidence_and_no_copy_cites_another_abstract(run: Path) -> None:
    answers = [Answer.model_validate(r["answer"]) for r in json.loads(run.read_text())["records"]]
    answered = [a for a in answers if not a.abstained]
    counts = audit(answered)
    assert counts["sentences"] >= 10 and counts["numbers"] > 0, counts
    assert counts["numbers_missing"] == 0, counts
    assert counts["cross_cited_copies"] == 0, counts
    assert counts["misquoted_copies"] == 0, counts


@pytest.mark.parametrize("run", [*CURRENT, ALL_200], ids=lambda p: p.name)
def test_no_generated_sentence_states_its_own_yes_or_no(run: Path) -> None:
    """The bottom line is the verdict model's; the LLM's own "Yes, ..." is dropped (runs 31-90 predate it)."""
    answers = [Answer.model_validate(r["answer"]) for r in json.loads(run.read_text())["records"]]
    own = [
        s.text
        for a in answers
        for s in a.sentences
        if s.kind != "bottom_line" and opens_with_answer_word(s.text)
    ]
    assert own == []


def test_no_generated_restatement_drops_its_sources_hedge_or_states_a_question_as_a_finding() -> None:
    """ "may improve" restated as "improves" is quoted as written (runs 31-90 predate it: 1 each), "investigates
    whether X" restated as "found that X" is dropped, and no sentence rests on quotes that only state a study's
    aim. The audit can fail: the same run with one hedge taken out of a sentence that keeps it, or with a
    sentence quoting an aim, trips the counters."""
    for run in CURRENT:
        answers = [Answer.model_validate(r["answer"]) for r in json.loads(run.read_text())["records"]]
        counts = audit([a for a in answers if not a.abstained])
        assert counts["dropped_hedges"] == counts["questions_as_findings"] == counts["aim_quotes"] == 0, (
            run.name,
            counts,
        )
    answers = [Answer.model_validate(r["answer"]) for r in json.loads(RUN.read_text())["records"]]
    answered = [a for a in answers if not a.abstained]
    answer, i, hedged = next(
        (a, i, s)
        for a in answered
        for i, s in enumerate(a.sentences)
        if " may improve " in s.text and s.citations
    )
    overstated = hedged.model_copy(update={"text": hedged.text.replace(" may improve ", " improves ")})
    sentences = [*answer.sentences[:i], overstated, *answer.sentences[i + 1 :]]
    assert audit([answer.model_copy(update={"sentences": sentences})])["dropped_hedges"] == 1
    aim = "The aim of this study was to evaluate the prognosis of early hepatocellular carcinoma."
    quote = hedged.citations[0].evidence[0]
    aim_quote = quote.model_copy(update={"span": Span(start=0, end=len(aim), text=aim)})
    on_aim = hedged.model_copy(update={"citations": [Citation(pmid=quote.pmid, evidence=[aim_quote])]})
    sentences = [*answer.sentences[:i], on_aim, *answer.sentences[i + 1 :]]
    assert audit([answer.model_copy(update={"sentences": sentences})])["aim_quotes"] == 1


def test_the_audit_catches_a_number_not_in_the_evidence_and_a_cross_cited_copy() -> None:
    """The check above can fail: a doctored answer trips both counters."""
    answers = [Answer.model_validate(r["answer"]) for r in json.loads(RUN.read_text())["records"]]
    answer = next(a for a in answers if not a.abstained and len(a.cited_pmids) >= 2)
    findings = [s for s in answer.sentences if s.kind != "bottom_line"]
    first = findings[0]
    other = next(c for s in answer.sentences for c in s.citations if c.pmid != first.citations[0].pmid)
    copy = other.evidence[0].span.text
    doctored = answer.model_copy(
        update={
            "sentences": [
                first.model_copy(update={"text": first.text + " It fell by 987654%."}),
                first.model_copy(update={"text": copy}),
                *answer.sentences,
            ]
        }
    )
    counts = audit([doctored])
    assert counts["numbers_missing"] >= 1 and counts["cross_cited_copies"] >= 1
    # the copy cited to its own abstract but shown with another of its sentences
    unrelated = "Participants were recruited from three outpatient clinics."
    other_quote = other.evidence[0].model_copy(
        update={"sentence_index": -1, "span": Span(start=0, end=len(unrelated), text=unrelated)}
    )
    misquoted = first.model_copy(
        update={"text": copy, "citations": [Citation(pmid=other.pmid, evidence=[other_quote])]}
    )
    counts = audit([answer.model_copy(update={"sentences": [misquoted, *answer.sentences]})])
    assert counts["misquoted_copies"] >= 1, counts
