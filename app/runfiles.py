"""TREC BioGen run files: topics in, official run files out, and a validator with line-precise messages.

BioGen 2024 (https://dmice.ohsu.edu/trec-biogen/submission_format.html): `{team_id, run_name, contact_email,
results: [{topic_id, answer, references}]}`; `answer` is plain text where `[PMID, PMID]` before a sentence's
final punctuation cites that sentence (the official reader keeps the first 3 PMIDs of a list and drops
bracket runs after the full stop); every cited PMID is in `references`, once, and every reference is cited.
Limits: 150 words without the citations, 10 sentences.
BioGen 2025 (task B): the same envelope with `results: [{topic_id, responses: [{text, citations}]}]`;
<= 250 words, <= 3 PMIDs per sentence.

An abstained topic is written as an empty answer (2024: `""` with no references; 2025: no responses),
which is what the formats allow and what `biocite.evaluator.runs` reads as an abstention. Why it abstained
stays in the batch journal next to the run.
"""

from __future__ import annotations

import bisect
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from biocite import jsonfile
from biocite.errors import InputError
from biocite.evaluator.runs import is_journal
from biocite.records import Answer
from biocite.runformats import (
    FORMATS,
    HEADER_FIELDS,
    LIMITS,
    RESULT_MODELS,
    RUN_MODELS,
    Limits,
    Response2025,
    Result2024,
    Result2025,
    RunFormat,
    format_citation,
    is_official,
    marker_pmids,
)
from biocite.sentences import split_text
from biocite.topics import BUILTIN_TOPICS, Topic, TopicSet, load_topics

__all__ = [
    "BUILTIN_TOPICS",
    "FORMATS",
    "HEADER_FIELDS",
    "LIMITS",
    "Limits",
    "Problem",
    "RunFormat",
    "Topic",
    "TopicSet",
    "build_run",
    "load_topics",
    "result_2024",
    "result_2025",
    "validate_run",
]


# --- writers ----------------------------------------------------------------------------------------

_FINAL = re.compile(r"([.!?]+)[\"')\]]*\s*$")
_BRACKETS = str.maketrans({"[": "(", "]": ")"})
scanstring = json.decoder.scanstring  # type: ignore[attr-defined]  # C string scanner: (value, end)


def _sentence_2024(text: str, pmids: list[str]) -> str:
    # Square brackets inside the prose would be read as citation lists by the official reader.
    text = " ".join(text.translate(_BRACKETS).split())
    match = _FINAL.search(text)
    body, stop = (text[: match.start()], match.group(1)) if match else (text.rstrip(",;: "), ".")
    return f"{body} {format_citation(pmids)}{stop}" if pmids else f"{body}{stop}"


def _cited(answer: Answer | None, limit: int) -> list[tuple[str, list[str]]]:
    if answer is None or answer.abstained:  # abstained or failed: an empty answer
        return []
    return [(s.text, list(dict.fromkeys(c.pmid for c in s.citations))[:limit]) for s in answer.sentences]


def result_2024(topic_id: str, answer: Answer | None) -> Result2024:
    """Trailing sentences are dropped if the official reading of the text would break a limit (the agent's
    limits make this rare)."""
    sentences = _cited(answer, LIMITS["biogen2024"].max_citations)
    while True:
        text = " ".join(_sentence_2024(t, p) for t, p in sentences)
        refs = list(dict.fromkeys(p for _, ps in sentences for p in ps))
        if not sentences or not _errors(_answer_problems_2024(text, refs)):
            return Result2024(topic_id=topic_id, answer=text, references=refs)
        sentences = sentences[:-1]


def result_2025(topic_id: str, answer: Answer | None) -> Result2025:
    sentences = _cited(answer, LIMITS["biogen2025"].max_citations)
    responses = [Response2025(text=" ".join(t.split()), citations=p) for t, p in sentences]
    while responses and _words(" ".join(r.text for r in responses)) > LIMITS["biogen2025"].max_words:
        responses.pop()
    return Result2025(topic_id=topic_id, responses=responses)


def build_run(fmt: str, header: dict[str, str], results: list[tuple[str, Answer | None]]) -> dict[str, Any]:
    """The run file's JSON value, built through the format's model."""
    make = result_2024 if fmt == "biogen2024" else result_2025
    entries = [make(t, a) for t, a in results]
    run = RUN_MODELS[fmt].model_validate({**{k: header[k] for k in HEADER_FIELDS}, "results": entries})
    return run.model_dump(mode="json")


# --- validator --------------------------------------------------------------------------------------

Severity = Literal["error", "warning"]
_BRACKET_RUN = re.compile(r"\[([^\[\]]*)\]")
_WORD = re.compile(r"\S*\w\S*")  # a lone punctuation mark is not a word
_AFTER_STOP = re.compile(r"[.!?][\"')]*\s*\[[^\]]*\]")


class Problem(BaseModel):
    line: int
    where: str
    message: str
    severity: Severity = "error"

    def render(self, path: Path | str) -> str:
        tag = "" if self.severity == "error" else "warning: "
        return f"{path}:{self.line}: {tag}{self.where}: {self.message}"


