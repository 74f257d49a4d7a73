"""Where the evaluator reads cited abstracts from, and how it cuts them into 3-sentence windows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from biocite.records import Document, Sentence
from biocite.retrieval import DocumentSource
from biocite.sentences import split_text

WINDOW = 3


class AbstractSource(Protocol):
    def get_many(self, pmids: Sequence[str]) -> dict[str, Document]: ...


class DictSource:
    """Abstracts held in memory (tests, small corpora)."""

    def __init__(self, docs: Mapping[str, Document]) -> None:
        self.docs = dict(docs)

    def get_many(self, pmids: Sequence[str]) -> dict[str, Document]:
        return {p: self.docs[p] for p in pmids if p in self.docs}


def doc_sentences(doc: Document, store: Any | None = None) -> list[str]:
    """The title, then the abstract's sentences (the index's own split when a DocStore is given)."""

    sentences: list[str] = []
    if store is not None and hasattr(store, "sentences"):
        sentences = [s.text for s in store.sentences(doc.pmid)]
    if not sentences:
        sentences = split_text(doc.abstract)
    return ([doc.title] if doc.title.strip() else []) + sentences


def windows(sentences: Sequence[str], size: int = WINDOW) -> list[str]:
    """Sliding windows of `size` consecutive sentences (stride 1); one window when the text is shorter."""
    if len(sentences) <= size:
        return [" ".join(sentences)] if sentences else []
    return [" ".join(sentences[i : i + size]) for i in range(len(sentences) - size + 1)]


class StoreSource:
    """The retriever's documents (the index's DocStore), with their precomputed sentence split."""

    def __init__(self, store: DocumentSource) -> None:
        self.store = store

    def get_many(self, pmids: Sequence[str]) -> dict[str, Document]:
        return dict(self.store.get_many(list(pmids)))

    def sentences(self, pmid: str) -> list[Sentence]:
        return self.store.sentences(pmid)
