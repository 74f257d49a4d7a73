"""Run files the evaluator reads, all turned into `RunEntry(topic_id, question, Answer)`.

Formats (detected from the content, not the file name):
- biocite JSON: `{"run_name": str, "answers": [{"topic_id", "question", "answer": Answer}]}`;
  biocite JSONL: one `{"topic_id", "question", "answer": Answer}` per line (the batch runner's output).
- TREC BioGen 2024: `{"team_id", "run_name", "results": [{"topic_id", "answer": "text with [PMID] or
  [PMID, PMID] citations", "references": [...]}]}`.
- TREC BioGen 2025 (task B): the same envelope, with `responses` (the official field, what `biocite batch`
  writes) or `answer` a list of sentences `{"text" | "sentence", "citations" | "pmids": [...]}`.
  Each BioGen entry is normalised into the official models of `biocite.runformats` (numeric PMIDs become
  strings, the alternative field names become `text`/`citations`); the envelope is not required.
- BioACE / MedAESQA: a JSON list of questions `{"question_id", "question", "machine_generated_answers":
  {"M1": {"answer_sentences": [{"sentence", "citation_assessment": [{"cited_pmid"}]}]}, ...}}`; each
  (question, system) becomes one entry with topic_id `<question_id>/<system>`. This shape is inferred from
  BioACE's published code (its sample file was not available here).
Questions missing from a BioGen run come from the journal `biocite batch` kept beside it, else from the topics
files shipped in data/biogen.
Malformed input raises one InputError naming the file, the topic and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from biocite import jsonfile
from biocite.errors import InputError, first_problem
from biocite.records import Answer, AnswerSentence, Citation
from biocite.runformats import Result2024, Result2025, inline_pmids, strip_inline_citations
from biocite.sentences import split_text
from biocite.topics import known_questions


class RunEntry(BaseModel):
    topic_id: str
    question: str
    answer: Answer


class Run(BaseModel):
    run_name: str
    path: str
    format: str
    entries: list[RunEntry]


def journal_path(run: Path) -> Path:
    """Where `biocite batch` keeps the journal of a run file: beside it, `<run>.journal.jsonl`."""
    return run.with_name(run.stem + ".journal.jsonl")


def journal_questions(run: Path) -> dict[str, str]:
    """The questions `biocite batch` answered for a run file, by topic id, from its journal (official
    BioGen run files carry no question); {} without a readable journal."""
    path = journal_path(run)
    if str(run) == "-" or not path.is_file():
        return {}
    try:
        _, rows = jsonfile.load_json_or_jsonl(path)
    except InputError:
        return {}
    if not rows or not is_journal(rows):
        return {}
    return {
        str(row["topic_id"]): row["question"]
        for _, row in rows[1:]
        if isinstance(row, dict) and "topic_id" in row and isinstance(row.get("question"), str)
    }


def is_journal(rows: list[tuple[int, Any]]) -> bool:
    return isinstance(rows[0][1], dict) and rows[0][1].get("kind") == "header"


def _journal(path: Path, rows: list[tuple[int, Any]]) -> Run:
    """A `biocite batch` journal: the last record of each topic; failed topics are not scored."""
    latest: dict[str, RunEntry] = {}
    for n, row in rows[1:]:
        if not isinstance(row, dict) or row.get("kind") != "topic":
            raise InputError(f"{path}:{n}: expected a topic record of a batch journal")
        if row.get("answer") is None:
            latest.pop(str(row.get("topic_id")), None)
            continue
        latest[str(row.get("topic_id"))] = _biocite_entry(path, row, f"line {n}")
    if not latest:
        raise InputError(f"{path}: the journal holds no answered or abstained topic")
    return Run(run_name=path.stem, path=str(path), format="biocite-journal", entries=list(latest.values()))


def parse_inline_citations(text: str) -> list[AnswerSentence]:
    """Sentences of a BioGen 2024 answer; the citation markers of a sentence (`biocite.runformats`
    grammar: `[123]`, `[123, 456]`, `[PMID: 123; 456]`) cite its PMIDs."""
    out = []
    for sentence in split_text(text):
        clean = " ".join(strip_inline_citations(sentence).split())
        if clean:
            pmids = dict.fromkeys(inline_pmids(sentence))
            out.append(AnswerSentence(text=clean, citations=[Citation(pmid=p) for p in pmids]))
    return out


def _fail(path: Path, topic: Any, field: str, why: str) -> InputError:
    return InputError(f"{path}: topic {topic}: field '{field}': {why}")


def _question(path: Path, topic: str, given: Any, topics: dict[str, str]) -> str:
    if isinstance(given, str) and given.strip():
        return given
    if topic in topics:
        return topics[topic]
    why = "missing, and the topic is not a known BioGen topic"
    if str(path) != "-":  # standard input has no journal beside it
        name = journal_path(path).name
        why += f" (for a run `biocite batch` wrote from your own topics, keep its journal, {name}, beside it)"
    raise _fail(path, topic, "question", why)


def _biocite_entry(path: Path, row: Any, where: str) -> RunEntry:
    if not isinstance(row, dict):
        raise InputError(f"{path}: {where}: expected an object with topic_id, question, answer")
    topic = row.get("topic_id", "?")
    for field in ("topic_id", "answer"):
        if field not in row:
            raise _fail(path, topic, field, "missing")
    answer = row["answer"]
    if isinstance(answer, dict) and "question" not in answer:
        answer = {**answer, "question": row.get("question", "")}
    try:
        parsed = Answer.model_validate(answer)
    except ValidationError as exc:
        field, why = first_problem(exc)
        raise _fail(path, topic, f"answer.{field}", why) from None
    question = row.get("question") or parsed.question
    if not question:
        raise _fail(path, topic, "question", "missing")
    return RunEntry(topic_id=str(topic), question=question, answer=parsed)


def _pmid_strings(values: Any) -> Any:
    """Other teams' runs write PMIDs as numbers too."""
    if not isinstance(values, list):
        return values
    return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in values]


