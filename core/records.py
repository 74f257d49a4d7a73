"""Records that cross module boundaries: documents, sentences, search hits.

Offsets are character offsets into `Document.abstract` (the stored abstract text), so a citation can point
at an exact span: `doc.abstract[s.start:s.end] == s.text` always holds.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Section(BaseModel):
    """A labelled part of a structured abstract (BACKGROUND, METHODS, ...)."""

    label: str | None = None
    start: int
    end: int


class Document(BaseModel):
    """One PubMed abstract."""

    pmid: str
    title: str = ""
    abstract: str = ""
    sections: list[Section] = Field(default_factory=list)
    year: int | None = None
    journal: str | None = None
    mesh: list[str] = Field(default_factory=list)
    publication_types: list[str] = Field(default_factory=list)

    @property
    def url(self) -> str:
        return f"https://pubmed.ncbi.nlm.nih.gov/{self.pmid}/"

    @property
    def text(self) -> str:
        """Title and abstract, as indexed."""
        return f"{self.title}\n{self.abstract}".strip()


class Sentence(BaseModel):
    """One sentence of an abstract, addressable as (pmid, index, start, end)."""

    pmid: str
    index: int
    start: int
    end: int
    text: str


class SearchHit(BaseModel):
    """One retrieved abstract with the scores of each retrieval stage that saw it."""

    pmid: str
    title: str
    score: float
    rank: int
    stage_scores: dict[str, float] = Field(default_factory=dict)
    best_sentence: Sentence | None = None
