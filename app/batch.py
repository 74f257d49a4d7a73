"""Batch answering: every topic of a set, a journal that makes runs resumable, the official run file.

The journal (`<run>.journal.jsonl`, next to the run file) gets one line per finished topic, flushed and
fsynced as soon as the topic is done: a killed run loses at most the topics in flight, and a rerun with
the same `--out` skips what the journal holds. The run file is rebuilt from the journal in topic order,
so a resumed run writes the same file as an uninterrupted one. A topic that raises is retried
`batch.retries` times, then journaled as failed with its error (a later resume tries it again).
Configuration errors (missing model, unreachable endpoint, stale index) stop the run instead.

Workers. One worker answers in the main thread; more are threads, each with its own agent (an
OpenAI-compatible endpoint serves them in parallel; the local llama.cpp model answers one question at a
time, so it gets one). With `ray` (`--ray auto|ADDRESS`) the workers are Ray actors instead, each a process
with its own agent, models and index handles, on this machine or across a cluster whose nodes see the index
at the same path; there each actor may run its own local model. The driver alone writes the journal, so a
run on Ray resumes like any other.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, Field, ValidationError
from tqdm import tqdm

from biocite.agent.graph import Agent
from biocite.app.runfiles import LIMITS, Topic, TopicSet, build_run
from biocite.cluster import connect_ray
from biocite.errors import BiociteError, IndexMismatchError, InputError, ModelError, first_problem
from biocite.evaluator.runs import journal_path
from biocite.files import atomic_write_json, output_file
from biocite.index.hybrid import open_retriever
from biocite.records import Answer
from biocite.settings import Settings

JOURNAL_VERSION = 1
_ERROR_CLASS = re.compile(r"^biocite[.]errors[.]\w+: ")  # how Ray's text of a dead actor names our error
Status = Literal["answered", "abstained", "failed"]


class Answerer(Protocol):
    def ask(self, question: str, *, mode: str | None = None) -> Answer: ...


class JournalHeader(BaseModel):
    kind: Literal["header"] = "header"
    version: int = JOURNAL_VERSION
    topics: str
    format: str
    mode: str
    index_dir: str
    llm: str


class TopicRecord(BaseModel):
    kind: Literal["topic"] = "topic"
    topic_id: str
    question: str
    status: Status
    answer: Answer | None = None
    error: str | None = None
    attempts: int = 1
    seconds: float = 0.0
    finished_at: float | None = None  # unix time: with the first record's, the wall time of a run


class BatchSummary(BaseModel):
    run: str
    journal: str
    format: str
    mode: str
    workers: int
    topics: int
    answered: int = 0
    abstained: int = 0
    failed: int = 0
    resumed: int = 0  # topics taken from the journal of an earlier, interrupted run
    wall_seconds: float = 0.0
    seconds_median: float | None = None
    seconds_mean: float | None = None
    failed_topics: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    ray_address: str | None = None  # the Ray cluster the workers ran on (--ray)

    def lines(self) -> list[str]:
        out = [
            f"{self.topics} topics: {self.answered} answered, {self.abstained} abstained, {self.failed} failed"
            + (f" ({self.resumed} from an earlier run)" if self.resumed else ""),
        ]
        if self.seconds_median is not None:
            out.append(
                f"seconds per topic: median {self.seconds_median:.1f}, mean {self.seconds_mean:.1f}; "
                f"wall {self.wall_seconds:.0f} s with {self.workers} worker(s)"
                + (f" on Ray at {self.ray_address}" if self.ray_address else "")
            )
        out += [f"failed {t}: {e}" for t, e in self.failed_topics.items()]
        out += self.notes
        out.append(f"wrote {self.run} (journal {self.journal})")
        return out


RowT = TypeVar("RowT", bound=BaseModel)


def _journal_row(path: Path, n: int, row: Any, model: type[RowT]) -> RowT:
    """Line `n` of a journal as `model`; a line edited or damaged by hand is named, not an internal error."""
    try:
        return model.model_validate(row)
    except ValidationError as exc:
        what = "header" if model is JournalHeader else "topic record"
        field, why = first_problem(exc)
        raise InputError(f"{path}:{n}: not a journal {what}: {field or 'line'}: {why}") from None


class Journal:
    """Append-only JSONL; the last record of a topic wins. A half-written last line is cut off on open."""

    def __init__(self, path: Path, header: JournalHeader) -> None:
        self.path = path
        self.records: dict[str, TopicRecord] = {}
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_file() and path.stat().st_size:
            self._load(header)
        else:
            path.write_text("")
            self._append(header.model_dump_json())

    def _load(self, header: JournalHeader) -> None:
        raw = self.path.read_bytes()
        good, offset = 0, 0
        rows: list[dict[str, Any]] = []
        for line in raw.splitlines(keepends=True):
            offset += len(line)
            if not line.endswith(b"\n"):
                break  # killed mid-write
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                raise InputError(
                    f"{self.path}:{len(rows) + 1}: damaged journal line; fix or delete it"
                ) from None
            good = offset
        if good < len(raw):
            with self.path.open("r+b") as handle:
                handle.truncate(good)
        if not rows or rows[0].get("kind") != "header":
            raise InputError(f"{self.path}:1: not a biocite batch journal (no header line)")
        old = _journal_row(self.path, 1, rows[0], JournalHeader)
        for field in ("topics", "format", "mode", "index_dir", "llm"):
            if getattr(old, field) != getattr(header, field):
                raise InputError(
                    f"{self.path}:1: field '{field}': the journal was written with {getattr(old, field)!r}, "
                    f"this run uses {getattr(header, field)!r}; use another --out or --fresh"
                )
        for n, row in enumerate(rows[1:], 2):
            record = _journal_row(self.path, n, row, TopicRecord)
            self.records[record.topic_id] = record

    def _append(self, line: str) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def add(self, record: TopicRecord) -> None:
        self._append(record.model_dump_json())
        self.records[record.topic_id] = record

    def done(self, topic_id: str) -> bool:
        record = self.records.get(topic_id)
        return record is not None and record.status != "failed"


def batch_settings(settings: Settings, fmt: str) -> Settings:
    """The agent's limits set from the run format (2024: 150 words, 10 sentences; 2025: 250 words)."""
    limits = LIMITS[fmt]
    agent = settings.agent.model_copy(
        update={
            "max_words": limits.max_words,
            "max_sentences": min(settings.agent.max_sentences, limits.max_sentences or 10**6),
            "max_citations_per_sentence": min(
                settings.agent.max_citations_per_sentence, limits.max_citations
            ),
        }
    )
    return settings.model_copy(update={"agent": agent})