def _response(sentence: Any) -> Any:
    """A 2025 sentence as other runs spell it (`text` | `sentence`, `citations` | `pmids`) -> a response."""
    if not isinstance(sentence, dict):
        return sentence
    cites = sentence.get("citations", sentence.get("pmids", []))
    return {"text": sentence.get("text", sentence.get("sentence")), "citations": _pmid_strings(cites)}


def _why(error: Any) -> str:
    if error["type"] == "string_pattern_mismatch" and "topic_id" not in error["loc"]:
        return f"'{error['input']}' is not a PMID"
    return str(error["msg"])


def _biogen_result(path: Path, row: dict[str, Any], field: str) -> Result2024 | Result2025:
    """One `results` entry, normalised into the official models (`biocite.runformats`)."""
    topic, value = str(row["topic_id"]), row[field]
    model: type[Result2024] | type[Result2025]
    if isinstance(value, str):
        refs = _pmid_strings(row.get("references", []))
        model, raw = Result2024, {"topic_id": topic, "answer": value, "references": refs}
    elif isinstance(value, list):
        model, raw = Result2025, {"topic_id": topic, "responses": [_response(s) for s in value]}
    else:
        raise _fail(path, topic, field, "expected a string (2024) or a list of sentences (2025)")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [field if part == "responses" else part for part in first["loc"]]
        label = "".join(
            f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(loc)
        )
        raise _fail(path, topic, label, _why(first)) from None


def _sentences(result: Result2024 | Result2025) -> list[AnswerSentence]:
    if isinstance(result, Result2024):
        return parse_inline_citations(result.answer)
    return [
        AnswerSentence(text=r.text, citations=[Citation(pmid=p) for p in dict.fromkeys(r.citations)])
        for r in result.responses
    ]


def _biogen(path: Path, data: dict[str, Any], topics: dict[str, str]) -> Run:
    results = data["results"]
    if not isinstance(results, list):
        raise InputError(f"{path}: field 'results': expected a list")
    entries = []
    fmt = "biogen2024"
    for i, r in enumerate(results):
        if not isinstance(r, dict) or "topic_id" not in r:
            raise InputError(f"{path}: results[{i}]: field 'topic_id': missing")
        topic = str(r["topic_id"])
        field = "responses" if "responses" in r else "answer"
        if field not in r:
            raise _fail(path, topic, "answer", "missing ('answer' for 2024, 'responses' for 2025)")
        result = _biogen_result(path, r, field)
        if isinstance(result, Result2025):
            fmt = "biogen2025"
        sentences = _sentences(result)
        question = _question(path, topic, r.get("question"), topics)
        entries.append(
            RunEntry(
                topic_id=topic,
                question=question,
                answer=Answer(question=question, sentences=sentences, abstained=not sentences),
            )
        )
    return Run(run_name=str(data.get("run_name", path.stem)), path=str(path), format=fmt, entries=entries)


