"""Rerankers for the fused candidates, and training of the cross-encoder reranker.

- `CrossEncoderReranker`: a `PairClassifier` (MiniLM backbone + 2-label head) that biocite trains itself on
  the PubMedQA development questions (`biocite train reranker`); no pretrained cross-encoder is available
  offline. Score = P(relevant | question, title + abstract).
- `DenseReranker`: bi-encoder cosine between the query and title + abstract ("minilm", "mpnet" or a folder).

The PubMedQA questions are split BY QUESTION with a fixed seed into train (60%) and validation (40%); the
split is saved in the artifact, and the benchmark evaluates on the validation questions only.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from ir_measures import RR, R
from pydantic import BaseModel, Field

from biocite.embedder import Embedder, use_bf16
from biocite.errors import BiociteError, ModelError
from biocite.heads import PairClassifier, data_fingerprint
from biocite.index.trec import evaluate, ranked, run_docs, source_qrels
from biocite.pubmedqa import PUBMEDQA_PATH, SPLIT_SEED, TRAIN_SHARE, Question, load_questions, split_questions
from biocite.records import Document
from biocite.settings import Settings

if TYPE_CHECKING:
    from biocite.index.build import LoadedIndex
    from biocite.index.hybrid import HybridRetriever

MEASURES = (R @ 1, R @ 10, RR)
LABELS = ["not_relevant", "relevant"]
# 128 tokens hold the question, the title and the first ~80 abstract tokens; 256 would double the rerank cost
# (measured 12.8 vs 5.3 pairs/s on the shared 2-core box) and break the 300 ms search budget.
RERANK_MAX_LENGTH = 128
NEGATIVES_PER_QUESTION = 3
# Each positive is repeated once per negative: with 1 positive to n negatives the head first learns the
# prior and, in the few hundred steps CPU allows, stayed there (all scores ~1/6; validation recall@1 0.245).
BALANCE_POSITIVES = True
KIND = "biocite-reranker"


def document_text(doc: Document) -> str:
    return f"{doc.title}\n{doc.abstract}".strip()


class Reranker(Protocol):
    name: str

    def score(self, query: str, docs: Sequence[Document]) -> np.ndarray: ...


# --- rerankers -----------------------------------------------------------------------------------------


class CrossEncoderReranker:
    """The trained cross-encoder: P(relevant) of (query, title + abstract)."""

    def __init__(self, classifier: PairClassifier, *, batch_size: int = 32) -> None:
        if classifier.labels != LABELS:
            raise ModelError(
                f"reranker artifact has labels {classifier.labels}, expected {LABELS}; retrain it"
            )
        self.classifier = classifier
        self.batch_size = batch_size
        self.name = "cross-encoder"

    @classmethod
    def from_settings(cls, settings: Settings) -> CrossEncoderReranker:
        folder = settings.reranker_dir
        if not (folder / "meta.json").is_file():
            raise ModelError(
                f"no trained reranker in {folder}; run `biocite train reranker` "
                "(or set index.reranker=dense or none)"
            )

        classifier = PairClassifier.load(folder)
        classifier.bf16 = use_bf16(settings.index.embed_precision)
        if classifier.meta.get("kind") != KIND:
            raise ModelError(
                f"{folder}/meta.json is not a biocite reranker (kind {classifier.meta.get('kind')!r})"
            )
        return cls(classifier)

    def score(self, query: str, docs: Sequence[Document]) -> np.ndarray:
        pairs = [(query, document_text(d)) for d in docs]
        return self.classifier.predict_proba(pairs, batch_size=self.batch_size)[:, 1]


class DenseReranker:
    """Cosine of bi-encoder embeddings. Reuses the index's stored vectors when it is the index's model."""

    def __init__(self, model: str, settings: Settings, index: LoadedIndex | None = None) -> None:
        self.embedder = (
            index.embedder if index and index.embedder.name == model else Embedder(model, settings)
        )
        self.name = f"dense:{model}"
        self._vectors: dict[str, np.ndarray] = {}
        if index is not None and index.embedder.name == model:
            ids, matrix = index.docs.all_embeddings(model, self.embedder.dim)
            self._vectors = dict(zip(ids, matrix, strict=True))

    def score(self, query: str, docs: Sequence[Document]) -> np.ndarray:
        if not docs:
            return np.zeros(0, dtype=np.float32)
        missing = [d for d in docs if d.pmid not in self._vectors]
        if missing:
            encoded = self.embedder.encode([document_text(d) for d in missing])
            self._vectors.update({d.pmid: v for d, v in zip(missing, encoded, strict=True)})
        query_vector = self.embedder.encode([query])[0]
        matrix = np.stack([self._vectors[d.pmid] for d in docs])
        return matrix @ query_vector


def make_reranker(settings: Settings, index: LoadedIndex) -> Reranker | None:
    kind = settings.index.reranker
    if kind == "cross":
        return CrossEncoderReranker.from_settings(settings)
    if kind == "dense":
        return DenseReranker(settings.index.dense_rerank_model, settings, index)
    return None


# --- data and split ------------------------------------------------------------------------------------


def train_questions(settings: Settings | None = None, path: Path = PUBMEDQA_PATH) -> list[Question]:
    return _split_for(settings, path)[0]


def validation_questions(settings: Settings | None = None, path: Path = PUBMEDQA_PATH) -> list[Question]:
    return _split_for(settings, path)[1]


def _split_for(settings: Settings | None, path: Path) -> tuple[list[Question], list[Question]]:
    """The split saved in the reranker artifact when there is one (so the benchmark matches training)."""
    questions = load_questions(path)
    if settings is not None:
        meta_path = settings.reranker_dir / "meta.json"
        if meta_path.is_file():
            split = json.loads(meta_path.read_text()).get("split") or {}
            if split.get("train") and split.get("validation"):
                by_pmid = {q.pmid: q for q in questions}
                train = [by_pmid[p] for p in split["train"] if p in by_pmid]
                validation = [by_pmid[p] for p in split["validation"] if p in by_pmid]
                return train, validation
    return split_questions(questions)


# --- metrics -------------------------------------------------------------------------------------------


class RankMetrics(BaseModel):
    """Where each question's source abstract ranks, measured by ir_measures (biocite.index.trec)."""

    questions: int
    recall_at_1: float
    recall_at_10: float
    mrr: float  # over the list given (a source outside it contributes 0)

    @classmethod
    def of(cls, questions: Sequence[Question], orders: Sequence[Sequence[str]]) -> RankMetrics:
        """`orders[i]`: the PMIDs retrieved for `questions[i]`, best first."""
        if not questions:
            raise ValueError("no questions to score")
        rankings = {q.pmid: ranked(order) for q, order in zip(questions, orders, strict=True)}
        scores = evaluate(run_docs(rankings), source_qrels((q.pmid, q.pmid) for q in questions), MEASURES)
        return cls(
            questions=len(questions),
            recall_at_1=scores["R@1"],
            recall_at_10=scores["R@10"],
            mrr=scores["RR"],
        )


