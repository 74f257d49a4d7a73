"""Parse the generator's text into sentences with [n] markers, robustly; count words without markers."""

from __future__ import annotations

import re

import pysbd
from pydantic import BaseModel, Field

# [1], [1, 2], [1-3], [1][2], [PMID 123], (PMID: 123), [Evidence 2]
_NUMS = r"(\d+(?:\s*(?:[,;]|-|–|and)\s*(?:pmid:?\s*)?\d+)*)"
_MARKER = re.compile(
    rf"\s*(?:\[\s*(?:(?:evidence|refs?\.?|pmid:?)\s*)?{_NUMS}\s*\]|\(\s*pmids?:?\s*{_NUMS}\s*\))",
    re.IGNORECASE,
)
# A marker group written after the full stop ("... risk. [1] Next") belongs to the sentence before it.
_AFTER_STOP = re.compile(r"([.!?])((?:\s*\[[^\]]{1,40}\])+)")
_LEADING = re.compile(r"^\s*(?:answer|response)\s*:\s*", re.IGNORECASE)
_WORDS = re.compile(r"\S+")
# Words that only made sense pointing at the marker right after them ("as evidenced by [2]", "and [7]").
_SLOT = "\x00"
_DANGLING = re.compile(
    r"\s*,?\s*\b(?:as\s+(?:evidenced|shown|reported|demonstrated|described|seen|noted|indicated|found)"
    rf"\s+(?:by|in)|according\s+to|see|and|or|in)\s*(?={_SLOT})",
    re.IGNORECASE,
)

_REPORTS = (
    r"(?:shows?|showed|shown|found|finds|reports?|reported|suggests?|suggested|demonstrates?|demonstrated"
    r"|indicates?|indicated|concludes?|concluded)\b"
)
# A marker standing for the study's authors: "The study by [1] shows ...", "Results from [2] suggest ..." (kept
# as "The study by shows ...") and "However, [3] shows ..." (kept as "However, shows ...") read as "The study
# shows", "Results suggest", "However, a study shows"; "A review of [2] trials" keeps its "of".
_BY_MARKER = re.compile(
    rf"\b((?:study|studies|trial|trials|analysis|review|report|work|results|data|findings|evidence)\s+)(?:by|of|from|in)\s*{_SLOT}\s*(?={_REPORTS})",
    re.IGNORECASE,
)
_MARKER_SUBJECT = re.compile(rf"^((?:\w+,\s*)?){_SLOT}\s*(?={_REPORTS})", re.IGNORECASE)


def _subject(match: re.Match[str]) -> str:
    lead = match.group(1)
    return f"{lead.rstrip()} a study " if lead else "A study "


class DraftSentence(BaseModel):
    text: str  # without markers
    evidence_ids: list[int] = Field(default_factory=list)  # 1-based numbers into the evidence list
    pmids: list[str] = Field(default_factory=list)  # PMIDs named directly ("PMID 123")
    invalid: list[str] = Field(default_factory=list)  # markers naming nothing in the list


def _numbers(group: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"\s*(?:[,;]|and)\s*", group):
        part = re.sub(r"(?i)pmid:?\s*", "", part).strip()
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2 and all(b.isdigit() for b in bounds) and 0 < int(bounds[1]) - int(bounds[0]) < 10:
            out.extend(range(int(bounds[0]), int(bounds[1]) + 1))
        elif part.isdigit():
            out.append(int(part))
    return out


def strip_markers(text: str) -> str:
    text = _MARKER.sub(_SLOT, text)
    text = _MARKER_SUBJECT.sub(_subject, _BY_MARKER.sub(r"\1", text.strip()))
    text = _DANGLING.sub("", text).replace(_SLOT, "")
    text = re.sub(r"\(\s*\)", "", text)
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return " ".join(text.split())


def count_words(text: str) -> int:
    """Words of `text` with citation markers removed (the BioGen limits count this way)."""
    return len(_WORDS.findall(strip_markers(text)))


def parse_generation(text: str, n_evidence: int, known_pmids: set[str]) -> list[DraftSentence]:
    """Sentences of the generator's answer with the evidence numbers / PMIDs each cites."""
    text = _LEADING.sub("", text.strip())
    if not _MARKER.match(text):  # markers lead their sentences when the text opens with one ("[1] ...")
        text = _AFTER_STOP.sub(lambda m: f"{m.group(2)}{m.group(1)}", text)
    drafts = []
    for raw in pysbd.Segmenter(language="en", clean=False).segment(text):
        ids: list[int] = []
        pmids: list[str] = []
        invalid: list[str] = []
        for match in _MARKER.finditer(raw):
            for number in _numbers(match.group(1) or match.group(2)):
                if 1 <= number <= n_evidence:
                    ids.append(number)
                elif str(number) in known_pmids:
                    pmids.append(str(number))
                else:
                    invalid.append(str(number))
        clean = strip_markers(raw)
        if sum(c.isalpha() for c in clean) < 3:
            continue
        drafts.append(
            DraftSentence(
                text=clean,
                evidence_ids=list(dict.fromkeys(ids)),
                pmids=list(dict.fromkeys(pmids)),
                invalid=invalid,
            )
        )
    return drafts


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def repeat_flags(drafts: list[DraftSentence], overlap: float = 0.8) -> list[bool]:
    """Whether each draft repeats an earlier kept one (small models loop): same content words, or a
    Jaccard overlap of at least `overlap`."""
    seen: list[set[str]] = []
    flags = []
    for draft in drafts:
        words = _content_words(draft.text)
        repeat = any(words == s or len(words & s) >= overlap * len(words | s) for s in seen)
        if not repeat:
            seen.append(words)
        flags.append(repeat)
    return flags


def drop_repeats(drafts: list[DraftSentence], overlap: float = 0.8) -> tuple[list[DraftSentence], int]:
    """Drop drafts that repeat an earlier one. Returns the kept drafts and how many were dropped."""
    kept = [d for d, repeat in zip(drafts, repeat_flags(drafts, overlap), strict=True) if not repeat]
    return kept, len(drafts) - len(kept)


def within_limits(drafts: list[DraftSentence], max_words: int, max_sentences: int) -> list[DraftSentence]:
    """The leading drafts an answer keeps: at most `max_sentences`, and none once the words would pass
    `max_words` (citation markers not counted)."""
    kept: list[DraftSentence] = []
    words = 0
    for draft in drafts[:max_sentences]:
        words += count_words(draft.text)
        if words > max_words:
            break
        kept.append(draft)
    return kept


def nothing_more_fits(
    text: str, n_evidence: int, known_pmids: set[str], max_words: int, max_sentences: int, loop: int = 2
) -> str | None:
    """Why no sentence the generator writes after `text` could be kept, or None. The finished sentences
    (the last one parsed may be unfinished) already reach the answer's sentence or word limit
    (`within_limits`), so anything after them is cut; or the last `loop` of them all repeat earlier ones:
    the model is looping."""
    drafts = parse_generation(text, n_evidence, known_pmids)[:-1]
    flags = repeat_flags(drafts)
    if len(flags) >= loop and all(flags[-loop:]):
        return f"the generator repeated itself {loop} times in a row"
    kept = [d for d, repeat in zip(drafts, flags, strict=True) if not repeat]
    if len(kept) >= max_sentences:
        return f"{max_sentences} sentences written"
    if len(within_limits(kept, max_words, max_sentences)) < len(kept):
        return f"{max_words} words written"
    return None
