"""Nugget precision and recall: nuggetize the answer into clauses; score each gold nugget against the whole
answer; P(match) from a 1-D Bayesian Gaussian mixture over that score.

Two scores (`evaluator.nugget_score`):
- "token-recall" (default, no LLM): the nugget's idf-weighted token recall against the whole answer
  (BERTScore recall). Whole-answer recall, not a clause-to-nugget cosine: a physician's statement is often
  spread over two clauses of an answer (bench/kqa_token_recall.py).
- "llm": the configured LLM's P(yes) that the answer states the nugget (`judges.NuggetJudge`), as a logit,
  stacked with the token recall by a logistic regression fitted on K-QA's physician labels (`stack`). It agrees
  better with the physicians on LLM answers, at one LLM call per (nugget, answer) (bench/kqa_llm_matcher.py).
  Its mixture has one shared variance ("tied"), so P(match) rises with the score: with a variance each, the
  wider component also won the far end of the LLM's skewed logits, and P(match) fell again there; and a
  symmetric Dirichlet prior on the weights, which keeps both components (see `fit_mixture`).
The clause carrying a matched nugget is the one with the nugget's highest own token recall, for either score.
The fitted mixture, threshold and idf table live in a versioned JSON artifact (`MatchModel`), written by
`biocite calibrate nuggets` (see `calibrate.py`); never pickled, so it loads across library versions.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from biocite.embedder import TokenVectors
from biocite.errors import ModelError
from biocite.files import atomic_write_text
from biocite.runformats import strip_inline_citations as strip_citations
from biocite.sentences import BULLET, split_text

ARTIFACT_KIND = "biocite.nugget_matcher"
ARTIFACT_VERSION = 2  # version 1 scored the cosine of (answer clause, gold nugget), matched one to one
SCORE = "token-recall"
LLM_SCORE = "llm-yes"  # token recall stacked with the logit of the LLM's P(yes) that the answer states it
LOGIT_CLIP = 9.0  # |logit| cap: P(yes) of exactly 0 or 1 from a rounded top-logprob stays finite

# P(yes) that an answer states a gold nugget: (answer text, nugget) -> probability, None when undetermined
YesProbability = Callable[[str, str], float | None]


def yes_logit(p: float) -> float:
    """Log-odds of P(yes), clipped: what the LLM matcher's stack reads."""
    eps = 1.0 / (1.0 + math.exp(LOGIT_CLIP))
    q = min(max(p, eps), 1.0 - eps)
    return math.log(q / (1.0 - q))


def stacked_score(stack: Sequence[float], recall: float, p_yes: float) -> float:
    """The LLM matcher's score: a logistic stack (weights, bias) of the token recall and the P(yes) logit."""
    w_recall, w_llm, bias = stack
    return w_recall * recall + w_llm * yes_logit(p_yes) + bias


def answer_text(answer_nuggets: Sequence[str]) -> str:
    """The whole answer as the LLM matcher reads it: its clauses, in order (calibration reads the same)."""
    return " ".join(answer_nuggets)


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


def fit_mixture(similarities: np.ndarray, seed: int, covariance: str = "full") -> Any:
    """Two components over a 1-D score. "full" (the token-recall matcher): a variance each, under sklearn's
    default Dirichlet-process prior on the weights. "tied" (the LLM matcher): one shared variance, so P(match)
    rises with the score, and a symmetric Dirichlet prior that keeps both components: under the
    Dirichlet-process prior one component took nearly all the weight of the stacked LLM scores on 3 of 11 K-QA
    splits, P(match) was flat, and the matcher matched no nugget (bench/kqa_llm_matcher.py --split-seeds)."""
    from sklearn.mixture import BayesianGaussianMixture

    x = np.asarray(similarities, dtype=np.float64).reshape(-1, 1)
    prior: dict[str, Any] = {}
    if covariance == "tied":
        prior = {
            "weight_concentration_prior_type": "dirichlet_distribution",
            "weight_concentration_prior": 1.0,
        }
    model = BayesianGaussianMixture(
        n_components=2, covariance_type=covariance, max_iter=500, random_state=seed, **prior
    )
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


