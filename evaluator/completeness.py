"""The completeness judge: (question, answer sentence) -> Required / Unnecessary / Borderline (K-QA proxy labels).

A class-balanced logistic regression over two numbers: the bi-encoder cosine of question and sentence, and the
sentence's length (log words). It replaces a fine-tuned MiniLM head that never said Borderline (held-out F1 0.0,
macro-F1 0.511): nice-to-have statements are fewer than must-haves and read much like them, so the head's argmax
settled on Required. Chosen by 2-fold cross-validation within the K-QA TRAIN questions
(`bench/completeness_judge.py`): fine-tuned heads stacked with the same two numbers tied it (0.687 vs 0.684), so
the judge that fits in seconds, with no fine-tuning, ships. Its C comes from 5-fold CV on the train rows.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from biocite.embedder import Embedder
from biocite.errors import ModelError
from biocite.evaluator.heads import COMPLETENESS_HEAD_LABELS, completeness_pairs, kqa_split
from biocite.heads import (
    META_FILE,
    MODEL_SUBDIR,
    LinearModel,
    PairClassifier,
    choose_c,
    data_fingerprint,
    macro_report,
)

KIND = "completeness-judge"
VERSION = 1
JUDGE_FILE = "judge.json"
FEATURES = ["cosine", "log_words"]
C_GRID = (0.1, 1.0, 10.0)


def pair_cosine(embedder: Embedder, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    q = embedder.encode([a for a, _ in pairs])
    s = embedder.encode([b for _, b in pairs])
    return np.asarray((q * s).sum(axis=1), dtype=np.float64)


def features(embedder: Embedder, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    words = np.log1p([len(b.split()) for _, b in pairs])
    return np.column_stack([pair_cosine(embedder, pairs), words])


class CompletenessModel:
    """The judge; `labels`, `meta` and `predict_proba` as a trained head's, so `HeadJudge` serves it."""

    def __init__(self, linear: LinearModel) -> None:
        self.linear = linear
        self.labels = list(linear.labels)
        self.meta: dict[str, Any] = dict(linear.meta)
        self._embedder: Embedder | None = None

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = Embedder(str(self.meta.get("embedder", "minilm")))
        return self._embedder

    def predict_proba(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        if not pairs:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        return self.linear.predict_proba(features(self.embedder, pairs))

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> list[str]:
        return [self.labels[i] for i in self.predict_proba(pairs, batch_size).argmax(axis=1)]

    @classmethod
    def load(cls, folder: Path) -> CompletenessModel | None:
        """The judge in `folder`; None when it holds none of this version (train one)."""
        path = folder / JUDGE_FILE
        if not path.is_file():
            return None
        linear = LinearModel.load(path, kind=KIND, version=VERSION, labels=COMPLETENESS_HEAD_LABELS)
        return cls(linear) if linear is not None else None


def load_judge_model(folder: Path) -> CompletenessModel | PairClassifier:
    """The judge in `folder`, or the fine-tuned head a user (or an earlier biocite) put there."""
    if (folder / JUDGE_FILE).is_file():
        model = CompletenessModel.load(folder)
        if model is None:
            raise ModelError(f"{folder / JUDGE_FILE}: a completeness judge of another version; retrain it")
        return model
    return PairClassifier.load(folder)


def is_current(folder: Path) -> bool:
    return CompletenessModel.load(folder) is not None


def train_completeness(
    folder: Path, *, seed: int = 13, embedder: str = "minilm", owned: bool = False
) -> dict[str, Any]:
    """Fit on the K-QA train questions, score the held-out ones, save `folder/judge.json`; the meta. In a
    folder biocite `owned` (the default path), a fine-tuned head saved there before is deleted."""
    started = time.perf_counter()
    labels = COMPLETENESS_HEAD_LABELS
    train_q, test_q = kqa_split(seed)
    pairs, gold = completeness_pairs(train_q, seed)
    emb = Embedder(embedder)
    x, y = features(emb, pairs), np.asarray([labels.index(v) for v in gold])

    def fit(a: np.ndarray, b: np.ndarray, c: float) -> LinearModel:
        return LinearModel.fit(a, b, kind=KIND, version=VERSION, labels=labels, c=c, seed=seed)

    def macro(g: np.ndarray, p: np.ndarray) -> float:
        return float(macro_report([labels[i] for i in g], [labels[i] for i in p], labels)["macro_f1"])

    c, cv = choose_c(x, y, C_GRID, fit, macro, seed)
    test_pairs, test_gold = completeness_pairs(test_q, seed + 1)
    model = CompletenessModel(fit(x, y, c))
    model._embedder = emb
    report = macro_report(test_gold, model.predict(test_pairs), labels)
    meta = {
        "task": "completeness",
        "embedder": embedder,
        "features": FEATURES,
        "c": c,
        "c_cv_macro_f1": {str(k): v for k, v in cv.items()},
        "train_data_sha256": data_fingerprint([KIND, VERSION, *zip(pairs, gold, strict=True)]),
        "metrics": {"held_out": "K-QA held-out questions (proxy labels)", **report},
        "seconds": round(time.perf_counter() - started, 1),
    }
    folder.mkdir(parents=True, exist_ok=True)
    model.linear.model_copy(update={"meta": meta}).save(folder / JUDGE_FILE)
    if owned:
        _remove_replaced_head(folder)
    return meta


def _remove_replaced_head(folder: Path) -> None:
    """Delete an earlier biocite's fine-tuned head (about 90 MB): `load_judge_model` reads the judge first, so
    those files would never be read again. A folder the user named is left as it is."""
    shutil.rmtree(folder / MODEL_SUBDIR, ignore_errors=True)
    (folder / META_FILE).unlink(missing_ok=True)
