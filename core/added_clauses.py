"""Claims that add a clause their evidence never mentions: "Metformin lowered HbA1c, and it also halved
all-cause mortality." against a trial that reports HbA1c only.

The fine-tuned cross-encoder reads whether the evidence says what the claim's main clause says; a clause
added after it ("..., whereas the opposite held in postmenopausal women", "..., especially in patients over
80") hardly moves it (held-out hard cases judged not supports: 0.625). A generated sentence that adds such a
clause is the unsupported part a citation check exists to catch.

A trailing clause opens after a comma with a conjunction, a relative pronoun or a focusing word ("and",
"whereas", "which", "especially", "as shown ..."); it is *added* when it has at least `MIN_WORDS` content
words (stemmed), no sentence of the passage has any of them, and it is no caution ("..., although further
studies are needed"). The verdict is then neutral, not contradicted: the evidence is silent about the
clause. Conservative on purpose: one shared word ("..., especially in elderly patients" against a passage
that names patients) leaves the judgement to the model, and so does a clause of one or two words. It is measured in `bench/added_clauses.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from biocite.support_data import content_words
from biocite.tokenize import stem_words

_OPENERS = (
    "and|but|whereas|although|though|while|which|who|whose|especially|particularly|notably|even|thereby|"
    "as shown|as reported|as demonstrated|as seen|in turn"
)
_TRAILING = re.compile(rf",\s+(?=(?:{_OPENERS})\b)", re.IGNORECASE)
_OPENER = re.compile(rf"^(?:{_OPENERS})\b", re.IGNORECASE)
MIN_WORDS = 3  # content words a clause needs before its absence from the evidence says anything
# A caution is no claim of fact: "..., although these findings need to be interpreted with caution" (a TRAIN
# PubMedQA conclusion); the words are the hedges of the verdict's cues (agent/verdict.py).
_CAUTION = re.compile(
    r"\b(?:caution|cautious(?:ly)?|further (?:stud|research|trials|investigation)\w*|need(?:s|ed)? to be"
    r"|remains? (?:unclear|unknown|to be)|warrant\w*|unclear|uncertain|unknown|preliminary)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class AddedClause:
    clause: str  # as the claim writes it, without the comma and final stop


def _stems(text: str) -> set[str]:
    return set(stem_words(sorted(content_words(text))))


def trailing_clauses(claim: str) -> list[str]:
    """The clauses after the claim's main clause, in order ("..., whereas X" -> ["whereas X"])."""
    return [part.strip().rstrip(" .;") for part in _TRAILING.split(claim)[1:]]


def added_clause(claim: str, sentences: Sequence[str]) -> AddedClause | None:
    """The first trailing clause of the claim that no sentence of the passage mentions, or None."""
    clauses = trailing_clauses(claim)
    if not clauses:
        return None
    passage = _stems(" ".join(sentences))
    for clause in clauses:
        words = _stems(_OPENER.sub("", clause))  # "particularly" says nothing the evidence should
        if len(words) >= MIN_WORDS and not words & passage and not _CAUTION.search(clause):
            return AddedClause(clause)
    return None