class Idf(BaseModel):
    """Wordpiece inverse document frequencies over a corpus, log((N + 1) / (df + 1)): rare words weigh more in
    the token recall, so "rivaroxaban" counts for more than "the"."""

    corpus: str
    n_docs: int
    df: dict[str, int]  # wordpiece id -> documents containing it (ids absent: none)

    _table: dict[int, float] | None = None

    @classmethod
    def of_documents(cls, wordpieces: Sequence[Sequence[int]], corpus: str) -> Idf:
        df: Counter[int] = Counter()
        for ids in wordpieces:
            df.update(set(ids))
        return cls(corpus=corpus, n_docs=len(wordpieces), df={str(k): v for k, v in sorted(df.items())})

    def weights(self, ids: np.ndarray) -> np.ndarray:
        if self._table is None:
            self._table = {int(k): math.log((self.n_docs + 1) / (v + 1)) for k, v in self.df.items()}
        unseen = math.log(self.n_docs + 1)
        return np.array([self._table.get(int(i), unseen) for i in ids], dtype=np.float64)


def token_recall(nugget: TokenVectors, clauses: Sequence[TokenVectors], idf: Idf) -> tuple[float, np.ndarray]:
    """BERTScore recall (Zhang et al., 2020) of a gold nugget: each of its wordpieces takes its best cosine to
    any wordpiece of the answer, and the mean is idf-weighted. Returns the whole answer's recall and each
    clause's own (which clause carries the nugget)."""
    if not clauses or len(nugget.ids) == 0:
        return 0.0, np.zeros(len(clauses))
    w = idf.weights(nugget.ids)
    w = w / max(float(w.sum()), 1e-12)
    sims = nugget.vectors @ np.concatenate([c.vectors for c in clauses]).T
    bounds = np.cumsum([0, *(len(c.ids) for c in clauses)])
    per_clause = np.array(
        [
            float(sims[:, a:b].max(axis=1) @ w) if b > a else 0.0
            for a, b in zip(bounds, bounds[1:], strict=False)
        ]
    )
    return float(sims.max(axis=1) @ w), per_clause