def _words(text: str) -> int:
    return len(_WORD.findall(_BRACKET_RUN.sub(" ", text)))


def _split(text: str) -> list[str]:
    return split_text(text)


def _errors(problems: list[tuple[str, Severity]]) -> list[str]:
    return [message for message, severity in problems if severity == "error"]


def _answer_problems_2024(text: str, refs: list[str]) -> list[tuple[str, Severity]]:
    """What the official reader would reject or silently change in one 2024 answer, with severities.
    Citations are read with the evaluator's grammar; non-official spellings of them are warnings."""
    problems: list[tuple[str, Severity]] = []
    limits = LIMITS["biogen2024"]
    if (n := _words(text)) > limits.max_words:
        problems.append((f"answer: {n} words without citations; at most {limits.max_words}", "error"))
    sentences = _split(text) if text.strip() else []
    if limits.max_sentences and len(sentences) > limits.max_sentences:
        problems.append((f"answer: {len(sentences)} sentences; at most {limits.max_sentences}", "error"))
    if _AFTER_STOP.search(text):
        problems.append(
            (
                "answer: a [citation] after the sentence's final punctuation is discarded by the official reader",
                "error",
            )
        )
    cited: list[str] = []
    for i, sentence in enumerate(sentences, 1):
        for marker in _BRACKET_RUN.finditer(sentence):
            problems.extend(_marker_problems(i, marker.group(0), limits.max_citations))
            cited.extend(marker_pmids(marker.group(0)) or [])
    if text.count("[") != text.count("]"):
        problems.append(("answer: unbalanced square brackets", "error"))
    missing = [p for p in dict.fromkeys(cited) if p not in refs]
    if missing:
        problems.append((f"answer cites {', '.join(missing)} which 'references' does not list", "error"))
    uncited = [r for r in refs if r not in cited]
    if uncited:
        problems.append((f"references: {', '.join(map(str, uncited))} never cited in the answer", "error"))
    return problems


def _marker_problems(sentence: int, marker: str, max_citations: int) -> list[tuple[str, Severity]]:
    pmids = marker_pmids(marker)
    if pmids is None:
        return [(f"answer sentence {sentence}: {marker} is not a comma-separated list of PMIDs", "error")]
    problems: list[tuple[str, Severity]] = []
    if not is_official(marker):
        official = format_citation(pmids)
        problems.append(
            (
                f"answer sentence {sentence}: write {marker} as {official} (plain PMIDs, comma-separated)",
                "warning",
            )
        )
    if len(pmids) > max_citations:
        problems.append(
            (
                f"answer sentence {sentence}: {len(pmids)} PMIDs in one citation; at most {max_citations}",
                "error",
            )
        )
    return problems


class _Lines:
    """Line number of every value in a JSON text, by path (`("results", 3, "answer")`)."""

    _WS = re.compile(r"[ \t\n\r]*")
    _SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")

    def __init__(self, text: str) -> None:
        self.text = text
        self.newlines = [i for i, c in enumerate(text) if c == "\n"]
        self.lines: dict[tuple[Any, ...], int] = {}
        self._value(0, ())

    def line(self, *path: Any) -> int:
        while path and path not in self.lines:
            path = path[:-1]
        return self.lines.get(path, 1)

    def _skip(self, pos: int) -> int:
        match = self._WS.match(self.text, pos)
        return match.end() if match else pos

    def _value(self, pos: int, path: tuple[Any, ...]) -> int:
        pos = self._skip(pos)
        self.lines[path] = bisect.bisect_left(self.newlines, pos) + 1
        ch = self.text[pos]
        if ch in "{[":
            close, index = ("}" if ch == "{" else "]"), 0
            pos = self._skip(pos + 1)
            while self.text[pos] != close:
                if ch == "{":
                    key, pos = scanstring(self.text, self._skip(pos) + 1)
                    pos = self._value(self._skip(pos) + 1, (*path, key))  # past the ':'
                else:
                    pos = self._value(pos, (*path, index))
                    index += 1
                pos = self._skip(pos)
                if self.text[pos] == ",":
                    pos = self._skip(pos + 1)
            return pos + 1
        if ch == '"':
            return scanstring(self.text, pos + 1)[1]
        match = self._SCALAR.match(self.text, pos)
        return match.end() if match else pos + 1


_FIELD_MESSAGES = {
    **{field: f"'{field}' missing or not a string" for field in HEADER_FIELDS},
    "results": "'results' missing or not a list",
    "topic_id": "'topic_id' missing or not a string",
    "answer": "'answer' missing or not a string",
    "references": "'references' missing or not a list of strings",
    "responses": "'responses' missing or not a list",
    "citations": "'citations' must be a list of PMID strings",
}
_RESPONSE = "expected an object with 'text' (string) and 'citations' (list of PMIDs)"


