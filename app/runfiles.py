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

from pydantic import BaseModel

from biocite import jsonfile
from biocite.errors import InputError
from biocite.records import Answer
from biocite.sentences import split_text
from biocite.settings import DATA_DIR

RunFormat = Literal["biogen2024", "biogen2025"]
FORMATS: tuple[str, ...] = ("biogen2024", "biogen2025")
BUILTIN_TOPICS = {
    "biogen2024": DATA_DIR / "biogen" / "BioGen2024topics.json",
    "biogen2025": DATA_DIR / "biogen" / "BioGen2025topics.json",
    "pubmedqa": DATA_DIR / "pubmedqa" / "dev_questions.json",
}
HEADER_FIELDS = ("team_id", "run_name", "contact_email")


class Limits(BaseModel):
    max_words: int
    max_sentences: int | None  # None: the format sets no sentence limit
    max_citations: int = 3


LIMITS: dict[str, Limits] = {
    "biogen2024": Limits(max_words=150, max_sentences=10),
    "biogen2025": Limits(max_words=250, max_sentences=None),
}


# --- topics -----------------------------------------------------------------------------------------


class Topic(BaseModel):
    topic_id: str
    question: str


class TopicSet(BaseModel):
    name: str  # "biogen2024", "biogen2025", "pubmedqa" or the file path
    format: RunFormat  # the run format these topics are answered in by default
    topics: list[Topic]


def load_topics(spec: str) -> TopicSet:
    """`biogen2024`, `biogen2025`, `pubmedqa` (PubMedQA development questions) or a topics file in either
    BioGen shape (`{"topics": [{id, question}]}` or a list of `{id, question}`)."""
    if spec == "pubmedqa":
        return _pubmedqa(BUILTIN_TOPICS["pubmedqa"])
    path = BUILTIN_TOPICS.get(spec, Path(spec))
    if spec != "-" and not path.is_file():
        raise InputError(f"{path}: topics file not found (or use biogen2024, biogen2025, pubmedqa)")
    data = jsonfile.load(path)
    fmt: RunFormat = "biogen2025" if isinstance(data, list) else "biogen2024"
    rows = data.get("topics") if isinstance(data, dict) else data
    if not isinstance(rows, list) or not rows:
        raise InputError(f"{path}: field 'topics': expected a non-empty list of {{id, question}} objects")
    topics, seen = [], set()
    for i, row in enumerate(rows):
        tid = row.get("id", row.get("topic_id")) if isinstance(row, dict) else None
        if tid is None or isinstance(tid, bool) or not str(tid).strip():
            raise InputError(f"{path}: topics[{i}]: field 'id': missing")
        question = row.get("question")
        if not isinstance(question, str) or not question.strip():
            raise InputError(f"{path}: topics[{i}] (id {tid}): field 'question': missing or empty")
        if str(tid) in seen:
            raise InputError(f"{path}: topics[{i}]: field 'id': {tid} appears twice")
        seen.add(str(tid))
        topics.append(Topic(topic_id=str(tid), question=question.strip()))
    name = spec if spec in BUILTIN_TOPICS else str(path)
    return TopicSet(name=name, format=fmt, topics=topics)


def _pubmedqa(path: Path) -> TopicSet:
    data = json.loads(path.read_text())
    topics = [Topic(topic_id=str(pmid), question=row["question"]) for pmid, row in data.items()]
    return TopicSet(name="pubmedqa", format="biogen2024", topics=topics)


def pubmedqa_long_answers(path: Path | None = None) -> dict[str, str]:
    data = json.loads((path or BUILTIN_TOPICS["pubmedqa"]).read_text())
    return {str(pmid): row["long_answer"] for pmid, row in data.items()}


# --- writers ----------------------------------------------------------------------------------------

_FINAL = re.compile(r"([.!?]+)[\"')\]]*\s*$")
_BRACKETS = str.maketrans({"[": "(", "]": ")"})
scanstring = json.decoder.scanstring  # type: ignore[attr-defined]  # C string scanner: (value, end)


def _sentence_2024(text: str, pmids: list[str]) -> str:
    # Square brackets inside the prose would be read as citation lists by the official reader.
    text = " ".join(text.translate(_BRACKETS).split())
    match = _FINAL.search(text)
    body, stop = (text[: match.start()], match.group(1)) if match else (text.rstrip(",;: "), ".")
    return f"{body} [{', '.join(pmids)}]{stop}" if pmids else f"{body}{stop}"


def _cited(answer: Answer, limit: int) -> list[tuple[str, list[str]]]:
    out = []
    for sentence in answer.sentences:
        pmids = list(dict.fromkeys(c.pmid for c in sentence.citations))[:limit]
        out.append((sentence.text, pmids))
    return out


