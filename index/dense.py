"""Dense retrieval: sentence-transformers embeddings and a FAISS index keyed by PMID."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import faiss
import numpy as np

from biocite.errors import ModelError

if TYPE_CHECKING:
    pass


FaissKind = Literal["flat", "hnsw", "ivfpq"]


def choose_faiss_kind(setting: str, n_vectors: int, hnsw_above: int) -> FaissKind:
    if setting in ("flat", "hnsw", "ivfpq"):
        return setting  # type: ignore[return-value]
    return "hnsw" if n_vectors > hnsw_above else "flat"


class DenseIndex:
    """Inner-product FAISS index over normalised vectors; row i belongs to ids[i]."""

    def __init__(self, index: faiss.Index, ids: list[str], kind: FaissKind) -> None:
        self.index = index
        self.ids = ids
        self.kind = kind

    @classmethod
    def build(cls, ids: list[str], vectors: np.ndarray, kind: FaissKind) -> DenseIndex:
        dim = vectors.shape[1]
        if kind == "hnsw":
            hnsw = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
            hnsw.hnsw.efConstruction = 80
            hnsw.hnsw.efSearch = 128
            index: faiss.Index = hnsw
        else:
            index = faiss.IndexFlatIP(dim)
        if len(ids):
            index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        return cls(index, ids, kind)

    def search(self, query_vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        k = min(k, len(self.ids))
        if k == 0:
            return [[] for _ in range(len(query_vectors))]
        scores, rows = self.index.search(np.ascontiguousarray(query_vectors, dtype=np.float32), k)
        return [
            [(self.ids[r], float(s)) for s, r in zip(score_row, row_ids, strict=True) if r >= 0]
            for score_row, row_ids in zip(scores, rows, strict=True)
        ]

    def save(self, folder: Path) -> None:
        tmp = folder / "dense.faiss.tmp"
        faiss.write_index(self.index, str(tmp))
        (folder / "dense_ids.json").write_text(json.dumps({"kind": self.kind, "ids": self.ids}))
        tmp.replace(folder / "dense.faiss")

    @classmethod
    def load(cls, folder: Path) -> DenseIndex:
        meta = json.loads((folder / "dense_ids.json").read_text())
        index = faiss.read_index(str(folder / "dense.faiss"))
        if index.ntotal != len(meta["ids"]):
            raise ModelError(f"{folder}/dense.faiss holds {index.ntotal} vectors but {len(meta['ids'])} ids")
        return cls(index, meta["ids"], meta["kind"])

    def __len__(self) -> int:
        return len(self.ids)
