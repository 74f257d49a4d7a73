"""Hybrid retrieval: BM25 ∪ FAISS candidates, fused (RRF or weighted), reranked, with a best sentence per hit.

    query ─▶ BM25 top-bm25_k ─┐
          └▶ FAISS top-dense_k ┴▶ fuse ─▶ top-rerank_k ─▶ rerank (none | dense | cross) ─▶ top-k hits

Every hit keeps the score of each stage that saw it (`stage_scores`), so a benchmark or a trace can tell
which stage put it where.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

from biocite.errors import BiociteError
from biocite.index.build import open_index
from biocite.index.rerank import make_reranker, rerank_order
from biocite.other_names import search_names, with_other_names
from biocite.records import Document, SearchHit, Sentence
from biocite.retrieval import DocumentSource, Encoder
from biocite.settings import Settings
from biocite.tokenize import american_spelling, respellings, tokenize

if TYPE_CHECKING:
    from biocite.index.build import LoadedIndex
    from biocite.index.rerank import Reranker

Stage = Literal["bm25", "dense", "hybrid", "rerank"]
STAGES: tuple[str, ...] = ("bm25", "dense", "hybrid", "rerank")
Ranked = list[tuple[str, float]]


# --- fusion --------------------------------------------------------------------------------------------


def rrf_fuse(rankings: Sequence[Sequence[str]], k: int = 60) -> Ranked:
    """Reciprocal rank fusion: score(d) = Σ_lists 1 / (k + rank_d), ranks from 1."""
    if k < 0:
        raise ValueError(f"rrf k must be >= 0, got {k}")
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, pmid in enumerate(ranking, start=1):
            scores[pmid] = scores.get(pmid, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])


def minmax(scored: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Scores rescaled to [0, 1] within the list; a list of equal scores maps to 1.0."""
    if not scored:
        return {}
    values = [s for _, s in scored]
    low, high = min(values), max(values)
    if high - low <= 1e-12:
        return {pmid: 1.0 for pmid, _ in scored}
    return {pmid: (s - low) / (high - low) for pmid, s in scored}


def weighted_fuse(
    bm25: Sequence[tuple[str, float]], dense: Sequence[tuple[str, float]], dense_weight: float
) -> Ranked:
    """(1 - w) · minmax(bm25) + w · minmax(dense); a document absent from a list scores 0 there."""
    if not 0.0 <= dense_weight <= 1.0:
        raise ValueError(f"dense_weight must be in [0, 1], got {dense_weight}")
    lexical, semantic = minmax(bm25), minmax(dense)
    order = list(dict.fromkeys([p for p, _ in bm25] + [p for p, _ in dense]))
    fused = {p: (1 - dense_weight) * lexical.get(p, 0.0) + dense_weight * semantic.get(p, 0.0) for p in order}
    return sorted(fused.items(), key=lambda item: -item[1])


# --- best sentence -------------------------------------------------------------------------------------


class _EngineFrequencies:
    """Document frequencies read from an engine that keeps them (tantivy), not counted in memory."""

    def __init__(self, doc_freq: Callable[[str], int]) -> None:
        self.doc_freq = doc_freq

    def get(self, token: str) -> int:
        return self.doc_freq(token)


class IdfTable:
    """Corpus IDF of the index's BM25 tokens (Robertson-Sparck Jones, floored at a small positive value)."""

    def __init__(self, document_frequency: Counter[str] | _EngineFrequencies, n_docs: int) -> None:
        self.df = document_frequency
        self.n = max(n_docs, 1)
        self.unseen = math.log(1 + (self.n + 0.5) / 0.5)

    @classmethod
    def from_index(cls, index: LoadedIndex) -> IdfTable:
        doc_freq = getattr(index.bm25, "doc_freq", None)
        if doc_freq is not None:
            return cls(_EngineFrequencies(doc_freq), len(index.bm25))
        df: Counter[str] = Counter()
        n = 0
        for _, tokens in index.docs.iter_tokens():
            df.update(set(tokens))
            n += 1
        return cls(df, n)

    def __call__(self, token: str) -> float:
        freq = self.df.get(token)
        if not freq:
            return self.unseen
        return max(math.log(1 + (self.n - freq + 0.5) / (freq + 0.5)), 0.01)