def result_2024(topic_id: str, answer: Answer | None) -> dict[str, Any]:
    """One `results` entry; an abstained or failed topic is an empty answer. Trailing sentences are dropped
    if the official reading of the text would break a limit (the agent's limits make this rare)."""
    sentences = (
        [] if answer is None or answer.abstained else _cited(answer, LIMITS["biogen2024"].max_citations)
    )
    while True:
        text = " ".join(_sentence_2024(t, p) for t, p in sentences)
        refs = list(dict.fromkeys(p for _, ps in sentences for p in ps))
        entry = {"topic_id": topic_id, "answer": text, "references": refs}
        if not sentences or not _answer_problems_2024(entry):
            return entry
        sentences = sentences[:-1]


def result_2025(topic_id: str, answer: Answer | None) -> dict[str, Any]:
    sentences = (
        [] if answer is None or answer.abstained else _cited(answer, LIMITS["biogen2025"].max_citations)
    )
    texts = [" ".join(t.split()) for t, _ in sentences]
    while texts and _words(" ".join(texts)) > LIMITS["biogen2025"].max_words:
        texts.pop()
    responses = [{"text": t, "citations": p} for t, (_, p) in zip(texts, sentences, strict=False)]
    return {"topic_id": topic_id, "responses": responses}


def build_run(fmt: str, header: dict[str, str], results: list[tuple[str, Answer | None]]) -> dict[str, Any]:
    make = result_2024 if fmt == "biogen2024" else result_2025
    return {**{k: header[k] for k in HEADER_FIELDS}, "results": [make(t, a) for t, a in results]}


# --- validator --------------------------------------------------------------------------------------

_BRACKET_RUN = re.compile(r"\[([^\[\]]*)\]")
_PMID = re.compile(r"^\d{1,9}$")
_WORD = re.compile(r"\S*\w\S*")  # a lone punctuation mark is not a word
_AFTER_STOP = re.compile(r"[.!?][\"')]*\s*\[[^\]]*\]")


class Problem(BaseModel):
    line: int
    where: str
    message: str
    severity: Literal["error", "warning"] = "error"

    def render(self, path: Path | str) -> str:
        tag = "" if self.severity == "error" else "warning: "
        return f"{path}:{self.line}: {tag}{self.where}: {self.message}"


def _words(text: str) -> int:
    return len(_WORD.findall(_BRACKET_RUN.sub(" ", text)))


def _split(text: str) -> list[str]:
    return split_text(text)


def _answer_problems_2024(entry: dict[str, Any]) -> list[str]:
    """What the official reader would reject or silently change in one 2024 results entry."""
    text, refs = entry["answer"], entry["references"]
    problems = []
    limits = LIMITS["biogen2024"]
    if (n := _words(text)) > limits.max_words:
        problems.append(f"answer: {n} words without citations; at most {limits.max_words}")
    sentences = _split(text) if text.strip() else []
    if limits.max_sentences and len(sentences) > limits.max_sentences:
        problems.append(f"answer: {len(sentences)} sentences; at most {limits.max_sentences}")
    if _AFTER_STOP.search(text):
        problems.append(
            "answer: a [citation] after the sentence's final punctuation is discarded by the official reader"
        )
    cited: list[str] = []
    for i, sentence in enumerate(sentences, 1):
        for group in _BRACKET_RUN.findall(sentence):
            pmids = [p.strip() for p in group.split(",")]
            bad = [p for p in pmids if not _PMID.match(p)]
            if bad:
                problems.append(f"answer sentence {i}: [{group}] is not a comma-separated list of PMIDs")
                continue
            if len(pmids) > limits.max_citations:
                problems.append(
                    f"answer sentence {i}: {len(pmids)} PMIDs in one citation; at most {limits.max_citations}"
                )
            cited.extend(pmids)
    if text.count("[") != text.count("]"):
        problems.append("answer: unbalanced square brackets")
    missing = [p for p in dict.fromkeys(cited) if p not in refs]
    if missing:
        problems.append(f"answer cites {', '.join(missing)} which 'references' does not list")
    uncited = [r for r in refs if r not in cited]
    if uncited:
        problems.append(f"references: {', '.join(map(str, uncited))} never cited in the answer")
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


