"""biocite's support model, the one owner of support judgements (agent verifier, evaluator, `biocite check`).

(claim, evidence passage) -> calibrated P(supports | contradicts | neutral | not_relevant), the evidence
sentences best first, and the claim's words inside them as phrases with exact character offsets.

How: the passage is split into sentences (index/sentences.py); a cross-encoder fine-tuned end to end from
the MiniLM backbone (`PairClassifier`) scores (claim, sentence) over the four labels; a multinomial logistic
regression over per-passage features (max / mean of each sentence column, the best sentence's row, number
and word agreement) turns the sentence scores into passage probabilities. The regression is fitted on a
calibration slice of Citation-Integrity TRAIN claims held back from fine-tuning, so it is both the learned
aggregation and the calibration. Training data: `support_data.py`. Artifact: a folder with `model/`,
`meta.json` (data fingerprint, metrics, hyper-parameters) and `aggregator.json`.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import Stemmer
from pydantic import BaseModel, Field

from biocite.embedder import Embedder
from biocite.errors import InputError, ModelError
from biocite.heads import PairClassifier, macro_report
from biocite.models import model_path
from biocite.records import (
    Document,
    Span,  # exact offsets into the evidence text given to check(): text[start:end]
)
from biocite.sentences import sentence_spans as spans
from biocite.settings import Settings, load_settings
from biocite.support_data import (
    HARD_LABEL,
    STOPWORDS,
    NearMiss,
    balanced,
    calibration_side,
    citint_claims,
    citint_pairs,
    content_words,
    copy_pairs,
    fingerprint,
    hard_cases,
    kqa_pairs,
    overlap,
    pubmedqa_pairs,
)

SupportLabel = Literal["supports", "contradicts", "neutral", "not_relevant"]
LABELS: list[SupportLabel] = ["supports", "contradicts", "neutral", "not_relevant"]
ARTIFACT_KIND = "biocite.support_model"
ARTIFACT_VERSION = 1
AGGREGATOR_FILE = "aggregator.json"


class EvidenceSentence(BaseModel):
    start: int
    end: int
    text: str
    score: float  # P(this sentence supports the claim)
    phrases: list[Span] = Field(default_factory=list)


class SupportVerdict(BaseModel):
    label: SupportLabel
    probs: dict[str, float]  # calibrated, sum to 1, keys = LABELS
    evidence: list[EvidenceSentence]  # best first


# --- text helpers ---------------------------------------------------------------------------------------


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentences of free text as (start, end) offsets (the index's splitter)."""

    return spans(Document(pmid="1", abstract=text)) if text.strip() else []


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    return Stemmer.Stemmer("english")


def phrases(claim: str, text: str, start: int, end: int) -> list[Span]:
    """Runs of words of evidence[start:end] that are content words of the claim (exact offsets); two
    matched words separated only by stopwords/punctuation join into one phrase."""

    stem = _stemmer().stemWord
    wanted = {stem(w) for w in content_words(claim)}
    hits = [
        m
        for m in _TOKEN.finditer(text, start, end)
        if m.group(0).lower() not in STOPWORDS and stem(m.group(0).lower()) in wanted
    ]
    out: list[Span] = []
    for m in hits:
        if out:
            gap = text[out[-1].end : m.start()]
            if all(w.lower() in STOPWORDS for w in _TOKEN.findall(gap)) and len(gap) <= 12:
                s = out[-1].start
                out[-1] = Span(start=s, end=m.end(), text=text[s : m.end()])
                continue
        out.append(Span(start=m.start(), end=m.end(), text=m.group(0)))
    return out


_NUM = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")


def cheap_features(claim: str, passage: str) -> list[float]:
    """Number agreement (share of the claim's numbers found in the passage; 1 when it has none) and
    content-word recall of the claim in the passage."""

    nums = set(_NUM.findall(claim))
    num_agree = len(nums & set(_NUM.findall(passage))) / len(nums) if nums else 1.0
    words = content_words(claim)
    recall = len(words & content_words(passage)) / len(words) if words else 0.0
    return [num_agree, recall]


