"""Nugget precision and recall: nuggetize, embed, P(match) from a 1-D Bayesian Gaussian mixture, 1:1 matching.

The fitted mixture and threshold live in a versioned JSON artifact (`MatchModel`), written by
`biocite calibrate nuggets` (see `calibrate.py`); never pickled, so it loads across library versions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from biocite.errors import ModelError
from biocite.files import atomic_write_text
from biocite.runformats import strip_inline_citations as strip_citations
from biocite.sentences import BULLET, split_text

ARTIFACT_KIND = "biocite.nugget_matcher"
ARTIFACT_VERSION = 1

# Clause boundaries: semicolons, and a comma followed by a coordinating/contrasting word.
_CLAUSE = re.compile(r";\s+|,\s+(?=(?:and|but|while|whereas|although|though|however|which|so)\s)", re.I)
MIN_CLAUSE_WORDS = 4


def clause_nuggets(text: str) -> list[str]:
    """Deterministic nuggetizer: sentences, then clauses; fragments shorter than 4 words join their left
    neighbour (or the next clause when first)."""
    nuggets: list[str] = []
    for sentence in split_text(strip_citations(text)):
        parts = [p.strip(" ,;") for p in _CLAUSE.split(sentence) if p.strip(" ,;")]
        merged: list[str] = []
        for part in parts:
            if merged and len(part.split()) < MIN_CLAUSE_WORDS:
                merged[-1] = f"{merged[-1]}, {part}"
            elif merged and len(merged[-1].split()) < MIN_CLAUSE_WORDS:
                merged[-1] = f"{merged[-1]}, {part}"
            else:
                merged.append(part)
        nuggets.extend(merged)
    return nuggets


# --- the mixture --------------------------------------------------------------------------------------

_BGMM_FITTED = (
    "weights_",
    "weight_concentration_",
    "mean_precision_",
    "means_",
    "degrees_of_freedom_",
    "covariances_",
    "precisions_cholesky_",
    "precisions_",
)


def fit_mixture(similarities: np.ndarray, seed: int) -> Any:
    from sklearn.mixture import BayesianGaussianMixture

    x = np.asarray(similarities, dtype=np.float64).reshape(-1, 1)
    model = BayesianGaussianMixture(n_components=2, covariance_type="full", max_iter=500, random_state=seed)
    return model.fit(x)


def mixture_to_dict(model: Any) -> dict[str, Any]:
    params = {k: v for k, v in model.get_params().items() if isinstance(v, (int, float, str, type(None)))}
    fitted: dict[str, Any] = {}
    for name in _BGMM_FITTED:
        value = getattr(model, name)
        fitted[name] = [np.asarray(v).tolist() for v in value] if isinstance(value, tuple) else value.tolist()
    fitted["n_features_in_"] = int(model.n_features_in_)
    fitted["converged_"] = bool(model.converged_)
    return {"params": params, "fitted": fitted}


def mixture_from_dict(data: dict[str, Any]) -> Any:
    from sklearn.mixture import BayesianGaussianMixture

    model = BayesianGaussianMixture(**data["params"])
    for name, value in data["fitted"].items():
        if name == "weight_concentration_" and model.weight_concentration_prior_type == "dirichlet_process":
            setattr(model, name, tuple(np.asarray(v) for v in value))
        elif isinstance(value, list):
            setattr(model, name, np.asarray(value, dtype=np.float64))
        else:
            setattr(model, name, value)
    return model


class MatchModel(BaseModel):
    """The calibrated matcher: mixture over cosine similarities, which component means "match", threshold."""

    kind: str = ARTIFACT_KIND
    version: int = ARTIFACT_VERSION
    embedder: str = "minilm"
    mixture: dict[str, Any]
    match_component: int
    threshold: float  # on P(match)
    fit_data_sha256: str
    split: dict[str, Any] = Field(default_factory=dict)
    selection: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(default_factory=dict)
    library_versions: dict[str, str] = Field(default_factory=dict)
    created: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    _model: Any = None

    def p_match(self, similarities: np.ndarray) -> np.ndarray:
        if self._model is None:
            self._model = mixture_from_dict(self.mixture)
        sims = np.asarray(similarities, dtype=np.float64)
        if sims.size == 0:
            return sims.astype(np.float64)
        proba = self._model.predict_proba(sims.reshape(-1, 1))[:, self.match_component]
        return proba.reshape(sims.shape)

    @property
    def model_id(self) -> str:
        return f"{self.embedder}:bgmm:{self.fit_data_sha256[:12]}:t{self.threshold:.4f}"

    def save(self, path: Path) -> None:
        atomic_write_text(path, self.model_dump_json(indent=2))

    @classmethod
    def load(cls, path: Path) -> MatchModel:
        if not path.is_file():
            raise ModelError(f"no nugget matcher at {path}; run `biocite calibrate nuggets` first")
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ModelError(f"{path}: unreadable JSON ({exc.msg}, line {exc.lineno})") from None
        if data.get("kind") != ARTIFACT_KIND or data.get("version") != ARTIFACT_VERSION:
            raise ModelError(
                f"{path}: kind/version {data.get('kind')}/{data.get('version')}, this biocite reads "
                f"{ARTIFACT_KIND}/{ARTIFACT_VERSION}; re-run `biocite calibrate nuggets`"
            )
        return cls.model_validate(data)


def match_component_of(mixture: Any) -> int:
    """The component with the higher mean similarity is the "match" component."""
    return int(np.argmax(np.asarray(mixture.means_).ravel()))


# --- matching -----------------------------------------------------------------------------------------


@dataclass
class Alignment:
    answer_index: int
    gold_index: int
    similarity: float
    p_match: float


def greedy_match(similarity: np.ndarray, p_match: np.ndarray, threshold: float) -> list[Alignment]:
    """One-to-one greedy matching: pairs in decreasing similarity, kept while both sides are free and
    P(match) >= threshold."""
    if similarity.size == 0:
        return []
    order = np.argsort(-similarity, axis=None, kind="stable")
    rows, cols = np.unravel_index(order, similarity.shape)
    used_a: set[int] = set()
    used_g: set[int] = set()
    out: list[Alignment] = []
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        if i in used_a or j in used_g or p_match[i, j] < threshold:
            continue
        used_a.add(i)
        used_g.add(j)
        out.append(Alignment(i, j, float(similarity[i, j]), float(p_match[i, j])))
        if len(used_a) == similarity.shape[0] or len(used_g) == similarity.shape[1]:
            break
    return out


class NuggetResult(BaseModel):
    answer_nuggets: list[str]
    gold_nuggets: list[str]
    alignments: list[tuple[int, int, float, float]]  # (answer index, gold index, similarity, P(match))
    precision: float | None  # None when the answer has no nuggets
    recall: float | None  # None when there are no gold nuggets
    nuggetizer: str


Embed = Callable[[Sequence[str]], np.ndarray]


def score_nuggets(
    answer_nuggets: list[str],
    gold_nuggets: list[str],
    embed: Embed,
    matcher: MatchModel,
    nuggetizer: str = "clause",
) -> NuggetResult:
    a = embed(answer_nuggets)
    g = embed(gold_nuggets)
    sim = (
        a @ g.T
        if len(answer_nuggets) and len(gold_nuggets)
        else np.zeros((len(answer_nuggets), len(gold_nuggets)))
    )
    aligned = greedy_match(sim, matcher.p_match(sim), matcher.threshold)
    return NuggetResult(
        answer_nuggets=answer_nuggets,
        gold_nuggets=gold_nuggets,
        alignments=[
            (x.answer_index, x.gold_index, round(x.similarity, 4), round(x.p_match, 4)) for x in aligned
        ],
        precision=len(aligned) / len(answer_nuggets) if answer_nuggets else None,
        recall=len(aligned) / len(gold_nuggets) if gold_nuggets else None,
        nuggetizer=nuggetizer,
    )


def parse_llm_nuggets(raw: str) -> list[str]:
    """Lines of an LLM nuggetizer answer: bullets or numbered items, at least 3 words each."""
    out = []
    for line in raw.splitlines():
        line = BULLET.sub("", line).strip().strip('"')
        if len(line.split()) >= 3 and not line.endswith(":"):
            out.append(line)
    return out
