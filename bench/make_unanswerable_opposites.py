"""Build bench/agent_unanswerable_opposites.json (issue 12): questions made unanswerable by turning a qualifier
into its opposite, "acute pancreatitis" into "chronic pancreatitis", "left ventricular" into "right ventricular".

Source questions: the titles of indexed abstracts (PubMedQA's own 500 have none) with a qualifier of
`agent/opposites.py` before a word, asked as "What is known about <title>?", in PMID order. The first
qualifier is replaced by its opposite when no abstract covering the question's other concepts writes the
opposite qualifier before that word (a plain case-insensitive regular expression on the words as written,
hyphen or space between, not the opposites module).

    python bench/make_unanswerable_opposites.py [--n 40]
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).parent))

from agent_concepts import Corpus  # noqa: E402
from make_unanswerable_designators import build, covering_others  # noqa: E402

from biocite.agent.opposites import PAIRS  # noqa: E402
from biocite.tokenize import STOPWORDS  # noqa: E402

OUT = Path(__file__).with_name("agent_unanswerable_opposites.json")
OPPOSITE = {**{a: b for a, b in PAIRS}, **{b: a for a, b in PAIRS}}
_QUALIFIED = re.compile(rf"\b({'|'.join(sorted(OPPOSITE, key=len, reverse=True))})[\s-]+([A-Za-z]+)", re.I)


def writes(text: str, qualifier: str, word: str) -> bool:
    """Whether the text writes this qualifier before this word (its plural or adjective ending too)."""
    return bool(re.search(rf"\b{qualifier}[\s-]+{re.escape(word[:5])}", text, re.IGNORECASE))


def still_unanswerable(corpus: Corpus, item: dict, bars: tuple[float, ...]) -> bool:
    """The written question re-checked against this index: no abstract covering its other concepts writes
    the swapped-in qualifier before the word."""
    qualifier, word = item["swapped"].split()
    covering = covering_others(corpus, item["question"], item["swapped"], bars)
    return bool(covering) and not any(writes(x, qualifier, word) for x in covering)


def opposite_swap(corpus: Corpus, bars: tuple[float, ...], question: str) -> dict | None:
    """The question with its first qualifier turned into its opposite where no abstract covering its other
    concepts writes the opposite before the same word (an item of the set), or None."""
    m = _QUALIFIED.search(question)
    if m is None:
        return None
    qualifier, word = m.group(1), m.group(2)
    if word.casefold() in STOPWORDS:  # "secondary to": no qualified word
        return None
    opposite = OPPOSITE[qualifier.casefold()]
    opposite = opposite.capitalize() if qualifier[0].isupper() else opposite
    covering = covering_others(corpus, question, f"{qualifier} {word}", bars)
    if not covering or any(writes(x, opposite, word) for x in covering):
        return None
    swapped = question[: m.start()] + opposite + question[m.end(1) :]
    return {"question": swapped, "qualified": f"{qualifier} {word}", "swapped": f"{opposite} {word}"}


ABOUT = (
    "Questions 'What is known about <title>?' from the titles of indexed abstracts (none of them a PubMedQA "
    "question) with their first qualifier (acute/chronic, left/right, upper/lower, primary/secondary, ...) "
    "turned into its opposite where no abstract covering the question's other concepts writes the opposite "
    "before the same word (a plain regular expression; bench/make_unanswerable_opposites.py)."
)


if __name__ == "__main__":
    build(__doc__ or "", OUT, ABOUT, opposite_swap)
