"""The batch runner with a scripted answerer: journal, retries, recorded failures, resume, workers."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from biocite.app.batch import effective_workers, read_journal, run_batch
from biocite.app.runfiles import Topic, TopicSet, validate_run
from biocite.errors import InputError, ModelError
from biocite.evaluator.runs import journal_path
from biocite.records import Answer, AnswerSentence, Citation
from biocite.settings import load_settings

TOPICS = TopicSet(
    name="unit",
    format="biogen2024",
    topics=[Topic(topic_id=str(i), question=f"Question {i}?") for i in range(1, 7)],
)


class Scripted:
    """Answers `Question N?` with one cited sentence; topic 3 abstains; `fail` maps question -> failures."""

    def __init__(self, fail: dict[str, int] | None = None, calls: list[str] | None = None) -> None:
        self.fail = dict(fail or {})
        self.calls = calls if calls is not None else []
        self.lock = threading.Lock()

    def ask(self, question: str, *, mode: str | None = None) -> Answer:
        with self.lock:
            self.calls.append(question)
            if self.fail.get(question, 0) > 0:
                self.fail[question] -= 1
                raise RuntimeError(f"boom on {question}")
        if question == "Question 3?":
            return Answer(question=question, abstained=True, abstain_reason="nothing found")
        n = question.split()[1].rstrip("?")
        return Answer(
            question=question,
            sentences=[AnswerSentence(text=f"Answer {n} holds.", citations=[Citation(pmid=f"10{n}")])],
        )


@pytest.fixture
def settings(tmp_path: Path):
    return load_settings("default", [f"home={tmp_path / 'home'}", f"index.dir={tmp_path / 'index'}"])


def run(settings, out: Path, agent: Scripted, **kw):
    return run_batch(
        settings, TOPICS, out, mode="extractive", progress=False, agent_factory=lambda s: agent, **kw
    )


def test_run_journal_and_summary(settings, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    summary = run(settings, out, Scripted())
    assert (summary.answered, summary.abstained, summary.failed) == (5, 1, 0)
    assert summary.seconds_median is not None and summary.topics == 6
    header, records = read_journal(journal_path(out))
    assert header.format == "biogen2024" and header.mode == "extractive"
    assert records["3"].status == "abstained" and records["3"].answer.abstain_reason == "nothing found"
    data = json.loads(out.read_text())
    assert [r["topic_id"] for r in data["results"]] == [str(i) for i in range(1, 7)]
    assert data["results"][0]["answer"] == "Answer 1 holds [101]."
    assert data["results"][2] == {"topic_id": "3", "answer": "", "references": []}
    assert [p for p in validate_run(out)[1] if p.severity == "error"] == []


def test_failures_are_retried_then_recorded_and_resume_retries_them(settings, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    calls: list[str] = []
    # topic 2 fails once (recovers on the first retry); topic 4 fails more than 1 + retries times
    agent = Scripted({"Question 2?": 1, "Question 4?": 5}, calls)
    summary = run(settings, out, agent)
    assert calls.count("Question 2?") == 2 and calls.count("Question 4?") == 3  # default: 2 retries
    assert (summary.answered, summary.failed) == (4, 1)
    assert "RuntimeError: boom on Question 4?" in summary.failed_topics["4"]
    _, records = read_journal(journal_path(out))
    assert records["2"].attempts == 2 and records["4"].status == "failed" and records["4"].attempts == 3
    assert json.loads(out.read_text())["results"][3]["answer"] == ""
    # a rerun answers only the failed topic, and now it succeeds
    calls.clear()
    summary = run(settings, out, Scripted(calls=calls))
    assert calls == ["Question 4?"] and summary.failed == 0 and summary.resumed == 5
    assert json.loads(out.read_text())["results"][3]["answer"] == "Answer 4 holds [104]."


def test_resume_skips_journaled_topics_and_cuts_a_half_written_line(settings, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    full = tmp_path / "full.json"
    run(settings, full, Scripted())
    run(settings, out, Scripted(), limit=2)
    with journal_path(out).open("a") as handle:
        handle.write('{"kind": "topic", "topic_id": "3", "quest')  # killed mid-write
    calls: list[str] = []
    summary = run(settings, out, Scripted(calls=calls))
    assert calls == [f"Question {i}?" for i in range(3, 7)] and summary.resumed == 2
    a, b = json.loads(out.read_text()), json.loads(full.read_text())
    a["run_name"] = b["run_name"]
    assert a == b


def test_journal_from_another_run_is_refused(settings, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    run(settings, out, Scripted(), limit=1)
    with pytest.raises(InputError, match=r"run.journal.jsonl:1: field 'mode'"):
        run_batch(settings, TOPICS, out, mode="generate", progress=False, agent_factory=lambda s: Scripted())
    summary = run_batch(
        settings, TOPICS, out, mode="generate", progress=False, agent_factory=lambda s: Scripted(), fresh=True
    )
    assert summary.resumed == 0 and summary.answered == 5


def test_a_journal_edited_by_hand_is_named_by_its_line(settings, tmp_path: Path) -> None:
    """A header or record that parses as JSON but not as a journal line: line and field, not an internal error."""
    out = tmp_path / "run.json"
    run(settings, out, Scripted(), limit=2)
    jpath = journal_path(out)
    lines = jpath.read_text().splitlines()
    for n, broken in [(1, {**json.loads(lines[0]), "mode": None}), (2, {"kind": "topic", "topic_id": "1"})]:
        edited = list(lines)
        edited[n - 1] = json.dumps(broken)
        jpath.write_text("\n".join(edited) + "\n")
        for read in (lambda: run(settings, out, Scripted()), lambda: read_journal(jpath)):
            with pytest.raises(
                InputError, match=rf"run.journal.jsonl:{n}: not a journal (header|topic record): "
            ):
                read()


def test_configuration_errors_stop_the_run(settings, tmp_path: Path) -> None:
    class Broken(Scripted):
        def ask(self, question: str, *, mode: str | None = None) -> Answer:
            raise ModelError("no model file")

    with pytest.raises(ModelError):
        run(settings, tmp_path / "run.json", Broken())


def test_parallel_workers_with_an_endpoint(tmp_path: Path) -> None:
    settings = load_settings(
        "default", [f"home={tmp_path}", "llm.backend=openai", "llm.base_url=http://x/v1"]
    )
    assert effective_workers(settings, 3) == (3, None)
    local = load_settings("default", [f"home={tmp_path}"])
    workers, note = effective_workers(local, 3)
    assert workers == 1 and note and "llama.cpp" in note
    calls: list[str] = []
    out = tmp_path / "run.json"
    summary = run_batch(
        settings,
        TOPICS,
        out,
        mode="generate",
        workers=3,
        progress=False,
        agent_factory=lambda s: Scripted(calls=calls),
    )
    assert (
        summary.workers == 3
        and summary.answered == 5
        and sorted(calls) == sorted(t.question for t in TOPICS.topics)
    )
    assert [r["topic_id"] for r in json.loads(out.read_text())["results"]] == [str(i) for i in range(1, 7)]


def test_format_limits_reach_the_agent(settings, tmp_path: Path) -> None:
    seen = {}

    def factory(s):
        seen["agent"] = s.agent
        return Scripted()

    t25 = TOPICS.model_copy(update={"format": "biogen2025"})
    run_batch(settings, t25, tmp_path / "r.json", mode="extractive", progress=False, agent_factory=factory)
    assert seen["agent"].max_words == 250 and seen["agent"].max_citations_per_sentence == 3
    run_batch(settings, TOPICS, tmp_path / "s.json", mode="extractive", progress=False, agent_factory=factory)
    assert seen["agent"].max_words == 150 and seen["agent"].max_sentences == 10
    assert "responses" in json.loads((tmp_path / "r.json").read_text())["results"][0]


def test_ctrl_c_keeps_finished_topics(settings, tmp_path: Path) -> None:
    class Interrupted(Scripted):
        def ask(self, question: str, *, mode: str | None = None) -> Answer:
            if question == "Question 3?":
                raise KeyboardInterrupt
            return super().ask(question, mode=mode)

    out = tmp_path / "run.json"
    with pytest.raises(KeyboardInterrupt):
        run(settings, out, Interrupted())
    assert set(read_journal(journal_path(out))[1]) == {"1", "2"}
    assert [r["topic_id"] for r in json.loads(out.read_text())["results"]] == ["1", "2"]
    calls: list[str] = []
    assert run(settings, out, Scripted(calls=calls)).resumed == 2 and len(calls) == 4
