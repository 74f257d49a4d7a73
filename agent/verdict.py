"""The bottom line (issue 12): question type, and for yes/no questions a verdict with a probability.

`question_type` is a rule on the question's template (an auxiliary verb opening the question or one of its
clauses -> yes/no; which/what ... are -> list; what/who/when/where/which -> factoid; else open).

`VerdictModel` is a trained multinomial logistic regression over features of the answer-bearing evidence
(the top sentences by P(answer-bearing), `agent/findings.py`), so it works in extractive mode too:
- negation, hedging and positive-finding cue counts, weighted by each sentence's P(answer-bearing);
- whether the question itself is negated;
- the MiniLM embedding of the weighted evidence and its product with the question's embedding.
Trained on the PubMedQA development questions of the TRAIN part of the split by question (the reranker's:
seed 13, 60/40), with yes/no/maybe labels; maybe -> "mixed". "insufficient" is the verdict of an abstention
or of evidence that leaves a key concept uncovered.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from biocite import pubmedqa
from biocite.agent.evidence import TextEncoder
from biocite.agent.findings import agent_models_dir
from biocite.heads import LinearArtifact, LinearModel, choose_c
from biocite.pubmedqa import SPLIT_SEED, TRAIN_SHARE, load_questions, split_questions
from biocite.records import QuestionType, Verdict

ARTIFACT_VERSION = 2  # 2: C chosen by cross-validation on train; the saved layout is biocite.heads.LinearModel
KIND = "verdict"
LABELS: list[Verdict] = ["yes", "no", "mixed"]
PUBMEDQA_TO_VERDICT: dict[str, Verdict] = {"yes": "yes", "no": "no", "maybe": "mixed"}

_AUX = r"(?:is|are|was|were|do|does|did|can|could|should|would|will|has|have|had|may|might|must|shall)"
_YES_NO = re.compile(rf"^\s*(?:[^?:]*?:\s*)?{_AUX}\b", re.IGNORECASE)
_LIST = re.compile(
    r"^\s*(?:which|what)\s+(?:\w+\s+){0,3}(?:are|were)\b|^\s*(?:list|name)\b"
    r"|^\s*(?:which|what)\s+(?!is\b|was\b|does\b|has\b)(?:\w+\s+){0,2}?\w+s\s",  # "which drugs ..."
    re.IGNORECASE,
)
_FACTOID = re.compile(r"^\s*(?:what|which|who|whom|when|where|how (?:many|much|long|often))\b", re.IGNORECASE)


def question_type(question: str) -> QuestionType:
    text = question.strip()
    clauses = [text, *[c for c in re.split(r"[:;.]\s+", text)[1:] if c]]
    if any(_YES_NO.match(c) for c in clauses):
        return "yes/no"
    if _LIST.match(text):
        return "list"
    if _FACTOID.match(text):
        return "factoid"
    if text.endswith("?") and not re.match(r"^\s*(?:how|why)\b", text, re.IGNORECASE):
        return "yes/no"  # PubMedQA-style titles: "Young-Burgess classification: does it predict ...?"
    return "open"


_CUES: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        "negative": r"\b(?:no|not|neither|nor|none|failed|unchanged|unrelated|independent of|without)\b|n't\b",
        "no_difference": r"\b(?:no (?:significant |statistically significant )?(?:difference|association|"
        r"effect|correlation|relationship|benefit|improvement|change)|did not (?:differ|improve|reduce|"
        r"increase|affect|predict|change)|not (?:significantly |statistically )?(?:different|associated|"
        r"related|correlated|predictive|effective|superior)|similar|comparable)\b",
        "hedge": r"\b(?:may|might|could|possibl\w*|unclear|uncertain|inconclusive|controversial|limited|"
        r"further (?:studies|research|investigation)|larger|warrant\w*|remains?|preliminary|trend)\b",
        "positive": r"\b(?:significant(?:ly)?|effective|improv\w*|reduc\w*|increas\w*|associated with|"
        r"superior|beneficial|predict\w*|safe|feasible|useful|important|higher|lower|better)\b",
        "numbers": r"\d",
    }.items()
}
_NEGATED_QUESTION = re.compile(rf"\b{_AUX}n't\b|\b{_AUX}\s+(?:\w+\s+)?not\b|\bno\b", re.IGNORECASE)


def evidence_features(
    question: str,
    question_vector: np.ndarray,
    texts: Sequence[str],
    weights: Sequence[float],
    vectors: np.ndarray,
) -> np.ndarray:
    """One feature row for (question, weighted evidence sentences)."""
    w = np.asarray(weights, dtype=np.float32)
    w = w / w.sum() if w.sum() > 0 else np.full(len(texts), 1 / max(len(texts), 1), dtype=np.float32)
    cues = np.array(
        [[min(len(p.findall(t)), 3) / 3 for p in _CUES.values()] for t in texts], dtype=np.float32
    )
    weighted = w @ cues if len(texts) else np.zeros(len(_CUES), dtype=np.float32)
    top = cues[0] if len(texts) else np.zeros(len(_CUES), dtype=np.float32)
    mean = w @ vectors if len(texts) else np.zeros_like(question_vector)
    negated = float(bool(_NEGATED_QUESTION.search(question)))
    extra = np.array([negated, float(np.max(weights)) if len(weights) else 0.0], dtype=np.float32)
    return np.hstack([weighted, top, extra, mean, mean * question_vector]).astype(np.float32)


@dataclass(frozen=True)
class VerdictModel(LinearArtifact):
    """yes / no / mixed: a multinomial logistic regression over standardised `evidence_features`."""

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        return self.linear.predict_proba(features)

    def predict(
        self, question: str, texts: Sequence[str], weights: Sequence[float], encode: TextEncoder
    ) -> tuple[Verdict, float, dict[str, float]]:
        """(verdict, its probability, all probabilities) from the answer-bearing evidence sentences."""
        vectors = encode.encode([question, *texts])
        row = evidence_features(question, vectors[0], texts, weights, vectors[1:])
        probs = self.probabilities(row[None, :])[0]
        best = int(np.argmax(probs))
        return (
            LABELS[best],
            float(probs[best]),
            {k: round(float(p), 4) for k, p in zip(LABELS, probs, strict=True)},
        )

    @classmethod
    def load(cls, path: Path) -> VerdictModel | None:
        """None for an artifact of another version, label set or layout (the caller retrains it)."""
        linear = LinearModel.load(path, kind=KIND, version=ARTIFACT_VERSION, labels=LABELS)
        return None if linear is None else cls(linear)


def top_evidence(
    probabilities: np.ndarray, texts: Sequence[str], k: int = 3
) -> tuple[list[str], list[float]]:
    order = np.argsort(-probabilities, kind="stable")[:k]
    return [texts[i] for i in order], [float(probabilities[i]) for i in order]


def training_rows(
    pmids: Sequence[str], encoder: TextEncoder, findings: Any, store: Any, k: int = 3
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Feature rows and labels for PubMedQA questions: the source abstract's top-k answer-bearing sentences
    (as the agent would rank them), from the index's stored sentences."""
    items = {item.pmid: item for item in pubmedqa.read_items()}
    rows, labels, kept = [], [], []
    for pmid in pmids:
        sentences = store.sentences(pmid)
        if not sentences:
            continue
        question = items[pmid].question
        probs = findings.score(question, sentences, [len(sentences)] * len(sentences), encoder)
        texts, weights = top_evidence(probs, [s.text for s in sentences], k)
        vectors = encoder.encode([question, *texts])
        rows.append(evidence_features(question, vectors[0], texts, weights, vectors[1:]))
        labels.append(LABELS.index(PUBMEDQA_TO_VERDICT[items[pmid].final_decision]))
        kept.append(pmid)
    if not rows:
        raise ValueError("no training abstract in the index")
    return np.vstack(rows), np.asarray(labels), kept