# --- training ------------------------------------------------------------------------------------------


class TrainReport(BaseModel):
    artifact: str
    train_questions: int
    validation_questions: int
    skipped_questions: int  # source abstract not in the index
    train_pairs: int
    negatives_per_question: int
    seconds_candidates: float
    seconds_training: float
    seconds_validation: float
    validation_fused: RankMetrics
    validation_reranked: RankMetrics
    meta: dict[str, Any] = Field(default_factory=dict)

    def summary(self) -> str:
        f, r = self.validation_fused, self.validation_reranked
        return "\n".join(
            [
                f"reranker saved to {self.artifact}",
                f"train: {self.train_questions} questions, {self.train_pairs} pairs "
                f"(positive repeated to balance {self.negatives_per_question} hard negatives each), "
                f"{self.seconds_training:.0f} s training",
                f"validation: {self.validation_questions} questions (skipped, source not indexed: "
                f"{self.skipped_questions})",
                f"  fused    recall@1 {f.recall_at_1:.3f}  recall@10 {f.recall_at_10:.3f}  MRR {f.mrr:.3f}",
                f"  reranked recall@1 {r.recall_at_1:.3f}  recall@10 {r.recall_at_10:.3f}  MRR {r.mrr:.3f}",
            ]
        )


def plain_settings(settings: Settings) -> Settings:
    """These settings without a reranker: training must not need the artifact it is about to create."""
    return settings.model_copy(update={"index": settings.index.model_copy(update={"reranker": "none"})})


def _training_pairs(
    retriever: HybridRetriever, questions: Sequence[Question], negatives: int
) -> tuple[list[tuple[str, str]], list[str], list[dict[str, Any]]]:
    docs = retriever.documents
    pairs: list[tuple[str, str]] = []
    labels: list[str] = []
    rows: list[dict[str, Any]] = []
    for q in questions:
        _, _, fused = retriever.candidates(q.question)
        negative_ids = [p for p, _ in fused if p != q.pmid][:negatives]
        found = docs.get_many([q.pmid, *negative_ids])
        repeats = [q.pmid] * (max(1, len(negative_ids)) if BALANCE_POSITIVES else 1)
        for pmid in [*repeats, *negative_ids]:
            label = LABELS[1] if pmid == q.pmid else LABELS[0]
            pairs.append((q.question, document_text(found[pmid])))
            labels.append(label)
            rows.append({"question": q.question, "pmid": pmid, "label": label})
    return pairs, labels, rows


