"""Indexed abstracts as people read them, sentence by sentence: `biocite show` and `GET /v1/documents`.

The one owner of the document view. Sentence numbers and offsets are the ones an Answer's evidence carries
(`Evidence.sentence_index`, `span`), so a quoted sentence can be found in its whole abstract, offline.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from pydantic import BaseModel, Field
from rich.console import Console
from rich.markup import escape

from biocite.index.store import DocStore, read_manifest
from biocite.retrieval import DocumentSource


class SentenceView(BaseModel):
    index: int
    start: int
    end: int
    text: str


class DocumentView(BaseModel):
    pmid: str
    title: str
    abstract: str
    year: int | None = None
    journal: str | None = None
    url: str
    sentences: list[SentenceView] = Field(description="Offsets index `abstract`, like the spans in Answer.")


def open_documents(settings: Any) -> DocStore:
    """The built index's document store, read only (a one-line error when there is no index)."""
    read_manifest(settings.index_dir)
    return DocStore(settings.index_dir / "docs.sqlite", readonly=True)


def document_views(store: DocumentSource, pmids: Sequence[str]) -> list[DocumentView]:
    """The indexed ones of `pmids`, in that order; unknown PMIDs are left out."""
    found = store.get_many(list(pmids))
    views = []
    for pmid in pmids:
        doc = found.get(pmid)
        if doc is None:
            continue
        sentences = [
            SentenceView(index=s.index, start=s.start, end=s.end, text=s.text) for s in store.sentences(pmid)
        ]
        views.append(
            DocumentView(pmid=doc.pmid, title=doc.title, abstract=doc.abstract, year=doc.year,
                         journal=doc.journal, url=doc.url, sentences=sentences)
        )  # fmt: skip
    return views


def print_document(console: Console, view: DocumentView, quoted: Collection[int] = ()) -> None:
    """Title, source and link, then each sentence under its number; the `quoted` ones (an answer's evidence)
    marked, so a quote is read in its abstract."""
    source = ", ".join(str(x) for x in (view.journal, view.year) if x)
    console.print(f"[bold]{escape(view.title)}[/bold]")
    console.print(f"PMID {view.pmid}{f' · {escape(source)}' if source else ''} · {view.url}", highlight=False)
    for sentence in view.sentences:
        mark, style = ("»", "bold") if sentence.index in quoted else (" ", "")
        text = f"[{style}]{escape(sentence.text)}[/{style}]" if style else escape(sentence.text)
        console.print(f"{mark} [dim]{sentence.index:>2}[/dim]  {text}", highlight=False)
    console.print()