C_GRID = (0.003, 0.01, 0.03, 0.1)  # regularisation candidates, chosen among by cross-validation on train


def fit_verdict(x: np.ndarray, y: np.ndarray, c: float, seed: int = 13) -> LinearModel:
    return LinearModel.fit(
        x, y, kind=KIND, version=ARTIFACT_VERSION, labels=LABELS, c=c, max_iter=3000, seed=seed
    )


def train_verdict(
    encoder: TextEncoder, embedder_name: str, findings: Any, store: Any, *, c: float | None = None
) -> VerdictModel:
    """C: given, or chosen by 5-fold cross-validation on the training rows (macro-F1)."""

    started = time.perf_counter()
    train, _ = split_questions(load_questions())
    x, y, kept = training_rows([q.pmid for q in train], encoder, findings, store)
    if len(kept) < 50:
        raise ValueError("the index holds fewer than 50 training abstracts")
    cv_scores = None
    if c is None:
        from sklearn.metrics import f1_score

        c, cv_scores = choose_c(x, y, C_GRID, fit_verdict, partial(f1_score, average="macro"))
    fitted = fit_verdict(x, y, c)
    meta = {
        "embedder": embedder_name,
        "split": {"seed": SPLIT_SEED, "train_share": TRAIN_SHARE, "train_questions": len(kept)},
        "label_counts": {k: int((y == i).sum()) for i, k in enumerate(LABELS)},
        "C": c,
        "C_cv_scores": cv_scores,
        "train_seconds": round(time.perf_counter() - started, 1),
    }
    return VerdictModel(fitted.model_copy(update={"meta": meta}))


def load_verdict(
    settings: Any, findings: Any, encoder: TextEncoder, store: Any, *, train_if_missing: bool = True
) -> VerdictModel | None:
    """The cached verdict model for the findings model's embedder; trained and saved on first use."""

    path = agent_models_dir(settings) / f"verdict-{findings.embedder}.json"
    if path.is_file() and (model := VerdictModel.load(path)) is not None:
        return model
    # missing, or of another version or layout (written by an older biocite): trained and replaced
    if not train_if_missing:
        return None
    try:
        model = train_verdict(encoder, findings.embedder, findings, store)
    except ValueError:  # an index without enough of the training abstracts
        return None
    model.save(path)
    return model