def rerank_order(
    reranker: Reranker, query: str, order: Sequence[str], docs: Mapping[str, Document], rerank_k: int
) -> tuple[list[str], dict[str, float]]:
    """The first `rerank_k` PMIDs of `order` sorted by reranker score (ties keep `order`), then the rest."""
    head = [p for p in order[:rerank_k] if p in docs]
    scores = np.asarray(reranker.score(query, [docs[p] for p in head]), dtype=np.float64)
    ranked = [head[i] for i in np.argsort(-scores, kind="stable")]
    return ranked + [p for p in order[rerank_k:]], {p: float(s) for p, s in zip(head, scores, strict=True)}


def evaluate_reranking(
    retriever: HybridRetriever, reranker: Reranker, questions: Sequence[Question], rerank_k: int
) -> tuple[RankMetrics, RankMetrics]:
    """(fused, reranked) metrics of the source abstract over the questions."""
    fused_orders: list[list[str]] = []
    reranked_orders: list[list[str]] = []
    for q in questions:
        _, _, fused = retriever.candidates(q.question)
        order = [p for p, _ in fused]
        fused_orders.append(order)
        docs = retriever.documents.get_many(order[:rerank_k])
        reranked_orders.append(rerank_order(reranker, q.question, order, docs, rerank_k)[0])
    return RankMetrics.of(questions, fused_orders), RankMetrics.of(questions, reranked_orders)


def train_reranker(
    settings: Settings,
    retriever: HybridRetriever,
    *,
    negatives: int = NEGATIVES_PER_QUESTION,
    epochs: int = 2,
    lr: float = 1e-4,
    max_length: int = RERANK_MAX_LENGTH,
    progress: bool = True,
) -> TrainReport:
    """Train the cross-encoder on the train split, evaluate on validation, save to settings.reranker_dir.

    `retriever` must not rerank (open it with `plain_settings(settings)`); the caller opens it because the
    retriever (biocite.index.hybrid) imports this module for the reranker itself."""

    questions = load_questions()
    indexed = [q for q in questions if q.pmid in retriever.documents]
    skipped = len(questions) - len(indexed)
    if len(indexed) < 10:
        raise BiociteError(
            f"only {len(indexed)} of {len(questions)} PubMedQA source abstracts are in the index at "
            f"{settings.index_dir}; the reranker trains on the default corpus"
        )
    train, validation = split_questions(indexed)

    started = time.perf_counter()
    pairs, labels, rows = _training_pairs(retriever, train, negatives)
    seconds_candidates = time.perf_counter() - started

    hyper: dict[str, Any] = {
        "epochs": epochs,
        "batch_size": 16,
        "lr": lr,
        "max_length": max_length,
        "seed": SPLIT_SEED,
    }
    started = time.perf_counter()
    classifier = PairClassifier.train(pairs, labels, label_set=LABELS, progress=progress, **hyper)
    seconds_training = time.perf_counter() - started
    classifier.meta["kind"] = KIND

    started = time.perf_counter()
    fused, reranked = evaluate_reranking(
        retriever, CrossEncoderReranker(classifier), validation, settings.index.rerank_k
    )
    seconds_validation = time.perf_counter() - started

    meta = {
        "kind": KIND,
        "train_data_sha256": data_fingerprint(rows),
        "split": {
            "seed": SPLIT_SEED,
            "train_share": TRAIN_SHARE,
            "source": str(PUBMEDQA_PATH.name),
            "train": [q.pmid for q in train],
            "validation": [q.pmid for q in validation],
        },
        "negatives_per_question": negatives,
        "candidates": settings.index.model_dump(
            mode="json",
            include={"bm25_k", "dense_k", "fusion", "rrf_k", "dense_weight", "rerank_k", "dense_model"},
        ),
        "corpus_fingerprint": retriever.index.manifest.corpus_fingerprint,
        "metrics": {
            "validation_fused": fused.model_dump(),
            "validation_reranked": reranked.model_dump(),
            "seconds_training": round(seconds_training, 1),
        },
    }
    classifier.save(settings.reranker_dir, meta=meta)
    return TrainReport(
        artifact=str(settings.reranker_dir),
        train_questions=len(train),
        validation_questions=len(validation),
        skipped_questions=skipped,
        train_pairs=len(pairs),
        negatives_per_question=negatives,
        seconds_candidates=round(seconds_candidates, 1),
        seconds_training=round(seconds_training, 1),
        seconds_validation=round(seconds_validation, 1),
        validation_fused=fused,
        validation_reranked=reranked,
        meta={k: v for k, v in meta.items() if k != "split"},
    )