class MatchModel(BaseModel):
    """The calibrated matcher: a mixture over the score (token recall, or its stack with the LLM's P(yes)
    logit), which component means "match", a threshold on P(match), and the idf table of the token recall."""

    kind: str = ARTIFACT_KIND
    version: int = ARTIFACT_VERSION
    embedder: str = "minilm"
    score: str = SCORE
    llm: str | None = None  # the LLM whose P(yes) the mixture was fitted on (score "llm-yes")
    stack: list[float] | None = None  # score "llm-yes": weights of (token recall, P(yes) logit) and the bias
    idf: Idf
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

    def stacked(self, recall: float, p_yes: float) -> float:
        if self.stack is None:
            raise ModelError(f"the nugget matcher {self.model_id} has no stack weights; refit it")
        return stacked_score(self.stack, recall, p_yes)

    def p_match(self, scores: np.ndarray) -> np.ndarray:
        if self._model is None:
            self._model = mixture_from_dict(self.mixture)
        x = np.asarray(scores, dtype=np.float64)
        if x.size == 0:
            return x
        return self._model.predict_proba(x.reshape(-1, 1))[:, self.match_component].reshape(x.shape)

    @property
    def model_id(self) -> str:
        score = f"{self.score}:{self.llm}" if self.llm else self.score
        return f"{self.embedder}:{score}:bgmm:{self.fit_data_sha256[:12]}:t{self.threshold:.4f}"

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
        if not is_current(data):
            raise ModelError(
                f"{path}: kind/version {data.get('kind')}/{data.get('version')}, this biocite reads "
                f"{ARTIFACT_KIND}/{ARTIFACT_VERSION}; re-run `biocite calibrate nuggets`"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ModelError(
                f"{path}: a damaged nugget matcher ({exc.error_count()} bad fields); re-run `biocite calibrate nuggets`"
            ) from None


def is_current(data: Any) -> bool:
    """A matcher artifact this biocite reads (version 1 scored clause cosines)."""
    return (
        isinstance(data, dict)
        and data.get("kind") == ARTIFACT_KIND
        and data.get("version") == ARTIFACT_VERSION
    )


def match_component_of(mixture: Any) -> int:
    """The component with the higher mean score is the "match" component."""
    return int(np.argmax(np.asarray(mixture.means_).ravel()))


# --- matching -----------------------------------------------------------------------------------------


class NuggetResult(BaseModel):
    answer_nuggets: list[str]
    gold_nuggets: list[str]
    # (answer clause carrying it, gold index, score, P(match)), one per matched gold nugget; the score is the
    # token recall, or the LLM's P(yes) with the LLM matcher
    alignments: list[tuple[int, int, float, float]]
    precision: float | None  # None when the answer has no nuggets
    recall: float | None  # None when there are no gold nuggets
    nuggetizer: str
    undetermined: int = 0  # gold nuggets the LLM matcher could not judge (counted unmatched, never guessed)


EncodeTokens = Callable[[Sequence[str]], list[TokenVectors]]


def score_nuggets(
    answer_nuggets: list[str],
    gold_nuggets: list[str],
    encode_tokens: EncodeTokens,
    matcher: MatchModel,
    nuggetizer: str = "clause",
    yes_probability: YesProbability | None = None,
) -> NuggetResult:
    """Recall: gold nuggets whose score against the whole answer clears the threshold. Precision: answer
    clauses that carry a matched gold nugget (the clause with the nugget's highest own token recall)."""
    tokens = encode_tokens([*answer_nuggets, *gold_nuggets])
    clauses, gold = tokens[: len(answer_nuggets)], tokens[len(answer_nuggets) :]
    recalls = [token_recall(g, clauses, matcher.idf) for g in gold]
    shown = [whole for whole, _ in recalls]
    undetermined = 0
    if matcher.score == LLM_SCORE:
        if yes_probability is None:
            raise ModelError(f"the nugget matcher {matcher.model_id} needs its LLM ({matcher.llm})")
        text = answer_text(answer_nuggets)
        yes = [yes_probability(text, g) if answer_nuggets else 0.0 for g in gold_nuggets]
        undetermined = sum(p is None for p in yes)
        p = matcher.p_match(np.array([matcher.stacked(r, x or 0.0) for r, x in zip(shown, yes, strict=True)]))
        p[[k for k, x in enumerate(yes) if x is None]] = 0.0
        shown = [x if x is not None else 0.0 for x in yes]
    else:
        p = matcher.p_match(np.array(shown))
    alignments = [
        (int(np.argmax(per_clause)), k, round(shown[k], 4), round(float(p[k]), 4))
        for k, (_, per_clause) in enumerate(recalls)
        if clauses and p[k] >= matcher.threshold
    ]
    carrying = {a[0] for a in alignments}
    return NuggetResult(
        answer_nuggets=answer_nuggets,
        gold_nuggets=gold_nuggets,
        alignments=alignments,
        precision=len(carrying) / len(answer_nuggets) if answer_nuggets else None,
        recall=len(alignments) / len(gold_nuggets) if gold_nuggets else None,
        nuggetizer=nuggetizer,
        undetermined=undetermined,
    )


def parse_llm_nuggets(raw: str) -> list[str]:
    """Lines of an LLM nuggetizer answer: bullets or numbered items, at least 3 words each."""
    out = []
    for line in raw.splitlines():
        line = BULLET.sub("", line).strip().strip('"')
        if len(line.split()) >= 3 and not line.endswith(":"):
            out.append(line)
    return out
