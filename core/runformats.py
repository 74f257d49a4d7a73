"""TREC BioGen run files: the field definitions and the inline-citation grammar, in one place.

BioGen 2024 (https://dmice.ohsu.edu/trec-biogen/submission_format.html): `{team_id, run_name, contact_email,
results: [{topic_id, answer, references}]}`; `answer` is plain text where `[PMID, PMID]` before a sentence's
final punctuation cites that sentence. BioGen 2025 (task B): the same envelope with
`results: [{topic_id, responses: [{text, citations}]}]`.

The models are the official format, strictly (no extra fields, no coercion): `biocite.app.runfiles` writes
and validates through them, `biocite.evaluator.runs` normalises other teams' looser runs into them.

Citations: the official spelling is plain PMIDs, comma-separated (`[123]`, `[123, 456]`). The grammar
also reads `PMID`/`PMID:` prefixes and `;` separators (`[PMID: 123; 456]`), which other runs use; the
validator warns about those spellings and counts their PMIDs the way the evaluator reads them. Any other
bracketed text is not a citation.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints

RunFormat = Literal["biogen2024", "biogen2025"]
FORMATS: tuple[str, ...] = ("biogen2024", "biogen2025")
HEADER_FIELDS = ("team_id", "run_name", "contact_email")

PMID_PATTERN = r"^\d{1,9}$"
Pmid = Annotated[str, StringConstraints(pattern=PMID_PATTERN)]
NonBlank = Annotated[str, StringConstraints(pattern=r"^\s*\S")]


class Limits(BaseModel):
    max_words: int
    max_sentences: int | None  # None: the format sets no sentence limit
    max_citations: int = 3


LIMITS: dict[str, Limits] = {
    "biogen2024": Limits(max_words=150, max_sentences=10),
    "biogen2025": Limits(max_words=250, max_sentences=None),
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Result2024(_Strict):
    topic_id: NonBlank
    answer: str  # "" for an abstained topic
    references: list[Pmid]


class Response2025(_Strict):
    text: str
    citations: list[Pmid]


class Result2025(_Strict):
    topic_id: NonBlank
    responses: list[Response2025]  # [] for an abstained topic


class _Envelope(_Strict):
    team_id: str
    run_name: str
    contact_email: str


class Run2024(_Envelope):
    results: list[Result2024]


class Run2025(_Envelope):
    results: list[Result2025]


RUN_MODELS: dict[str, type[Run2024] | type[Run2025]] = {"biogen2024": Run2024, "biogen2025": Run2025}
RESULT_MODELS: dict[str, type[Result2024] | type[Result2025]] = {
    "biogen2024": Result2024,
    "biogen2025": Result2025,
}


# --- inline citations (2024 answers) ------------------------------------------------------------------

_ITEM = r"(?:PMID:?\s*)?\d{1,9}"
INLINE_CITATION = re.compile(rf"\s*\[\s*({_ITEM}(?:\s*[,;]\s*{_ITEM})*)\s*\]", re.IGNORECASE)
_OFFICIAL = re.compile(r"\[\s*\d{1,9}(?:\s*,\s*\d{1,9})*\s*\]")
_DIGITS = re.compile(r"\d{1,9}")


def marker_pmids(marker: str) -> list[str] | None:
    """PMIDs of one bracketed marker (`[1, 2]`, `[PMID: 1; 2]`), or None when it is not a citation."""
    match = INLINE_CITATION.fullmatch(marker.strip())
    return _DIGITS.findall(match.group(1)) if match else None


def is_official(marker: str) -> bool:
    """Whether a citation marker is spelled the official way (plain PMIDs, comma-separated)."""
    return _OFFICIAL.fullmatch(marker.strip()) is not None


def inline_pmids(text: str) -> list[str]:
    """PMIDs of every citation marker in `text`, in order, repeats kept."""
    return [p for match in INLINE_CITATION.finditer(text) for p in _DIGITS.findall(match.group(1))]


def strip_inline_citations(text: str) -> str:
    """`text` without its citation markers (other bracketed text stays)."""
    return INLINE_CITATION.sub("", text).strip()


def format_citation(pmids: list[str]) -> str:
    return f"[{', '.join(pmids)}]"