def best_sentence(
    query_tokens: Sequence[str], sentences: Sequence[Sentence], idf: IdfTable, *, stem: bool = True
) -> Sentence | None:
    """The sentence with the largest IDF mass of query tokens it contains (ties: the earlier sentence).

    The score is divided by a mild length term so a long sentence does not win on length alone.
    """
    if not sentences:
        return None
    wanted = set(query_tokens)
    best, best_score = sentences[0], -1.0
    for sentence in sentences:
        tokens = set(tokenize(sentence.text, stem=stem))
        mass = sum(idf(t) for t in wanted & tokens)
        score = mass / math.log(2 + len(tokens))
        if score > best_score + 1e-12:
            best, best_score = sentence, score
    return best


# --- retriever -----------------------------------------------------------------------------------------


class HybridRetriever:
    """Hybrid search over one loaded index (a `biocite.retrieval.Retriever`). Thread-safe for reads.

    Each hit carries its document and stored sentences, fetched once here.
    """

    def __init__(self, index: LoadedIndex, settings: Settings, reranker: Reranker | None = None) -> None:
        self.index = index
        self.settings = settings
        self.config = settings.index
        self._reranker = reranker
        self._idf: IdfTable | None = None
        self._lock = threading.Lock()
        if reranker is None and self.config.reranker != "none":
            self._reranker = make_reranker(settings, index)

    @property
    def documents(self) -> DocumentSource:
        return self.index.docs

    @property
    def encoder(self) -> Encoder:
        return self.index.embedder

    @property
    def reranker(self) -> Reranker | None:
        return self._reranker

    @property
    def idf(self) -> IdfTable:
        with self._lock:
            if self._idf is None:
                self._idf = IdfTable.from_index(self.index)
            return self._idf

    def default_stage(self) -> str:
        return "hybrid" if self._reranker is None else "rerank"

    # stage by stage, so benchmarks can time each

    def bm25(self, query: str, k: int) -> Ranked:
        """BM25 over the query's terms and the other names of the drugs and conditions it names
        ("paracetamol" also searches "acetaminophen", "heart attack" "myocardial infarction":
        `biocite.other_names`); for a term no abstract has, its American spelling ("haemoglobin" also searches
        "hemoglobin") and the index terms it may be a typo of ("sertaline" "sertraline": `biocite.tokenize`)."""
        tokens = tokenize(" ".join([query, *search_names(query)]), stem=self.index.stem)
        known = self.idf.df.get
        unseen = [token for token in tokens if not known(token)]
        spelt = [us for token in unseen if (us := american_spelling(token)) != token and known(us)]
        typos = [near for token in unseen for near in respellings(token, known)]
        return self.index.bm25.search(tokens + spelt + typos, k) if tokens else []

    def dense(self, query: str, k: int) -> Ranked:
        """The nearest abstracts to the query with its other names ("tummy tuck (abdominoplasty)")."""
        vectors = self.index.embedder.encode([with_other_names(query)])
        return self.index.dense.search(vectors, k)[0]

    def fuse(self, bm25: Ranked, dense: Ranked) -> Ranked:
        if self.config.fusion == "rrf":
            return rrf_fuse([[p for p, _ in bm25], [p for p, _ in dense]], k=self.config.rrf_k)
        return weighted_fuse(bm25, dense, self.config.dense_weight)

    def candidates(self, query: str) -> tuple[Ranked, Ranked, Ranked]:
        """(bm25, dense, fused) rankings of the query."""
        bm25 = self.bm25(query, self.config.bm25_k)
        dense = self.dense(query, self.config.dense_k)
        return bm25, dense, self.fuse(bm25, dense)

    def search(self, query: str, k: int = 10, *, stage: str | None = None) -> list[SearchHit]:
        if not isinstance(query, str):  # biocite.search(...) from Python: named, not an AttributeError
            raise BiociteError(f"the query must be text, not {type(query).__name__}")
        if not query.strip():
            raise BiociteError("the query is empty")
        if k < 1:
            raise BiociteError(f"k must be >= 1, got {k}")
        stage = stage or self.default_stage()
        if stage not in STAGES:
            raise BiociteError(f"unknown search stage {stage!r}; known: {', '.join(STAGES)}")
        if stage == "rerank" and self._reranker is None:
            raise BiociteError("stage 'rerank' needs a reranker; set index.reranker to dense or cross")
        bm25: Ranked = []
        dense: Ranked = []
        fused: Ranked = []
        if stage == "bm25":
            bm25 = ranking = self.bm25(query, max(k, self.config.bm25_k))
        elif stage == "dense":
            dense = ranking = self.dense(query, max(k, self.config.dense_k))
        else:
            bm25, dense, fused = self.candidates(query)
            ranking = fused
        reranked: dict[str, float] = {}
        head = max(k, self.config.rerank_k) if stage == "rerank" else k
        docs = self.index.docs.get_many([p for p, _ in ranking[:head]])
        if stage == "rerank":
            ranking, reranked = self._rerank(query, fused, docs)
        return self._hits(query, ranking[:k], docs, bm25=dict(bm25), dense=dict(dense), fused=dict(fused),
                          rerank=reranked)  # fmt: skip

    def _rerank(
        self, query: str, fused: Ranked, docs: dict[str, Document]
    ) -> tuple[Ranked, dict[str, float]]:
        """Reranked head (reranker scores), then the fused tail beyond rerank_k (fused scores)."""

        assert self._reranker is not None
        order, reranked = rerank_order(
            self._reranker, query, [p for p, _ in fused], docs, self.config.rerank_k
        )
        fused_scores = dict(fused)
        return [(p, reranked.get(p, fused_scores[p])) for p in order], reranked

    def _hits(
        self,
        query: str,
        ranking: Ranked,
        docs: dict[str, Document],
        **stages: dict[str, float],
    ) -> list[SearchHit]:
        missing = [p for p, _ in ranking if p not in docs]
        if missing:
            docs = {**docs, **self.index.docs.get_many(missing)}
        query_tokens = tokenize(query, stem=self.index.stem)
        hits: list[SearchHit] = []
        for rank, (pmid, score) in enumerate(ranking, start=1):
            doc = docs.get(pmid)
            if doc is None:  # in an engine but not the store: a stale index, never a fake hit
                raise BiociteError(
                    f"PMID {pmid} is in the search index but not in the document store; rebuild"
                )
            stage_scores = {name: scores[pmid] for name, scores in stages.items() if pmid in scores}
            sentences = self.index.docs.sentences(pmid)
            sentence = best_sentence(query_tokens, sentences, self.idf, stem=self.index.stem)
            hits.append(
                SearchHit(
                    pmid=pmid,
                    title=doc.title,
                    score=float(score),
                    rank=rank,
                    stage_scores=stage_scores,
                    best_sentence=sentence,
                    document=doc,
                    sentences=sentences,
                )
            )
        return hits


_CACHE: dict[str, HybridRetriever] = {}
_CACHE_LOCK = threading.Lock()


def _cache_key(settings: Settings) -> str:
    return settings.index.model_dump_json() + str(settings.index_dir) + str(settings.reranker_dir)


def open_retriever(settings: Settings) -> HybridRetriever:
    """The retriever for these settings, loaded once per process."""

    key = _cache_key(settings)
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = HybridRetriever(open_index(settings), settings)
        return _CACHE[key]


def clear_retriever_cache() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()