def _structure_problem(error: Any) -> tuple[tuple[Any, ...], str]:
    """(where, message) of one validation error of the run model, in the validator's words."""
    loc = tuple(error["loc"])
    if error["type"] == "extra_forbidden":
        return loc, f"unexpected field '{loc[-1]}'"
    at = max(i for i, part in enumerate(loc) if isinstance(part, str))  # the innermost field
    field, inside = loc[at], len(loc) > at + 1  # inside: the error is about one item of a list field
    if field == "references" and error["type"] == "string_pattern_mismatch":
        return loc, f"'{error['input']}' is not a PMID"
    if field == "text" or (field == "responses" and inside):
        return loc[: at if field == "text" else at + 2], _RESPONSE
    if field == "results" and inside:
        return loc[: at + 2], "expected an object"
    where = loc[: at + 1]
    return (where[:-1] if error["type"] == "missing" else where), _FIELD_MESSAGES[field]


def _is_journal(text: str) -> bool:
    """Whether the text opens with a batch journal's header line (its other lines made it "not valid JSON")."""
    first = text.split("\n", 1)[0]
    if not first.lstrip().startswith("{") or '"header"' not in first:
        return False
    try:
        head = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return is_journal([(1, head)])


def validate_run(path: Path, topics: list[str] | None = None) -> tuple[str | None, list[Problem]]:
    """(format, problems) of a BioGen 2024/2025 run file; `topics`: ids the run must answer, if given.
    Structure is checked by the format's model (`biocite.runformats`); limits and citations after it."""
    path = Path(path)
    if str(path) != "-" and not path.is_file():
        return None, [Problem(line=1, where="file", message="not found")]
    try:
        text = jsonfile.read_text(path)
        if _is_journal(text):
            why = "a `biocite batch` journal, not a run file: validate the run file batch wrote beside it"
            return None, [Problem(line=1, where="file", message=why)]
        data = jsonfile.parse(text, str(path))
    except InputError as exc:  # "<path>:<line>: why" -> a Problem at that line
        line, _, why = str(exc).removeprefix(f"{path}:").partition(": ")
        return None, [Problem(line=int(line) if line.isdigit() else 1, where="file", message=why or str(exc))]
    lines = _Lines(text)
    problems: list[Problem] = []

    def add(where: tuple[Any, ...], message: str, severity: Severity = "error") -> None:
        label = "".join(
            f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(where)
        )
        problem = Problem(line=lines.line(*where), where=label or "run", message=message, severity=severity)
        if problem not in problems:
            problems.append(problem)

    if not isinstance(data, dict):
        add((), "expected an object with team_id, run_name, contact_email, results")
        return None, problems
    results = data.get("results")
    fmt: RunFormat = (
        "biogen2025"
        if isinstance(results, list) and any(isinstance(r, dict) and "responses" in r for r in results)
        else "biogen2024"
    )
    try:
        RUN_MODELS[fmt].model_validate(data)
    except ValidationError as exc:
        for error in exc.errors():
            add(*_structure_problem(error))
    for field in HEADER_FIELDS:
        value = data.get(field)
        if isinstance(value, str) and not value.strip():
            add((field,), f"'{field}' is empty; set it before submitting", "warning")
    if not isinstance(results, list):
        return None, problems
    seen: set[str] = set()
    for i, entry in enumerate(results):
        try:
            result = RESULT_MODELS[fmt].model_validate(entry)
        except ValidationError:
            continue  # reported above
        if result.topic_id in seen:
            add(("results", i, "topic_id"), f"topic {result.topic_id} appears twice")
        seen.add(result.topic_id)
        if isinstance(result, Result2024):
            _check_2024(result, ("results", i), add)
        else:
            _check_2025(result, ("results", i), add)
    if topics is not None:
        missing = [t for t in topics if t not in seen]
        if missing:
            add(("results",), f"{len(missing)} topics missing: {', '.join(missing[:10])}")
        unknown = sorted(seen - set(topics))
        if unknown:
            add(("results",), f"unknown topic ids: {', '.join(unknown[:10])}")
    return fmt, problems


def _check_2024(result: Result2024, at: tuple[Any, ...], add: Any) -> None:
    refs = result.references
    for j, ref in enumerate(refs):
        if ref in refs[:j]:
            add((*at, "references", j), f"PMID {ref} listed twice")
    for message, severity in _answer_problems_2024(result.answer, refs):
        field = "references" if message.startswith("references") else "answer"
        add((*at, field), message, severity)


def _check_2025(result: Result2025, at: tuple[Any, ...], add: Any) -> None:
    limits = LIMITS["biogen2025"]
    for j, response in enumerate(result.responses):
        where = (*at, "responses", j)
        if not response.text.strip():
            add((*where, "text"), "empty sentence")
        if len(response.citations) > limits.max_citations:
            add(
                (*where, "citations"),
                f"{len(response.citations)} PMIDs; at most {limits.max_citations} per sentence",
            )
        if len(set(response.citations)) != len(response.citations):
            add((*where, "citations"), "a PMID is cited twice")
    words = sum(_words(r.text) for r in result.responses)
    if words > limits.max_words:
        add((*at, "responses"), f"{words} words; at most {limits.max_words}")
