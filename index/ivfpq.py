"""Dense retrieval for the scale path (`index.faiss_kind: ivfpq`): FAISS IVF-PQ to find candidates, exact
re-scoring of the top `rescore_k` of them against the full vectors kept on disk as float16.

    dense_ivfpq.faiss   IVF<nlist>,PQ<m>x4fs (4-bit fast-scan codes, m/2 bytes a vector) or PQ<m> (8-bit)
    dense_f16.npy       every vector as float16, row i = document i, memory-mapped when serving
    dense_ids.npy       the PMIDs, int64 when all are numbers (8 B each instead of a Python string)

RAM to serve is the PQ codes plus the ids; the float16 rows are read from the page cache only for the
candidates. With `rescore_k` >= the number of documents the ranking is exact (flat search up to float16).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

import faiss
import numpy as np
from pydantic import BaseModel

from biocite.errors import IndexMismatchError

INDEX_FILE, VECTORS_FILE, IDS_FILE, META_FILE = (
    "dense_ivfpq.faiss",
    "dense_f16.npy",
    "dense_ids.npy",
    "dense_ivfpq.json",
)
TRAIN_MAX = 200_000  # vectors sampled to train the coarse quantizer and the PQ codebooks


class IvfPqParams(BaseModel):
    nlist: int = 0  # 0: about 4 sqrt(N), at most N / 39 (FAISS's minimum points per centroid)
    pq_m: int = 48  # sub-quantizers; must divide the dimension
    pq_bits: int = 4  # 4: fast-scan codes; 8: classic PQ
    nprobe: int = 1024  # the settings' defaults (core/settings.py says why)
    rescore_k: int = 2000
    seed: int = 13


def auto_nlist(n: int) -> int:
    return max(1, min(int(4 * math.sqrt(n)), n // 39))


def factory_string(params: IvfPqParams, n: int, dim: int) -> str:
    """The FAISS index: IVF-PQ; below 1,000 vectors (too few to train PQ codebooks) IVF1,Flat (exact)."""
    if n < 1000:
        return "IVF1,Flat"
    nlist = params.nlist or auto_nlist(n)
    m = params.pq_m if dim % params.pq_m == 0 else next(d for d in range(params.pq_m, 0, -1) if dim % d == 0)
    codes = f"PQ{m}x4fs" if params.pq_bits == 4 else f"PQ{m}"
    return f"IVF{nlist},{codes}"


def _ids_array(ids: list[str]) -> np.ndarray:
    if all(p.isdigit() and len(p) < 19 and (p == "0" or not p.startswith("0")) for p in ids):
        return np.array([int(p) for p in ids], dtype=np.int64)
    return np.array(ids, dtype=np.str_)


class IvfPqIndex:
    """`search(query_vectors, k)` like `DenseIndex`: [(pmid, exact inner product)] per query."""

    kind = "ivfpq"

    def __init__(self, index: faiss.Index, vectors: np.ndarray, ids: np.ndarray, params: IvfPqParams) -> None:
        self.index = index
        self.vectors = vectors
        self.ids = ids
        self.params = params
        faiss.extract_index_ivf(index).nprobe = params.nprobe

    @classmethod
    def build(
        cls,
        chunks: Iterable[tuple[list[str], np.ndarray]],
        n: int,
        dim: int,
        folder: Path,
        params: IvfPqParams,
    ) -> IvfPqIndex:
        """Stream (ids, float32 vectors) chunks into the float16 file, then train and fill the index."""
        folder.mkdir(parents=True, exist_ok=True)
        for name in (META_FILE, INDEX_FILE):  # an interrupted build must not look complete
            (folder / name).unlink(missing_ok=True)
        vectors = np.lib.format.open_memmap(
            folder / VECTORS_FILE, mode="w+", dtype=np.float16, shape=(n, dim)
        )
        ids: list[str] = []
        for chunk_ids, chunk in chunks:
            vectors[len(ids) : len(ids) + len(chunk_ids)] = chunk.astype(np.float16)
            ids.extend(chunk_ids)
        if len(ids) != n:
            raise IndexMismatchError(f"ivfpq build: expected {n} vectors, got {len(ids)}")
        vectors.flush()
        np.save(folder / IDS_FILE, _ids_array(ids))
        index = faiss.index_factory(dim, factory_string(params, n, dim), faiss.METRIC_INNER_PRODUCT)
        rng = np.random.default_rng(params.seed)
        sample = np.sort(rng.choice(n, size=min(n, TRAIN_MAX), replace=False))
        index.train(np.ascontiguousarray(vectors[sample], dtype=np.float32))
        for start in range(0, n, 100_000):
            index.add(np.ascontiguousarray(vectors[start : start + 100_000], dtype=np.float32))
        faiss.write_index(index, str(folder / INDEX_FILE))
        (folder / META_FILE).write_text(json.dumps({"n": n, "dim": dim, "params": params.model_dump()}))
        return cls.load(folder, params)

    @classmethod
    def load(cls, folder: Path, params: IvfPqParams | None = None) -> IvfPqIndex:
        meta_path = folder / META_FILE
        if not meta_path.is_file():
            raise IndexMismatchError(f"{folder}: no complete IVF-PQ index (rebuild it)")
        meta = json.loads(meta_path.read_text())
        index = faiss.read_index(str(folder / INDEX_FILE))
        vectors = np.load(folder / VECTORS_FILE, mmap_mode="r")
        ids = np.load(folder / IDS_FILE)
        if not index.ntotal == len(vectors) == len(ids) == meta["n"]:
            raise IndexMismatchError(
                f"{folder}: {index.ntotal} coded vectors, {len(vectors)} float16 rows, {len(ids)} ids"
            )
        return cls(index, vectors, ids, params or IvfPqParams(**meta["params"]))

    def search(self, query_vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        k = min(k, len(self.ids))
        if k == 0:
            return [[] for _ in range(len(query_vectors))]
        queries = np.ascontiguousarray(query_vectors, dtype=np.float32)
        _, rows = self.index.search(queries, max(k, self.params.rescore_k))
        results = []
        for query, row_ids in zip(queries, rows, strict=True):
            candidates = np.unique(row_ids[row_ids >= 0])  # sorted: the float16 file is read in order
            exact = self.vectors[candidates].astype(np.float32) @ query
            order = np.lexsort((candidates, -exact))[:k]
            results.append([(str(self.ids[candidates[i]]), float(exact[i])) for i in order])
        return results

    def __len__(self) -> int:
        return len(self.ids)