def validate_run(path: Path, topics: list[str] | None = None) -> tuple[str | None, list[Problem]]:
    """(format, problems) of a BioGen 2024/2025 run file; `topics`: ids the run must answer, if given."""
    path = Path(path)
    if str(path) != "-" and not path.is_file():
        return None, [Problem(line=1, where="file", message="not found")]
    try:
        text = jsonfile.read_text(path)
        data = jsonfile.parse(text, str(path))
    except InputError as exc:  # "<path>:<line>: why" -> a Problem at that line
        line, _, why = str(exc).removeprefix(f"{path}:").partition(": ")
        return None, [Problem(line=int(line) if line.isdigit() else 1, where="file", message=why or str(exc))]
    lines = _Lines(text)
    problems: list[Problem] = []

    def add(where: tuple[Any, ...], message: str, severity: Literal["error", "warning"] = "error") -> None:
        label = "".join(
            f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(where)
        )
        problems.append(
            Problem(line=lines.line(*where), where=label or "run", message=message, severity=severity)
        )

    if not isinstance(data, dict):
        add((), "expected an object with team_id, run_name, contact_email, results")
        return None, problems
    for field in HEADER_FIELDS:
        value = data.get(field)
        if not isinstance(value, str):
            add((field,) if field in data else (), f"'{field}' missing or not a string")
        elif not value.strip():
            add((field,), f"'{field}' is empty; set it before submitting", "warning")
    for field in data:
        if field not in (*HEADER_FIELDS, "results"):
            add((field,), f"unexpected field '{field}'")
    results = data.get("results")
    if not isinstance(results, list):
        add(("results",) if "results" in data else (), "'results' missing or not a list")
        return None, problems
    fmt: RunFormat = (
        "biogen2025" if any(isinstance(r, dict) and "responses" in r for r in results) else "biogen2024"
    )
    seen: set[str] = set()
    for i, entry in enumerate(results):
        at = ("results", i)
        if not isinstance(entry, dict):
            add(at, "expected an object")
            continue
        tid = entry.get("topic_id")
        if not isinstance(tid, str) or not tid.strip():
            add((*at, "topic_id") if "topic_id" in entry else at, "'topic_id' missing or not a string")
        elif tid in seen:
            add((*at, "topic_id"), f"topic {tid} appears twice")
        else:
            seen.add(tid)
        check = _check_2024 if fmt == "biogen2024" else _check_2025
        check(entry, at, add)
    if topics is not None:
        missing = [t for t in topics if t not in seen]
        if missing:
            add(("results",), f"{len(missing)} topics missing: {', '.join(missing[:10])}")
        unknown = sorted(seen - set(topics))
        if unknown:
            add(("results",), f"unknown topic ids: {', '.join(unknown[:10])}")
    return fmt, problems


def _check_2024(entry: dict[str, Any], at: tuple[Any, ...], add: Any) -> None:
    for field in entry:
        if field not in ("topic_id", "answer", "references"):
            add((*at, field), f"unexpected field '{field}'")
    answer, refs = entry.get("answer"), entry.get("references")
    if not isinstance(answer, str):
        add((*at, "answer") if "answer" in entry else at, "'answer' missing or not a string")
        return
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        add(
            (*at, "references") if "references" in entry else at,
            "'references' missing or not a list of strings",
        )
        return
    for j, ref in enumerate(refs):
        if not _PMID.match(ref):
            add((*at, "references", j), f"'{ref}' is not a PMID")
        elif ref in refs[:j]:
            add((*at, "references", j), f"PMID {ref} listed twice")
    for message in _answer_problems_2024({"answer": answer, "references": refs}):
        field = "references" if message.startswith("references") else "answer"
        add((*at, field), message)


def _check_2025(entry: dict[str, Any], at: tuple[Any, ...], add: Any) -> None:
    for field in entry:
        if field not in ("topic_id", "responses"):
            add((*at, field), f"unexpected field '{field}'")
    responses = entry.get("responses")
    if not isinstance(responses, list):
        add((*at, "responses") if "responses" in entry else at, "'responses' missing or not a list")
        return
    words = 0
    for j, response in enumerate(responses):
        where = (*at, "responses", j)
        if not isinstance(response, dict) or not isinstance(response.get("text"), str):
            add(where, "expected an object with 'text' (string) and 'citations' (list of PMIDs)")
            continue
        if not response["text"].strip():
            add((*where, "text"), "empty sentence")
        words += _words(response["text"])
        cites = response.get("citations")
        if not isinstance(cites, list) or not all(isinstance(c, str) and _PMID.match(c) for c in cites):
            add(
                (*where, "citations") if "citations" in response else where,
                "'citations' must be a list of PMID strings",
            )
            continue
        if len(cites) > LIMITS["biogen2025"].max_citations:
            add(
                (*where, "citations"),
                f"{len(cites)} PMIDs; at most {LIMITS['biogen2025'].max_citations} per sentence",
            )
        if len(set(cites)) != len(cites):
            add((*where, "citations"), "a PMID is cited twice")
        for field in response:
            if field not in ("text", "citations"):
                add((*where, field), f"unexpected field '{field}'")
    if words > LIMITS["biogen2025"].max_words:
        add((*at, "responses"), f"{words} words; at most {LIMITS['biogen2025'].max_words}")
