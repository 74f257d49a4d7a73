"""Topic sets the batch runner answers and the evaluator looks questions up in: the one topics loader.

`biogen2024` and `biogen2025` are the TREC BioGen topics shipped in data/biogen (2024: `{"topics": [{id,
question}]}`, 2025: a list of `{id, question}`); `pubmedqa` the PubMedQA development questions in file order.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from biocite import jsonfile, pubmedqa
from biocite.errors import InputError
from biocite.runformats import RunFormat
from biocite.settings import DATA_DIR

BUILTIN_TOPICS = {
    "biogen2024": DATA_DIR / "biogen" / "BioGen2024topics.json",
    "biogen2025": DATA_DIR / "biogen" / "BioGen2025topics.json",
    "pubmedqa": pubmedqa.PUBMEDQA_PATH,
}


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
        topics = [Topic(topic_id=i.pmid, question=i.question) for i in pubmedqa.read_items()]
        return TopicSet(name="pubmedqa", format="biogen2024", topics=topics)
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


def known_questions() -> dict[str, str]:
    """Questions of every built-in topic set that is present, by topic id (BioGen ids win a clash)."""
    out: dict[str, str] = {}
    for spec in ("pubmedqa", "biogen2024", "biogen2025"):
        if BUILTIN_TOPICS[spec].is_file():
            out.update({t.topic_id: t.question for t in load_topics(spec).topics})
    return out
