"""K-QA (MIT, github.com/Itaymanes/K-QA): questions, physician answers, must-have / nice-to-have statements,
and 399 physician entailment labels of LLM answers. Split by question with a seeded hash, so every file
that mentions a question puts it on the same side."""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from biocite.errors import InputError
from biocite.settings import DATA_DIR

KQA_DIR = DATA_DIR / "kqa"
TEST_FRACTION = 0.4


@dataclass
class KQAQuestion:
    question: str
    answer: str
    must_have: list[str]
    nice_to_have: list[str]


@dataclass
class NLILabel:
    question: str
    model: str
    answer: str
    claim: str
    category: str  # Must_have | Nice_to_have
    label: str  # Entailment | Neutral | Contradiction (physicians' majority)
    annotators: tuple[str, ...] = ()  # each physician's own label (label_0, label_1, ...), where given


def normalise(question: str) -> str:
    return " ".join(question.lower().split())


def split_of(question: str, seed: int, test_fraction: float = TEST_FRACTION) -> str:
    digest = hashlib.sha256(f"{seed}:{normalise(question)}".encode()).digest()
    return "test" if int.from_bytes(digest[:8], "big") / 2**64 < test_fraction else "train"


def load_questions(path: Path | None = None) -> list[KQAQuestion]:
    path = path or KQA_DIR / "questions_w_answers.jsonl"
    out = []
    with path.open() as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                out.append(
                    KQAQuestion(
                        row["Question"], row["Free_form_answer"], row["Must_have"], row["Nice_to_have"]
                    )
                )
            except (json.JSONDecodeError, KeyError) as exc:
                raise InputError(f"{path}:{line_no}: bad K-QA row ({exc})") from None
    return out


def load_nli_labels(path: Path | None = None) -> list[NLILabel]:
    path = path or KQA_DIR / "NLI_medical_annotator.csv"
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    need = {"Question", "llm_x", "answer", "claim", "category_x", "majority_label"}
    if rows and not need <= set(rows[0]):
        raise InputError(f"{path}: missing columns {sorted(need - set(rows[0]))}")
    return [
        NLILabel(
            r["Question"],
            r["llm_x"],
            r["answer"],
            r["claim"],
            r["category_x"],
            r["majority_label"],
            tuple(r[k] for k in sorted(r) if k.startswith("label_")),
        )
        for r in rows
    ]
