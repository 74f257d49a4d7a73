"""One owner per BioGen format: what the writer writes, the validator passes and the evaluator reads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from biocite.app.runfiles import build_run, validate_run
from biocite.evaluator.runs import load_run, parse_inline_citations
from biocite.files import atomic_write_json
from biocite.records import Answer, AnswerSentence, Citation

HEADER = {"team_id": "t", "run_name": "r", "contact_email": "a@b.org"}
SENTENCES = [
    ("Aspirin lowers stroke risk.", ["11", "22"]),
    ("Bleeding was rare.", []),
    ("Benefit is largest in older adults.", ["33", "11"]),
]


def _answer(sentences: list[tuple[str, list[str]]]) -> Answer:
    return Answer(
        question="q?",
        sentences=[AnswerSentence(text=t, citations=[Citation(pmid=p) for p in ps]) for t, ps in sentences],
    )


@pytest.mark.parametrize(("fmt", "topics"), [("biogen2024", ["116", "117"]), ("biogen2025", ["181", "182"])])
def test_written_run_validates_and_reads_back(tmp_path: Path, fmt: str, topics: list[str]) -> None:
    run = build_run(fmt, HEADER, [(topics[0], _answer(SENTENCES)), (topics[1], None)])
    path = tmp_path / "run.json"
    atomic_write_json(path, run)
    assert validate_run(path, topics) == (fmt, [])
    read = {e.topic_id: e.answer for e in load_run(path).entries}
    assert [(s.text, [c.pmid for c in s.citations]) for s in read[topics[0]].sentences] == SENTENCES
    assert read[topics[1]].abstained


# (marker, PMIDs the evaluator reads, what the validator says): the official spelling is plain PMIDs,
# comma-separated; PMID prefixes and ';' are read too, with a warning; anything else is no citation.
MARKERS = [
    ("[11]", ["11"], None),
    ("[11, 22]", ["11", "22"], None),
    ("[11,22]", ["11", "22"], None),
    ("[ 11 , 22 ]", ["11", "22"], None),
    ("[PMID: 11]", ["11"], "warning"),
    ("[PMID 11, PMID 22]", ["11", "22"], "warning"),
    ("[11; 22]", ["11", "22"], "warning"),
    ("[pmid:11;22]", ["11", "22"], "warning"),
    ("[5 mg]", [], "error"),
    ("[11-13]", [], "error"),
    ("[PMID: 11, x]", [], "error"),
    ("[1234567890]", [], "error"),
]


@pytest.mark.parametrize(("marker", "pmids", "verdict"), MARKERS)
def test_validator_and_reader_agree_on_citation_markers(
    tmp_path: Path, marker: str, pmids: list[str], verdict: str | None
) -> None:
    text = f"Aspirin works {marker}."
    (sentence,) = parse_inline_citations(text)
    assert [c.pmid for c in sentence.citations] == pmids
    assert (sentence.text == "Aspirin works.") == bool(pmids)
    path = tmp_path / "run.json"
    # references = what the reader read: the validator must count the same PMIDs as cited
    atomic_write_json(path, {**HEADER, "results": [{"topic_id": "1", "answer": text, "references": pmids}]})
    _, problems = validate_run(path)
    assert [p.severity for p in problems] == ([verdict] if verdict else [])