def _bioace(path: Path, data: list[Any]) -> Run:
    entries = []
    for i, q in enumerate(data):
        qid = q.get("question_id", q.get("topic_id", i)) if isinstance(q, dict) else i
        if not isinstance(q, dict) or not isinstance(q.get("question"), str):
            raise _fail(path, qid, "question", "missing or not a string")
        systems = q.get("machine_generated_answers")
        if not isinstance(systems, dict):
            raise _fail(path, qid, "machine_generated_answers", "expected an object of systems")
        for system, body in systems.items():
            rows = body.get("answer_sentences") if isinstance(body, dict) else None
            if not isinstance(rows, list):
                raise _fail(
                    path, qid, f"machine_generated_answers.{system}.answer_sentences", "expected a list"
                )
            sentences = []
            for j, s in enumerate(rows):
                text = s.get("sentence", s.get("answer_sentence")) if isinstance(s, dict) else None
                if not isinstance(text, str):
                    raise _fail(
                        path, qid, f"{system}.answer_sentences[{j}].sentence", "missing or not a string"
                    )
                cites = [
                    str(c.get("cited_pmid"))
                    for c in s.get("citation_assessment") or []
                    if c.get("cited_pmid")
                ]
                sentences.append(
                    AnswerSentence(text=text, citations=[Citation(pmid=p) for p in dict.fromkeys(cites)])
                )
            entries.append(
                RunEntry(
                    topic_id=f"{qid}/{system}",
                    question=q["question"],
                    answer=Answer(question=q["question"], sentences=sentences, abstained=not sentences),
                )
            )
    return Run(run_name=path.stem, path=str(path), format="bioace", entries=entries)


def load_run(path: Path) -> Run:
    """Any run format above; `-` reads standard input. A run with no entry is an error, not a score."""
    try:
        run = _load_run(Path(path))
    except ValidationError as exc:  # e.g. a cited "PMID" that is not a positive integer
        field, why = first_problem(exc)
        raise InputError(f"{path}: {field or 'run'}: {why}") from None
    if not run.entries:
        raise InputError(f"{path}: the run holds no answers to score")
    return run


def _load_run(path: Path) -> Run:
    topics = known_questions()
    data, rows = jsonfile.load_json_or_jsonl(path)
    if rows is not None:  # JSONL: biocite answers, or a `biocite batch` journal
        if is_journal(rows):
            return _journal(path, rows)
        entries = [_biocite_entry(path, row, f"line {n}") for n, row in rows]
        return Run(run_name=path.stem, path=str(path), format="biocite-jsonl", entries=_unique(path, entries))
    if isinstance(data, dict) and data.get("kind") == "header":
        raise InputError(f"{path}: the batch journal holds no topic yet")
    if isinstance(data, dict) and "answers" in data:
        if not isinstance(data["answers"], list):
            raise InputError(f"{path}: field 'answers': expected a list")
        entries = [_biocite_entry(path, row, f"answers[{i}]") for i, row in enumerate(data["answers"])]
        name = str(data.get("run_name", path.stem))
        return Run(run_name=name, path=str(path), format="biocite", entries=_unique(path, entries))
    if isinstance(data, dict) and "results" in data:
        # the questions batch answered come first: topic "1" of the user's own topics is not BioGen's "1"
        run = _biogen(path, data, {**topics, **journal_questions(path)})
        run.entries = _unique(path, run.entries)
        return run
    if (
        isinstance(data, list)
        and data
        and isinstance(data[0], dict)
        and "machine_generated_answers" in data[0]
    ):
        return _bioace(path, data)
    if isinstance(data, dict) and {"topic_id", "answer"} <= set(data):
        return Run(
            run_name=path.stem,
            path=str(path),
            format="biocite-jsonl",
            entries=[_biocite_entry(path, data, "line 1")],
        )
    raise InputError(
        f"{path}: unknown run format (expected a biocite run with 'answers', a BioGen run with 'results', "
        "a BioACE list with 'machine_generated_answers', or biocite JSONL)"
    )


def _unique(path: Path, entries: list[RunEntry]) -> list[RunEntry]:
    seen: set[str] = set()
    for e in entries:
        if e.topic_id in seen:
            raise _fail(path, e.topic_id, "topic_id", "appears twice")
        seen.add(e.topic_id)
    return entries