def rank_scores(probs: np.ndarray, cos: np.ndarray, weight: float) -> np.ndarray:
    """How much each sentence is THE evidence: P(supports) + P(contradicts) + weight x cosine(claim,
    sentence) of the MiniLM bi-encoder; `weight` is fitted for top-1 attribution on train claims."""
    return probs[:, 0] + probs[:, 1] + weight * cos


def passage_features(
    probs: np.ndarray, cos: np.ndarray, cheap: Sequence[float], weight: float = 1.0
) -> np.ndarray:
    """Fixed-length features of one passage from its sentences' probabilities (n_sentences x 4) and
    cosines: max and mean per column, the best-ranked sentence's row, max cosine, cheap features."""
    if probs.size == 0:
        probs = np.full((1, len(LABELS)), 0.25, dtype=np.float32)
        cos = np.zeros(1, dtype=np.float32)
    i = int(np.argmax(rank_scores(probs, cos, weight)))
    logit = lambda x: np.log(np.clip(x, 1e-4, 1 - 1e-4))  # noqa: E731
    return np.concatenate(
        [
            logit(probs.max(axis=0)),
            logit(probs.mean(axis=0)),
            logit(probs[i]),
            [float(cos.max()), float(cos[i]), float(cos.mean())],
            np.asarray(cheap),
        ]
    ).astype(np.float64)


# --- the model ------------------------------------------------------------------------------------------


