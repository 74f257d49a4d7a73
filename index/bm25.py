"""BM25 (Okapi, rank-bm25's exact scores) over pre-tokenized documents, with two backends.

``rank_bm25``: ``rank_bm25.BM25Okapi`` itself, the reference; fine for a few thousand documents.

``bm25s`` (default): bm25s's eager sparse index. bm25s has no Okapi IDF with rank-bm25's epsilon floor,
but with ``method="bm25+"`` and ``delta=0`` each stored entry is ``idf_plus(t) * tfc(t, d)`` where
``tfc = tf (k1 + 1) / (tf + k1 (1 - b + b |d| / avgdl))`` is exactly rank-bm25's term-frequency part.
Rescaling column ``t`` of the stored matrix by ``idf_okapi(t) / idf_plus(t)`` therefore yields rank-bm25's
per-term scores; a query sums the columns of its terms, once per occurrence, as rank-bm25 does.
Scores are kept in float64 so they agree with rank-bm25 to ~1e-12.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import bm25s
import numpy as np
from pydantic import BaseModel
from rank_bm25 import BM25Okapi

from biocite.errors import BiociteError, IndexMismatchError, InputError

Backend = Literal["bm25s", "rank_bm25"]
FORMAT_VERSION = 1
META_FILE = "bm25_meta.json"
IDS_FILE = "bm25_ids.json"
BM25S_DIR = "bm25s"
TOKENS_FILE = "corpus_tokens.json.gz"  # rank_bm25 backend: the tokens it is rebuilt from


class BM25Meta(BaseModel):
    """What a saved index was built with; written last, so its presence marks a complete save."""

    format_version: int = FORMAT_VERSION
    backend: Backend
    k1: float
    b: float
    epsilon: float
    n_docs: int
    bm25s_version: str = bm25s.__version__


def okapi_idf(doc_freqs: np.ndarray, n_docs: int, epsilon: float) -> np.ndarray:
    """rank-bm25's BM25Okapi IDF per term: log(N - n + .5) - log(n + .5), negatives -> epsilon * mean."""
    df = doc_freqs.astype(np.float64)
    idf = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
    # fsum: an order-independent mean, so the floor does not depend on vocabulary order
    floor = epsilon * (math.fsum(idf.tolist()) / len(idf))
    idf[idf < 0] = floor
    return idf


