"""PubMedQA development questions (data/pubmedqa): the one loader, and the one split by question that
the reranker, the answer models and the benchmarks share (sorted by PMID, seeded shuffle, 60/40)."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from biocite.errors import InputError
from biocite.settings import DATA_DIR

PUBMEDQA_PATH = DATA_DIR / "pubmedqa" / "dev_questions.json"
SPLIT_SEED = 13
TRAIN_SHARE = 0.6


class Question(BaseModel):
    pmid: str  # the source abstract
    question: str


def load_questions(path: Path = PUBMEDQA_PATH) -> list[Question]:
    """PubMedQA questions keyed by source PMID, sorted by PMID (the order the split is drawn from)."""
    if not path.is_file():
        raise InputError(f"PubMedQA questions not found: {path}")
    try:
        raw = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {exc.lineno}: {exc.msg}") from None
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected an object keyed by PMID")
    questions = []
    for pmid, item in raw.items():
        text = item.get("question") if isinstance(item, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{path}: PMID {pmid}: missing field 'question'")
        questions.append(Question(pmid=str(pmid), question=text.strip()))
    return sorted(questions, key=lambda q: q.pmid)


def split_questions(
    questions: Sequence[Question], seed: int = SPLIT_SEED, train_share: float = TRAIN_SHARE
) -> tuple[list[Question], list[Question]]:
    """(train, validation), split by question with a fixed seed; independent of the input order."""
    ordered = sorted(questions, key=lambda q: q.pmid)
    random.Random(seed).shuffle(ordered)
    cut = round(len(ordered) * train_share)
    return ordered[:cut], ordered[cut:]
