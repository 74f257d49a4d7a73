"""PubMedQA development questions (data/pubmedqa): the one reader of dev_questions.json, and the one split
by question that the reranker, the answer models and the benchmarks share (sorted by PMID, seeded shuffle,
60/40)."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ValidationError

from biocite.errors import InputError, first_problem
from biocite.settings import DATA_DIR

PUBMEDQA_PATH = DATA_DIR / "pubmedqa" / "dev_questions.json"
SPLIT_SEED = 13
TRAIN_SHARE = 0.6


class Question(BaseModel):
    pmid: str  # the source abstract
    question: str


class Item(BaseModel):
    """One development question as the file holds it (strings unchanged)."""

    pmid: str
    question: str
    long_answer: str = ""
    final_decision: str = ""


def read_items(path: Path = PUBMEDQA_PATH) -> list[Item]:
    """Every question in file order (batch runs and their outputs follow this order)."""
    if not path.is_file():
        raise InputError(f"PubMedQA questions not found: {path}")
    try:
        raw = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {exc.lineno}: {exc.msg}") from None
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected an object keyed by PMID")
    items = []
    for pmid, row in raw.items():
        text = row.get("question") if isinstance(row, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{path}: PMID {pmid}: missing field 'question'")
        try:
            items.append(Item.model_validate({**row, "pmid": str(pmid)}))
        except ValidationError as exc:
            field, why = first_problem(exc)
            raise InputError(f"{path}: PMID {pmid}: field '{field}': {why}") from None
    return items


def long_answers(path: Path = PUBMEDQA_PATH) -> dict[str, str]:
    """The reference long answer of each question, by source PMID."""
    return {item.pmid: item.long_answer for item in read_items(path)}


def load_questions(path: Path = PUBMEDQA_PATH) -> list[Question]:
    """PubMedQA questions keyed by source PMID, sorted by PMID (the order the split is drawn from)."""
    questions = [Question(pmid=i.pmid, question=i.question.strip()) for i in read_items(path)]
    return sorted(questions, key=lambda q: q.pmid)


def split_questions(
    questions: Sequence[Question], seed: int = SPLIT_SEED, train_share: float = TRAIN_SHARE
) -> tuple[list[Question], list[Question]]:
    """(train, validation), split by question with a fixed seed; independent of the input order."""
    ordered = sorted(questions, key=lambda q: q.pmid)
    random.Random(seed).shuffle(ordered)
    cut = round(len(ordered) * train_share)
    return ordered[:cut], ordered[cut:]