class Aggregator(BaseModel):
    """Multinomial logistic regression over `passage_features`; stored as plain numbers."""

    coef: list[list[float]]
    intercept: list[float]
    mean: list[float]
    scale: list[float]
    rank_weight: float = 1.0  # cosine weight in `rank_scores`

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        z = (np.atleast_2d(x) - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = z @ np.asarray(self.coef).T + np.asarray(self.intercept)
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    @classmethod
    def fit(cls, x: np.ndarray, y: Sequence[str], seed: int) -> Aggregator:
        from sklearn.linear_model import LogisticRegression

        mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
        lr = LogisticRegression(C=1.0, max_iter=2000, random_state=seed)
        lr.fit((x - mean) / scale, [LABELS.index(v) for v in y])  # type: ignore[arg-type]
        coef = np.zeros((len(LABELS), x.shape[1]))
        intercept = np.full(len(LABELS), -30.0)  # a label absent from the slice gets ~0 probability
        for row, cls_index in enumerate(lr.classes_):
            coef[cls_index] = lr.coef_[row] if len(lr.classes_) > 2 else (lr.coef_[0] * (1 if row else -1))
            intercept[cls_index] = (
                lr.intercept_[row] if len(lr.classes_) > 2 else lr.intercept_[0] * (1 if row else -1)
            )
        return cls(coef=coef.tolist(), intercept=intercept.tolist(), mean=mean.tolist(), scale=scale.tolist())


def support_dir(settings: Settings) -> Path:
    return settings.support.path or settings.models_dir / "support"


def resolve_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class SupportModel:
    def __init__(self, head: Any, aggregator: Aggregator, meta: dict[str, Any], max_sentences: int = 10):
        self.head = head
        self.aggregator = aggregator
        self.meta = meta
        self.max_sentences = max_sentences
        self._embedder: Any = None

    def cosines(self, claims: Sequence[str], groups: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """cosine(claim, sentence) of the MiniLM bi-encoder for each claim's group of sentences."""
        if self._embedder is None:
            self._embedder = Embedder("minilm")
        texts = sorted({*claims, *(s for g in groups for s in g)})
        row = {t: i for i, t in enumerate(texts)}
        vecs = self._embedder.encode(texts, batch_size=64)
        return [
            vecs[[row[s] for s in g]] @ vecs[row[c]] if g else np.zeros(0, dtype=np.float32)
            for c, g in zip(claims, groups, strict=True)
        ]

    def score(
        self, claims: Sequence[str], groups: Sequence[Sequence[str]]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """(probs n x 4, cosines n) per claim and its sentences: one batched pass of each model."""
        flat = [(c, s) for c, g in zip(claims, groups, strict=True) for s in g]
        probs = self.head.predict_proba(flat, batch_size=64) if flat else np.zeros((0, 4), dtype=np.float32)
        cos = self.cosines(claims, groups)
        out, k = [], 0
        for g, c in zip(groups, cos, strict=True):
            out.append((probs[k : k + len(g)], c))
            k += len(g)
        return out

    @property
    def name(self) -> str:
        return f"support:{str(self.meta.get('train_data_sha256') or 'untracked')[:12]}"

    @classmethod
    def load(cls, settings: Settings | None = None, *, train_if_missing: bool = True) -> SupportModel:
        settings = settings or load_settings()
        folder = support_dir(settings)
        if not (folder / AGGREGATOR_FILE).is_file():
            if not train_if_missing:
                raise ModelError(f"no support model at {folder}; run `biocite train support`")
            print(f"biocite: training the support model once into {folder} (a few minutes)", file=sys.stderr)
            train_support(settings, folder)
        return cls.from_folder(folder, settings)

    @classmethod
    def from_folder(cls, folder: Path, settings: Settings | None = None) -> SupportModel:
        head = PairClassifier.load(folder)
        meta = head.meta
        if meta.get("kind") != ARTIFACT_KIND or meta.get("support_version") != ARTIFACT_VERSION:
            raise ModelError(f"{folder}: not a support model of version {ARTIFACT_VERSION}; retrain it")
        try:
            agg = Aggregator.model_validate_json((folder / AGGREGATOR_FILE).read_text())
        except ValueError as exc:
            raise ModelError(f"{folder / AGGREGATOR_FILE}: unreadable ({exc})") from None
        cap = settings.support.max_sentences if settings else 10
        return cls(head, agg, meta, max_sentences=cap)

    # --- scoring --------------------------------------------------------------------------------------

    def _units(self, claim: str, evidence: str) -> list[tuple[int, int]]:
        spans = sentence_spans(evidence)
        if len(spans) > self.max_sentences:  # keep the sentences sharing most words with the claim
            ranked = sorted(spans, key=lambda s: -overlap(claim, evidence[s[0] : s[1]]))
            spans = sorted(ranked[: self.max_sentences])
        return spans

    def check(self, claim: str, evidence: str) -> SupportVerdict:
        return self.check_many([(claim, evidence)])[0]

    def check_many(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> list[SupportVerdict]:
        """One batched cross-encoder pass over every sentence of every pair."""
        for i, (claim, _) in enumerate(pairs):
            if not claim or not claim.strip():
                raise InputError(f"pair {i + 1}: empty claim")
        return self._check_spans([(c, e, self._units(c, e)) for c, e in pairs], batch_size=batch_size)

    def check_sentences(
        self, claim: str, sentences: Sequence[str]
    ) -> tuple[SupportVerdict, np.ndarray, np.ndarray]:
        """A passage given as its sentences (joined by spaces; no re-splitting, no sentence cap): the
        verdict, the (n_sentences x 4) sentence probabilities and the cosines, in the given order."""
        spans, pos = [], 0
        for s in sentences:
            spans.append((pos, pos + len(s)))
            pos += len(s) + 1
        ((probs, cos),) = self.score([claim], [list(sentences)])
        return self._verdict(claim, " ".join(sentences), spans, probs, cos), probs, cos

    def _check_spans(
        self, jobs: Sequence[tuple[str, str, list[tuple[int, int]]]], batch_size: int = 64
    ) -> list[SupportVerdict]:
        scored = self.score([c for c, _, _ in jobs], [[e[s:t] for s, t in spans] for _, e, spans in jobs])
        return [
            self._verdict(claim, evidence, spans, p, cos)
            for (claim, evidence, spans), (p, cos) in zip(jobs, scored, strict=True)
        ]

    def _verdict(
        self, claim: str, evidence: str, spans: list[tuple[int, int]], p: np.ndarray, cos: np.ndarray
    ) -> SupportVerdict:
        w = self.aggregator.rank_weight
        final = self.aggregator.predict_proba(passage_features(p, cos, cheap_features(claim, evidence), w))[0]
        label = LABELS[int(np.argmax(final))]
        order = np.argsort(-rank_scores(p, cos, w), kind="stable") if len(spans) else np.zeros(0, dtype=int)
        sentences = [
            EvidenceSentence(
                start=spans[i][0],
                end=spans[i][1],
                text=evidence[spans[i][0] : spans[i][1]],
                score=round(float(p[i, 0]), 5),
                phrases=phrases(claim, evidence, *spans[i]),
            )
            for i in order[:3].tolist()
        ]
        return SupportVerdict(
            label=label,
            probs={lab: round(float(v), 5) for lab, v in zip(LABELS, final, strict=True)},
            evidence=sentences,
        )


# --- training -------------------------------------------------------------------------------------------


def backbone_path(settings: Settings, backbone: str | Path) -> Path:
    return model_path(settings, backbone)


def _calibration_set(
    claims: Sequence[Any], corpus: dict[int, list[str]], seed: int, hard_per_type: int, max_claims: int
) -> list[tuple[str, list[str], str]]:
    """(claim, passage sentences, label) at passage level for the aggregator: each calibration claim vs its
    cited abstract (its own label), vs a random and a same-topic other abstract (not_relevant), and
    TRAIN-template hard cases vs the cited abstract."""

    rng = random.Random(seed)
    near = NearMiss({str(k): v for k, v in corpus.items()})
    ids = sorted(corpus)
    out: list[tuple[str, list[str], str]] = []
    claims = rng.sample(list(claims), min(max_claims, len(claims)))
    for c in claims:
        out.append((c.claim, c.sentences, c.label))
        other = rng.choice(ids) if rng.random() < 0.5 else int(near.other(c.claim, str(c.doc_id)) or ids[0])
        if other != c.doc_id:
            out.append((c.claim, corpus[other], "not_relevant"))
    for p in copy_pairs(claims, seed)[:hard_per_type]:  # verbatim / lead-cut sentences of the cited abstract
        out.append((p.claim, next(c.sentences for c in claims if c.id == p.group), "supports"))
    by_id = {c.id: c for c in claims}
    hard = hard_cases(claims, held_out=False, seed=seed)
    for kind in HARD_LABEL:
        items = [h for h in hard if h.source == f"hard:{kind}"]
        for h in rng.sample(items, min(hard_per_type, len(items))):
            out.append((h.claim, by_id[h.group].sentences, h.label))
    return out


def _scored_rows(
    model: SupportModel, rows: Sequence[tuple[str, list[str], str]]
) -> list[tuple[np.ndarray, np.ndarray]]:

    groups = [
        sorted(s, key=lambda x: -overlap(c, x))[: model.max_sentences] if len(s) > model.max_sentences else s
        for c, s, _ in rows
    ]
    return model.score([c for c, _, _ in rows], groups)


def fit_rank_weight(scored: Sequence[tuple[np.ndarray, np.ndarray]], gold: Sequence[set[int]]) -> float:
    """The cosine weight giving the best top-1 evidence sentence on claims with annotated evidence."""
    grid = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 100.0]
    hits = {
        w: sum(int(np.argmax(rank_scores(p, c, w))) in g for (p, c), g in zip(scored, gold, strict=True))
        for w in grid
    }
    return max(grid, key=lambda w: (hits[w], -w))


def train_support(
    settings: Settings,
    folder: Path | None = None,
    *,
    backbone: str | None = None,
    device: str | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Fine-tune, fit the aggregator, score on the calibration slice, save. Returns the saved meta."""

    cfg = settings.support
    folder = folder or support_dir(settings)
    say = log or (lambda msg: print(msg, file=sys.stderr) if progress else None)
    started, cpu_started = time.perf_counter(), time.process_time()
    seed = cfg.seed
    say("support model: building training pairs (Citation-Integrity train, K-QA, PubMedQA, hard cases)")
    claims, corpus = citint_claims("train")
    fit_claims = [c for c in claims if not calibration_side(c.id, seed)]
    cal_claims = [c for c in claims if calibration_side(c.id, seed)]
    pool = (
        citint_pairs(fit_claims, corpus, seed)
        + kqa_pairs(seed)
        + pubmedqa_pairs(seed)
        + hard_cases(fit_claims, held_out=False, seed=seed)
        + copy_pairs(fit_claims, seed)
    )
    pool = [p for p in pool if not calibration_side(p.group, seed)]
    train = balanced(pool, cfg.train_pairs, seed)
    sha = fingerprint(train)
    dev = resolve_device(device or cfg.device)
    bb = backbone_path(settings, backbone or cfg.backbone)
    say(f"support model: fine-tuning {bb.name} on {len(train)} pairs ({dev})")
    head = PairClassifier.train(
        [(p.claim, p.evidence) for p in train],
        [p.label for p in train],
        label_set=list(LABELS),
        backbone=bb,
        epochs=cfg.epochs,
        batch_size=cfg.batch_size,
        lr=cfg.lr,
        max_length=cfg.max_length,
        seed=seed,
        progress=progress,
        device=dev,
    )
    model = SupportModel(head, Aggregator(coef=[], intercept=[], mean=[], scale=[]), {}, cfg.max_sentences)
    say("support model: fitting the aggregation/calibration on held-back train claims")
    rows = _calibration_set(cal_claims, corpus, seed, cfg.calibration_hard_per_type, cfg.calibration_claims)
    # attribution rows: calibration claims with annotated evidence, all sentences of the cited abstract
    evidence_claims = [c for c in cal_claims if c.evidence][: cfg.calibration_claims]
    ev_scored = model.score([c.claim for c in evidence_claims], [c.sentences for c in evidence_claims])
    weight = fit_rank_weight(ev_scored, [set(c.evidence) for c in evidence_claims])
    scored = _scored_rows(model, rows)
    x = np.stack(
        [
            passage_features(p, cos, cheap_features(claim, " ".join(sents)), weight)
            for (claim, sents, _), (p, cos) in zip(rows, scored, strict=True)
        ]
    )
    y = [r[2] for r in rows]
    # fit on a random half, report on the other half (both inside the held-back TRAIN claims), refit on all
    order = np.random.default_rng(seed).permutation(len(rows))
    a, b = order[: len(rows) // 2], order[len(rows) // 2 :]
    half = Aggregator.fit(x[a], [y[i] for i in a], seed)
    pred = [LABELS[i] for i in half.predict_proba(x[b]).argmax(axis=1)]

    calib_metrics = macro_report([y[i] for i in b], pred, LABELS)
    aggregator = Aggregator.fit(x, y, seed)
    aggregator.rank_weight = weight
    top1 = np.mean([int(np.argmax(rank_scores(p, c, weight))) in set(e.evidence)
                    for (p, c), e in zip(ev_scored, evidence_claims, strict=True)])  # fmt: skip
    meta = {
        "kind": ARTIFACT_KIND,
        "support_version": ARTIFACT_VERSION,
        "task": "support",
        "backbone_name": str(backbone or cfg.backbone),
        "device": dev,
        "train_data_sha256": sha,
        "train_sources": {
            s: sum(1 for p in train if p.source == s) for s in sorted({p.source for p in train})
        },
        "label_counts_train": {lab: sum(1 for p in train if p.label == lab) for lab in LABELS},
        "calibration_rows": len(rows),
        "max_sentences": cfg.max_sentences,
        "metrics": {
            "calibration_slice_half": calib_metrics,
            "calibration_evidence_top1": round(float(top1), 4),
            "rank_weight": weight,
        },
        "seconds_total": round(time.perf_counter() - started, 1),
        "cpu_seconds_total": round(time.process_time() - cpu_started, 1),  # / threads ~ wall on idle cores
    }
    head.save(folder, meta=meta)
    (folder / AGGREGATOR_FILE).write_text(aggregator.model_dump_json(indent=2))
    (folder / "metrics.json").write_text(json.dumps(meta["metrics"], indent=2))
    say(f"support model: saved to {folder} in {meta['seconds_total']:.0f} s")
    return head.meta


def to_evaluator_label(label: str) -> str:
    """The evaluator's label names (Supports / Contradicts / Neutral / Not relevant)."""
    return {"supports": "Supports", "contradicts": "Contradicts", "neutral": "Neutral"}.get(
        label, "Not relevant"
    )
