"""Input checks at the boundaries: JSON files, PMIDs, setting keys, long abstracts, every file batch writes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from biocite import jsonfile
from biocite.agent.checks import check_question
from biocite.app.batch import JournalHeader, TopicRecord
from biocite.app.check import new_request
from biocite.app.runfiles import build_run, load_topics, validate_run
from biocite.errors import BiociteError, InputError
from biocite.evaluator.runs import load_run
from biocite.index.readers import MAX_ABSTRACT_CHARS, ReadStats, read_documents
from biocite.records import Answer, AnswerSentence, Citation, Document, check_pmid
from biocite.sentences import split_sentences
from biocite.settings import load_settings


def _file(tmp_path: Path, text: str | bytes, name: str = "f.json") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "is empty"),
        ("  \n", "is empty"),
        (b'{"a": "caf\xe9"}', ":1: not valid UTF-8"),
        ('{"a": NaN}', "NaN is not allowed"),
        ('{"a": -Infinity}', "Infinity is not allowed"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{\n"a": 1,\n"b": oops\n}', ":3: not valid JSON"),
    ],
)
def test_json_files_fail_with_one_line_naming_file_and_line(tmp_path, content, message) -> None:
    path = _file(tmp_path, content)
    with pytest.raises(InputError, match=message) as info:
        jsonfile.load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_json_document_error_is_reported_at_its_own_line_not_line_1(tmp_path) -> None:
    lines = json.dumps({"results": [{"topic_id": str(i)} for i in range(40)]}, indent=1).splitlines()
    lines[92] += " oops"
    with pytest.raises(InputError, match=r":93: not valid JSON"):
        jsonfile.load_json_or_jsonl(_file(tmp_path, "\n".join(lines)))


@pytest.mark.parametrize(
    "bad", ["abc/../../etc", "-5", "0", "007", "1.5", "", "[/bold]", "12345678901", True]
)
def test_pmids_are_positive_integers(bad) -> None:
    with pytest.raises(InputError):
        check_pmid(bad)
    with pytest.raises(ValueError):
        Document(pmid=bad, abstract="x")


def test_good_pmids_are_canonical_strings() -> None:
    assert check_pmid(" 29768149 ") == "29768149" and check_pmid(5) == "5"
    assert Citation(pmid=42).pmid == "42"


def test_reader_skips_bad_pmids_and_deep_lines_with_a_warning(tmp_path) -> None:
    rows = [json.dumps({"pmid": p, "abstract": "Text."}) for p in ("abc/../../etc", "-5", "17")]
    path = _file(tmp_path, "\n".join([*rows, "[" * 100_000 + "]" * 100_000]) + "\n", "c.jsonl")
    stats = ReadStats()
    assert list(read_documents([path], stats)) == ["17"]
    assert stats.malformed == 3 and "not a PMID" in stats.warnings[0]
    assert "nested too deeply" in stats.warnings[2]


def test_a_huge_abstract_is_truncated_with_a_warning_and_split_in_linear_time(tmp_path) -> None:
    sentence = "Patients with migraine received riboflavin daily for three months. "
    path = _file(tmp_path, json.dumps({"pmid": "9", "abstract": sentence * 400_000}) + "\n", "big.jsonl")
    stats = ReadStats()
    doc = read_documents([path], stats)["9"]
    assert len(doc.abstract) <= MAX_ABSTRACT_CHARS and stats.truncated == 1
    assert "truncated to 100,000" in stats.warnings[0]

    def seconds(n_chars: int) -> float:
        text = (sentence * (n_chars // len(sentence) + 1))[:n_chars]
        started = time.perf_counter()
        spans = split_sentences(Document(pmid="9", abstract=text))
        assert all(text[s.start : s.end] == s.text for s in spans)
        return time.perf_counter() - started

    small, large = seconds(25_000), seconds(100_000)
    assert large < 8 * small + 0.5  # 4x the text: ~4x the time (pysbd alone grows much faster)


def test_warning_lines_list_the_first_then_a_count() -> None:
    stats = ReadStats(log_file="/x/build-warnings.log")
    for i in range(30):
        stats.warnings.append(f"w{i}")
    lines = stats.warning_lines(first=10)
    assert lines[0] == "warning: w0" and len(lines) == 11
    assert lines[-1] == "... and 20 more warnings (all of them: /x/build-warnings.log)"


def test_unknown_setting_key_names_the_closest_valid_one() -> None:
    with pytest.raises(BiociteError, match=r"unknown setting 'llm\.modle'; did you mean llm\.model\?"):
        load_settings("test", ["llm.modle=x"])
    with pytest.raises(BiociteError, match=r"unknown setting 'indx'; did you mean index\?"):
        load_settings("test", ["indx.k1=1"])
    assert load_settings("test", ["index.k1=1.1"]).index.k1 == 1.1


def test_a_preset_file_with_an_unknown_key_is_refused(tmp_path) -> None:
    preset = _file(tmp_path, "index:\n  k1: 1.2\nagent:\n  max_roundz: 3\n", "mine.yaml")
    with pytest.raises(BiociteError, match=r"mine\.yaml: unknown setting 'agent\.max_roundz'; did you mean"):
        load_settings(str(preset))


def _answer(question: str, pmid: str) -> Answer:
    cited = AnswerSentence(text="Aspirin helps.", citations=[Citation(pmid=pmid)])
    return Answer(question=question, sentences=[cited])


def test_evaluate_reads_every_file_batch_writes_for_pubmedqa(tmp_path) -> None:
    """The BioGen run `batch --topics pubmedqa` writes (topic ids are PMIDs) and its journal."""
    topics = load_topics("pubmedqa").topics[:2]
    header = {"team_id": "t", "run_name": "r", "contact_email": "e@x"}
    run = build_run("biogen2024", header, [(t.topic_id, _answer(t.question, "10808977")) for t in topics])
    run_path = _file(tmp_path, json.dumps(run, indent=2), "run.json")
    assert [e.question for e in load_run(run_path).entries] == [t.question for t in topics]
    _, problems = validate_run(run_path)
    assert not [p for p in problems if p.severity == "error"]

    journal = [
        JournalHeader(topics="pubmedqa", format="biogen2024", mode="extractive", index_dir="i", llm="m")
    ]
    records = [
        TopicRecord(
            topic_id=t.topic_id, question=t.question, status="answered", answer=_answer(t.question, "5")
        )
        for t in topics
    ]
    failed = TopicRecord(topic_id="999", question="q", status="failed", error="boom")
    lines = [r.model_dump_json() for r in [*journal, *records, failed]]
    journal_path = _file(tmp_path, "\n".join(lines) + "\n", "run.journal.jsonl")
    loaded = load_run(journal_path)
    assert loaded.format == "biocite-journal" and [e.topic_id for e in loaded.entries] == [
        t.topic_id for t in topics
    ]


def test_an_empty_run_is_an_error_not_a_score(tmp_path) -> None:
    with pytest.raises(InputError, match="no answers to score"):
        load_run(_file(tmp_path, json.dumps({"team_id": "t", "run_name": "r", "results": []})))


def test_a_run_citing_a_non_pmid_is_an_input_error(tmp_path) -> None:
    run = {"team_id": "t", "run_name": "r", "results": [{"topic_id": "116", "responses": [
        {"text": "Sleep apnea improves with weight loss.", "citations": ["-5"]}]}]}  # fmt: skip
    with pytest.raises(InputError, match="not a PMID"):
        load_run(_file(tmp_path, json.dumps(run)))


def test_python_callers_wrong_types_are_named_and_one_pmid_is_a_pmid() -> None:
    """`biocite.check(claim, pmids="123")` meant one PMID (it was read as "1", "2", "3"); a question or
    evidence that is not text is named instead of an AttributeError from deep inside."""
    at = {"claim": "claim", "pmids": "pmids", "text": "text"}
    assert new_request("Aspirin helps.", "31851484", None, at).pmids == ["31851484"]
    assert new_request("Aspirin helps.", 31851484, None, at).pmids == ["31851484"]
    with pytest.raises(InputError, match="text: the evidence must be text, not list"):
        new_request("Aspirin helps.", [], ["a sentence"], at)
    with pytest.raises(InputError, match="the question must be text, not NoneType"):
        check_question(None, 100)  # type: ignore[arg-type]