def effective_workers(
    settings: Settings, requested: int | None, on_ray: bool = False
) -> tuple[int, str | None]:
    """Workers of a generate run: threads share one local model, so it gets one; Ray actors have their own."""
    workers = requested or settings.batch.workers
    if settings.llm.backend != "openai" and workers > 1 and not on_ray:
        return 1, (
            f"1 worker, not {workers}: the local llama.cpp model answers one question at a time "
            "(--workers / batch.workers apply to llm.backend=openai)"
        )
    return max(1, workers), None


def answer_topic(agent: Answerer, topic: Topic, mode: str, retries: int) -> TopicRecord:
    """Ask, retrying on errors; configuration errors are raised, not recorded."""
    started = time.perf_counter()
    error = ""
    for attempt in range(1, retries + 2):
        try:
            answer = agent.ask(topic.question, mode=mode)
        except (ModelError, IndexMismatchError):
            raise
        except Exception as exc:  # recorded with the topic after the last try
            error = f"{exc.__class__.__name__}: {exc}".strip()
            if not isinstance(exc, BiociteError):
                error += " | " + traceback.format_exc(limit=-2).strip().splitlines()[-1]
            continue
        status: Status = "abstained" if answer.abstained else "answered"
        return TopicRecord(
            topic_id=topic.topic_id,
            question=topic.question,
            status=status,
            answer=answer,
            attempts=attempt,
            seconds=round(time.perf_counter() - started, 3),
            finished_at=round(time.time(), 3),
        )
    return TopicRecord(
        topic_id=topic.topic_id,
        question=topic.question,
        status="failed",
        error=error[:2000],
        attempts=retries + 1,
        seconds=round(time.perf_counter() - started, 3),
        finished_at=round(time.time(), 3),
    )


