"""BioGen run files: the 2024/2025 writers, the validator's line-precise messages, topics files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biocite.app.runfiles import (
    LIMITS,
    build_run,
    load_topics,
    result_2024,
    validate_run,
)
from biocite.errors import InputError
from biocite.evaluator.runs import load_run
from biocite.files import atomic_write_json
from biocite.records import Answer, AnswerSentence, Citation

REPO = Path(__file__).resolve().parents[2]
HEADER = {"team_id": "t", "run_name": "r", "contact_email": "a@b.org"}


def answer(*sentences: tuple[str, list[str]], abstained: bool = False) -> Answer:
    return Answer(
        question="q?",
        sentences=[AnswerSentence(text=t, citations=[Citation(pmid=p) for p in ps]) for t, ps in sentences],
        abstained=abstained,
    )


def write(tmp_path: Path, data: object, name: str = "run.json") -> Path:
    path = tmp_path / name
    atomic_write_json(path, data)
    return path


def errors(path: Path) -> list[str]:
    return [p.render(path) for p in validate_run(path)[1] if p.severity == "error"]


def test_2024_citations_sit_before_the_final_punctuation() -> None:
    entry = result_2024(
        "7",
        answer(("Aspirin lowers stroke risk.", ["11", "22"]), ("Bleeding [major] was rare!", ["33"])),
    )
    assert entry.answer == "Aspirin lowers stroke risk [11, 22]. Bleeding (major) was rare [33]!"
    assert entry.references == ["11", "22", "33"]


def test_2024_abstention_is_an_empty_answer_the_evaluator_reads_as_abstained(tmp_path: Path) -> None:
    run = build_run("biogen2024", HEADER, [("116", answer(abstained=True)), ("117", answer(("Yes.", ["5"])))])
    path = write(tmp_path, run)
    assert errors(path) == []
    loaded = {e.topic_id: e.answer for e in load_run(path).entries}
    assert loaded["116"].abstained and not loaded["117"].abstained
    assert loaded["117"].sentences[0].citations[0].pmid == "5"


def test_2024_writer_keeps_the_word_limit_and_the_evaluator_round_trips(tmp_path: Path) -> None:
    long = [(f"Sentence number {i} has exactly eight words here.", [str(100 + i)]) for i in range(25)]
    run = build_run("biogen2024", HEADER, [("118", answer(*long))])
    path = write(tmp_path, run)
    assert errors(path) == []
    text = run["results"][0]["answer"]
    assert text.count("[") <= LIMITS["biogen2024"].max_sentences
    sentences = load_run(path).entries[0].answer.sentences
    assert [c.pmid for c in sentences[0].citations] == ["100"]


def test_2025_writer_and_validator(tmp_path: Path) -> None:
    run = build_run(
        "biogen2025",
        HEADER,
        [("181", answer(("Axonal injury is serious.", ["1", "2", "3", "4"]))), ("182", None)],
    )
    assert run["results"][0]["responses"] == [
        {"text": "Axonal injury is serious.", "citations": ["1", "2", "3"]}
    ]
    assert run["results"][1]["responses"] == []
    path = write(tmp_path, run)
    fmt, problems = validate_run(path)
    assert fmt == "biogen2025" and problems == []
    loaded = {e.topic_id: e.answer for e in load_run(path).entries}
    assert [c.pmid for c in loaded["181"].sentences[0].citations] == ["1", "2", "3"]
    assert loaded["182"].abstained


def test_validator_names_the_line_of_each_problem(tmp_path: Path) -> None:
    run = {
        **HEADER,
        "results": [
            {"topic_id": "1", "answer": "Fine [12].", "references": ["12"]},
            {
                "topic_id": "2",
                "answer": "Too many [1, 2, 3, 4]. Cited after. [5]",
                "references": ["1", "2", "3", "4", "5"],
            },
            {"topic_id": "2", "answer": "Uses [9].", "references": ["8"]},
        ],
    }
    path = write(tmp_path, run)
    lines = path.read_text().splitlines()

    def line(needle: str, nth: int = 0) -> int:
        return [n for n, t in enumerate(lines, 1) if needle in t][nth]

    found = errors(path)
    too_many, uses, dup = line('"Too many'), line('"Uses'), line('"topic_id": "2"', 1)
    assert (
        f"{path}:{too_many}: results[1].answer: answer sentence 1: 4 PMIDs in one citation; at most 3"
        in found
    )
    assert any(
        f.startswith(f"{path}:{too_many}: results[1].answer: answer: a [citation] after") for f in found
    )
    assert f"{path}:{dup}: results[2].topic_id: topic 2 appears twice" in found
    assert f"{path}:{uses}: results[2].answer: answer cites 9 which 'references' does not list" in found
    assert f"{path}:{uses + 1}: results[2].references: references: 8 never cited in the answer" in found
    assert not any("results[0]" in f for f in found)


def test_validator_word_and_sentence_limits(tmp_path: Path) -> None:
    words = " ".join(["word"] * 151) + " [1]."
    sentences = " ".join(f"Short sentence {i} [1]." for i in range(11))
    run = {
        **HEADER,
        "results": [
            {"topic_id": "1", "answer": words, "references": ["1"]},
            {"topic_id": "2", "answer": sentences, "references": ["1"]},
        ],
    }
    path = write(tmp_path, run)
    found = "\n".join(errors(path))
    assert "151 words without citations; at most 150" in found
    assert "11 sentences; at most 10" in found


def test_validator_format_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "team_id": "t",\n  "results": [\n    {"topic_id": 3,}\n  ]\n}\n')
    assert errors(bad) == [
        f"{bad}:4: file: not valid JSON (Expecting property name enclosed in double quotes)"
    ]
    path = write(
        tmp_path, {"team_id": "t", "run_name": "r", "results": [{"topic_id": 3, "answer": "x"}], "extra": 1}
    )
    found = errors(path)
    assert any("'contact_email' missing" in f for f in found)
    assert any(":6: results[0].topic_id: 'topic_id' missing or not a string" in f for f in found)
    assert any("'references' missing" in f for f in found)
    assert any("unexpected field 'extra'" in f for f in found)
    many = {
        **HEADER,
        "results": [{"topic_id": "1", "responses": [{"text": "a b", "citations": ["1", "2", "3", "4"]}]}],
    }
    assert any("4 PMIDs; at most 3 per sentence" in f for f in errors(write(tmp_path, many, "m.json")))
    journal = (
        tmp_path / "run.journal.jsonl"
    )  # given by mistake: named as such, not "not valid JSON" at line 2
    journal.write_text('{"kind": "header", "topics": "t"}\n{"kind": "topic", "topic_id": "1"}\n')
    assert errors(journal) == [
        f"{journal}:1: file: a `biocite batch` journal, not a run file: validate the run file batch wrote beside it"
    ]


def test_validate_cli_exit_codes(tmp_path: Path) -> None:
    """Through the installed executable: CliRunner bypasses `main()`, where exit codes were lost."""
    import subprocess

    from tests.cli.faults import EXE

    good = write(tmp_path, build_run("biogen2024", HEADER, [("1", answer(("Yes.", ["5"])))]), "good.json")
    bad = write(
        tmp_path,
        {**HEADER, "results": [{"topic_id": "1", "answer": "No [5].", "references": []}]},
        "bad.json",
    )
    assert subprocess.run([EXE, "validate", str(good)], capture_output=True).returncode == 0
    result = subprocess.run([EXE, "validate", str(bad)], capture_output=True, text=True)
    assert result.returncode == 2 and f"{bad}:8: results[0].answer: answer cites 5" in result.stdout
    assert result.stderr.strip() == f"error: {bad}: biogen2024: 1 error(s)"


def test_example_submission_is_valid() -> None:
    fmt, problems = validate_run(REPO / "data/biogen/biogen2024_example_submission.json")
    assert fmt == "biogen2024" and [p for p in problems if p.severity == "error"] == []


def test_topics_builtin_and_files(tmp_path: Path) -> None:
    t24, t25 = load_topics("biogen2024"), load_topics("biogen2025")
    assert len(t24.topics) == 65 and t24.format == "biogen2024" and t24.topics[0].topic_id == "116"
    assert len(t25.topics) == 30 and t25.format == "biogen2025"
    assert load_topics("pubmedqa").topics[0].question
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"topics": [{"id": 1, "question": "Why?"}]}))
    assert load_topics(str(path)).topics[0].topic_id == "1"
    path.write_text(json.dumps([{"id": 1, "question": ""}]))
    with pytest.raises(InputError, match=r"t.json: topics\[0\] \(id 1\): field 'question'"):
        load_topics(str(path))
    path.write_text("[{")
    with pytest.raises(InputError, match=r"t.json:1: not valid JSON"):
        load_topics(str(path))
    with pytest.raises(InputError, match="not found"):
        load_topics(str(tmp_path / "none.json"))
