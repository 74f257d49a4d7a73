"""The retrieval interface the agent, the server and the evaluator are typed against.

`biocite.index.hybrid.HybridRetriever` implements `Retriever` over an index folder; the tests implement it
in memory. A search hit carries its `Document` and sentences (`SearchHit.document`, `.sentences`), so
nothing downstream fetches a retrieved abstract again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from biocite.records import Document, SearchHit, Sentence


class DocumentSource(Protocol):
    """Stored abstracts and their sentence split (index/store.py `DocStore`)."""

    def get(self, pmid: str) -> Document | None: ...

    def get_many(self, pmids: Sequence[str]) -> dict[str, Document]: ...

    def sentences(self, pmid: str) -> list[Sentence]: ...

    def pmids(self) -> list[str]: ...

    def __contains__(self, pmid: object) -> bool: ...

    def __len__(self) -> int: ...


@runtime_checkable
class TokenSource(Protocol):
    """A source that also keeps each abstract's BM25 tokens (for document frequencies)."""

    def iter_tokens(self) -> Iterator[tuple[str, list[str]]]: ...


class Encoder(Protocol):
    """Sentence embeddings, L2-normalised, one row per text."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str], *, batch_size: int = 64, progress: bool = False) -> np.ndarray: ...


class Retriever(Protocol):
    """Search over a document source; hits carry their documents."""

    @property
    def documents(self) -> DocumentSource: ...

    @property
    def encoder(self) -> Encoder: ...

    def search(self, query: str, k: int = 10, *, stage: str | None = None) -> list[SearchHit]: ...