def run_batch(
    settings: Settings,
    topics: TopicSet,
    out: Path,
    *,
    mode: str = "generate",
    fmt: str | None = None,
    workers: int | None = None,
    limit: int | None = None,
    fresh: bool = False,
    progress: bool = True,
    agent_factory: Callable[[Settings], Answerer] | None = None,
    ray: str | None = None,
) -> BatchSummary:
    """Answer every topic not already in the journal, then (re)write the official run file; with `ray`
    ("auto" or a cluster address) on Ray actors."""
    if mode not in ("generate", "extractive"):
        raise InputError(f"unknown mode {mode!r}; use generate or extractive")
    output_file(out)  # before any answer: given a folder, the journal landed beside it and the run nowhere
    fmt = fmt or topics.format
    settings = batch_settings(settings, fmt)
    chosen = topics.topics[:limit] if limit else topics.topics
    n_workers, note = (
        effective_workers(settings, workers, bool(ray))
        if mode == "generate"
        else (max(1, workers or 1), None)
    )
    llm = f"{settings.llm.backend}:{settings.llm.model}" if mode == "generate" else "none"
    header = JournalHeader(
        topics=topics.name, format=fmt, mode=mode, index_dir=str(settings.index_dir), llm=llm
    )
    jpath = journal_path(out)
    if fresh:
        jpath.unlink(missing_ok=True)
    journal = Journal(jpath, header)
    todo = [t for t in chosen if not journal.done(t.topic_id)]
    summary = BatchSummary(
        run=str(out),
        journal=str(jpath),
        format=fmt,
        mode=mode,
        workers=n_workers,
        topics=len(chosen),
        resumed=len(chosen) - len(todo),
    )
    if note:
        summary.notes.append(note)
    started = time.perf_counter()
    try:
        if todo:
            summary.ray_address = _answer_all(
                settings, todo, journal, mode, n_workers, progress, agent_factory, ray
            )
    finally:  # Ctrl-C included: the run file always reflects what the journal holds
        _write_run(settings, chosen, journal, out, fmt)
    summary.wall_seconds = round(time.perf_counter() - started, 2)
    return _summarise(summary, chosen, journal)


def _default_agent(settings: Settings) -> Answerer:
    return Agent(settings, retriever=open_retriever(settings))


class TopicWorker:
    """A Ray actor: one agent of its own answering the topics it is sent."""

    def __init__(self, settings: Settings, factory: Callable[[Settings], Answerer]) -> None:
        self.agent = factory(settings)

    def answer(self, topic: Topic, mode: str, retries: int) -> TopicRecord:
        return answer_topic(self.agent, topic, mode, retries)


def _answer_on_ray(
    address: str,
    settings: Settings,
    todo: list[Topic],
    mode: str,
    workers: int,
    factory: Callable[[Settings], Answerer],
    finish: Callable[[TopicRecord], None],
) -> str:
    """`workers` actors answer the topics, each as soon as it is free; records come back as they finish.
    A configuration error raised in an actor stops the run with that error, not Ray's wrapping of it.
    Returns the cluster's address."""
    ray = connect_ray(address, workers)  # first: without Ray installed, its one-line error
    from ray.exceptions import ActorDiedError, RayTaskError
    from ray.util import ActorPool

    actors = [ray.remote(num_cpus=1)(TopicWorker).remote(settings, factory) for _ in range(workers)]
    retries = settings.batch.retries
    try:
        pool = ActorPool(actors)
        for record in pool.map_unordered(
            lambda actor, topic: actor.answer.remote(topic, mode, retries), todo
        ):
            finish(record)
    except RayTaskError as exc:
        raise exc.cause if isinstance(exc.cause, BiociteError) else exc from None
    except ActorDiedError as exc:  # e.g. no index where the actor looked: Ray keeps only the error's text
        last = _ERROR_CLASS.sub("", str(exc).strip().splitlines()[-1])
        raise BiociteError(f"a Ray batch worker died: {last}") from None
    finally:
        for actor in actors:
            ray.kill(actor)
    return str(ray.get_runtime_context().gcs_address)