class BM25Index:
    """BM25 over documents given as token lists; ``ids[i]`` names document ``i``."""

    def __init__(
        self,
        ids: list[str],
        meta: BM25Meta,
        *,
        retriever: bm25s.BM25 | None = None,
        okapi: BM25Okapi | None = None,
        corpus_tokens: list[list[str]] | None = None,
    ) -> None:
        self.ids = ids
        self.meta = meta
        self._retriever = retriever
        self._okapi = okapi
        self._corpus_tokens = corpus_tokens  # kept for the rank_bm25 backend's save only

    # ---- building -------------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        corpus_tokens: list[list[str]],
        ids: list[str],
        *,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        backend: Backend = "bm25s",
    ) -> BM25Index:
        if backend not in ("bm25s", "rank_bm25"):
            raise BiociteError(f"index.bm25_backend: unknown {backend!r} (choose 'bm25s' or 'rank_bm25')")
        if k1 < 0 or not 0 <= b <= 1 or epsilon < 0:
            raise BiociteError(
                f"index.k1/b/epsilon: need k1 >= 0, 0 <= b <= 1, epsilon >= 0; got {k1}/{b}/{epsilon}"
            )
        _check_corpus(corpus_tokens, ids)
        meta = BM25Meta(backend=backend, k1=k1, b=b, epsilon=epsilon, n_docs=len(ids))
        ids = list(ids)
        if backend == "rank_bm25":
            okapi = BM25Okapi(corpus_tokens, k1=k1, b=b, epsilon=epsilon)
            return cls(ids, meta, okapi=okapi, corpus_tokens=corpus_tokens)
        retriever = bm25s.BM25(k1=k1, b=b, delta=0.0, method="bm25+", dtype="float64")
        retriever.index(corpus_tokens, create_empty_token=False, show_progress=False)
        _rescale_to_okapi(retriever, epsilon)
        return cls(ids, meta, retriever=retriever)

    # ---- querying -------------------------------------------------------------------------------

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """One float64 score per document, in ``ids`` order; unknown terms score 0."""
        if self._okapi is not None:
            return np.asarray(self._okapi.get_scores(list(query_tokens)), dtype=np.float64)
        assert self._retriever is not None
        vocab = self._retriever.vocab_dict
        columns = [vocab[t] for t in query_tokens if t in vocab]
        return self._sum_columns(columns)

    def _sum_columns(self, columns: list[int]) -> np.ndarray:
        matrix = self._retriever.scores  # type: ignore[union-attr]
        n_docs = len(self.ids)
        if not columns:
            return np.zeros(n_docs, dtype=np.float64)
        indptr, indices, data = matrix["indptr"], matrix["indices"], matrix["data"]
        # A repeated term contributes once per occurrence (as in rank-bm25); bincount adds in
        # query-term order, the same order rank-bm25 accumulates in.
        doc_idx = np.concatenate([indices[indptr[c] : indptr[c + 1]] for c in columns])
        weights = np.concatenate([data[indptr[c] : indptr[c + 1]] for c in columns])
        return np.bincount(doc_idx, weights=weights, minlength=n_docs).astype(np.float64, copy=False)

    def search(self, query_tokens: Sequence[str], k: int) -> list[tuple[str, float]]:
        """Top ``k`` (doc id, score) with score > 0, best first, ties broken by lower document position."""
        if k < 0:
            raise BiociteError(f"bm25 search: k must be >= 0, got {k}")
        if k == 0:
            return []
        scores = self.scores(query_tokens)
        candidates = np.flatnonzero(scores > 0)
        if candidates.size > k:
            cand_scores = scores[candidates]
            kth = np.partition(cand_scores, cand_scores.size - k)[cand_scores.size - k]
            candidates = candidates[cand_scores >= kth]  # keeps every doc tied with the k-th
        order = np.lexsort((candidates, -scores[candidates]))[:k]
        return [(self.ids[i], float(scores[i])) for i in candidates[order]]

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def backend(self) -> Backend:
        return self.meta.backend

    # ---- persistence ----------------------------------------------------------------------------

    def save(self, folder: Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / META_FILE).unlink(missing_ok=True)  # an interrupted save must not look complete
        (folder / IDS_FILE).write_text(json.dumps(self.ids), encoding="utf-8")
        if self._retriever is not None:
            self._retriever.save(folder / BM25S_DIR, show_progress=False)
        else:
            with gzip.open(folder / TOKENS_FILE, "wt", encoding="utf-8") as fh:
                json.dump(self._corpus_tokens, fh)
        (folder / META_FILE).write_text(self.meta.model_dump_json(indent=2), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path, *, mmap: bool = False) -> BM25Index:
        folder = Path(folder)
        meta_path = folder / META_FILE
        if not meta_path.is_file():
            raise IndexMismatchError(f"{meta_path}: missing; no complete BM25 index in {folder} (rebuild it)")
        try:
            meta = BM25Meta.model_validate_json(meta_path.read_text(encoding="utf-8"))
            ids = json.loads((folder / IDS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise IndexMismatchError(
                f"{folder}: unreadable BM25 index ({exc.__class__.__name__}: {exc})"
            ) from exc
        if meta.format_version != FORMAT_VERSION or len(ids) != meta.n_docs:
            raise IndexMismatchError(
                f"{meta_path}: format {meta.format_version} with {len(ids)} ids for {meta.n_docs} docs; "
                f"expected format {FORMAT_VERSION} (rebuild the index)"
            )
        try:
            if meta.backend == "rank_bm25":
                with gzip.open(folder / TOKENS_FILE, "rt", encoding="utf-8") as fh:
                    tokens = json.load(fh)
                okapi = BM25Okapi(tokens, k1=meta.k1, b=meta.b, epsilon=meta.epsilon)
                return cls(ids, meta, okapi=okapi, corpus_tokens=tokens)
            retriever = bm25s.BM25.load(folder / BM25S_DIR, mmap=mmap)
        except (OSError, ValueError, EOFError) as exc:
            raise IndexMismatchError(
                f"{folder}: damaged BM25 index ({exc.__class__.__name__}: {exc}); rebuild it"
            ) from exc
        if retriever.scores["num_docs"] != meta.n_docs:
            raise IndexMismatchError(
                f"{folder / BM25S_DIR}: {retriever.scores['num_docs']} docs, meta says {meta.n_docs}"
            )
        return cls(ids, meta, retriever=retriever)


def _rescale_to_okapi(retriever: bm25s.BM25, epsilon: float) -> None:
    """Turn bm25s's BM25+ (delta 0) entries idf_plus * tfc into rank-bm25's idf_okapi * tfc, in place."""
    matrix = retriever.scores
    n_docs = int(matrix["num_docs"])
    doc_freqs = np.diff(matrix["indptr"])  # one stored entry per (term, doc containing it)
    idf_plus = np.log((n_docs + 1) / doc_freqs.astype(np.float64))  # bm25s's _score_idf_bm25plus
    ratio = okapi_idf(doc_freqs, n_docs, epsilon) / idf_plus
    matrix["data"] = matrix["data"] * np.repeat(ratio, doc_freqs)


def _check_corpus(corpus_tokens: list[list[str]], ids: list[str]) -> None:
    if len(corpus_tokens) != len(ids):
        raise InputError(f"bm25 build: {len(corpus_tokens)} token lists but {len(ids)} ids")
    if not ids:
        raise InputError("bm25 build: the corpus is empty")
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dup = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise InputError(f"bm25 build: document id {dup!r} occurs more than once")
    if not any(corpus_tokens):
        raise InputError("bm25 build: no document has any token (all empty after tokenizing?)")