def _answer_all(
    settings: Settings,
    todo: list[Topic],
    journal: Journal,
    mode: str,
    workers: int,
    progress: bool,
    agent_factory: Callable[[Settings], Answerer] | None,
    ray: str | None,
) -> str | None:
    """Answers `todo` into the journal; returns the Ray cluster's address when on Ray."""
    factory = agent_factory or _default_agent
    retries = settings.batch.retries
    bar = tqdm(total=len(todo), disable=not progress, unit="topic", dynamic_ncols=True)

    def finish(record: TopicRecord) -> None:
        journal.add(record)
        bar.set_postfix_str(f"{record.topic_id} {record.status} {record.seconds:.1f}s", refresh=False)
        bar.update(1)

    try:
        if ray:
            return _answer_on_ray(ray, settings, todo, mode, workers, factory, finish)
        if workers == 1:  # in the main thread, so Ctrl-C stops at once
            agent = factory(settings)
            for topic in todo:
                bar.set_description(f"topic {topic.topic_id}")
                finish(answer_topic(agent, topic, mode, retries))
            return None
        local = threading.local()

        def work(topic: Topic) -> TopicRecord:
            if not hasattr(local, "agent"):
                local.agent = factory(settings)
            return answer_topic(local.agent, topic, mode, retries)

        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="biocite-batch")
        pending: set[Future[TopicRecord]] = {pool.submit(work, t) for t in todo}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    finish(future.result())
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        return None
    finally:
        bar.close()


def _write_run(settings: Settings, chosen: list[Topic], journal: Journal, out: Path, fmt: str) -> None:
    b = settings.batch
    header = {"team_id": b.team_id, "run_name": b.run_name or out.stem, "contact_email": b.contact_email}
    results = []
    for topic in chosen:
        record = journal.records.get(topic.topic_id)
        if record is not None:
            results.append((topic.topic_id, record.answer if record.status == "answered" else None))
    atomic_write_json(out, build_run(fmt, header, results))


def _summarise(summary: BatchSummary, chosen: list[Topic], journal: Journal) -> BatchSummary:
    seconds = []
    for topic in chosen:
        record = journal.records.get(topic.topic_id)
        if record is None:
            continue
        seconds.append(record.seconds)
        if record.status == "answered":
            summary.answered += 1
        elif record.status == "abstained":
            summary.abstained += 1
        else:
            summary.failed += 1
            summary.failed_topics[topic.topic_id] = record.error or "?"
    if seconds:
        summary.seconds_median = round(statistics.median(seconds), 2)
        summary.seconds_mean = round(statistics.fmean(seconds), 2)
    missing = len(chosen) - summary.answered - summary.abstained - summary.failed
    if missing:
        summary.notes.append(f"{missing} topics not reached (interrupted); rerun the same command to resume")
    return summary


def read_journal(path: Path) -> tuple[JournalHeader, dict[str, TopicRecord]]:
    """Header and last record per topic of a journal (read only)."""
    if not path.is_file():
        raise InputError(f"{path}: batch journal not found")
    header: JournalHeader | None = None
    records: dict[str, TopicRecord] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise InputError(f"{path}:{n}: damaged journal line") from None
        if isinstance(row, dict) and row.get("kind") == "header":
            header = _journal_row(path, n, row, JournalHeader)
        else:
            record = _journal_row(path, n, row, TopicRecord)
            records[record.topic_id] = record
    if header is None:
        raise InputError(f"{path}:1: not a biocite batch journal (no header line)")
    return header, records
