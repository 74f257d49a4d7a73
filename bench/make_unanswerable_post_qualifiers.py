"""Build bench/agent_unanswerable_post_qualifiers.json (issue 12): questions made unanswerable by turning a
qualifier written after its word into its opposite, "HIV antibody-positive individuals" into "HIV
antibody-negative individuals", "methicillin-resistant Staphylococcus" into "methicillin-sensitive Staphylococcus".

Source questions: the titles of indexed abstracts (PubMedQA's own 500 have none) with a hyphened qualifier of
`agent/opposites.py`'s POST_PAIRS before another word, asked as "What is known about <title>?", in PMID order.
The first such qualifier is replaced by its opposite when no abstract covering the question's other concepts
writes the word with the opposite qualifier (a plain case-insensitive regular expression on the words as
written, hyphen or space between, not the opposites module).

    python bench/make_unanswerable_post_qualifiers.py [--n 40]
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

from biocite.agent.coverage import key_concepts  # noqa: E402
from biocite.agent.opposites import POST_PAIRS  # noqa: E402

OUT = Path(__file__).with_name("agent_unanswerable_post_qualifiers.json")
OPPOSITE = {b: a for a, b in POST_PAIRS} | {a: b for a, b in POST_PAIRS[:2]}  # resistant -> sensitive
_QUALIFIED = re.compile(
    rf"\b([A-Za-z0-9]+)-({'|'.join(sorted(OPPOSITE, key=len, reverse=True))})\s+[A-Za-z]", re.I
)


def writes(text: str, word: str, qualifier: str) -> bool:
    """Whether the text writes this word with this qualifier after it ("insulin-dependent", "insulin dependent")."""
    return bool(re.search(rf"\b{re.escape(word)}[\s-]+{qualifier[:6]}", text, re.IGNORECASE))


def others_covering(corpus: Corpus, question: str, token: str, bars: tuple[float, ...]) -> list[str]:
    """`covering_others` for a hyphened token: a concept's text writes "salt-sensitive" as "salt sensitive"."""
    spaced = token.replace("-", " ")
    texts = " ".join(k.text for k in key_concepts(question, corpus.df, *bars)).casefold()
    return covering_others(corpus, question, token if token.casefold() in texts else spaced, bars)


def still_unanswerable(corpus: Corpus, item: dict, bars: tuple[float, ...]) -> bool:
    """The written question re-checked against this index: no abstract covering its other concepts writes
    the word with the swapped-in qualifier."""
    word, qualifier = item["swapped"].split("-")
    covering = others_covering(corpus, item["question"], item["swapped"], bars)
    return bool(covering) and not any(writes(x, word, qualifier) for x in covering)


def post_swap(corpus: Corpus, bars: tuple[float, ...], question: str) -> dict | None:
    """The question with its first post-qualifier turned into its opposite where no abstract covering its
    other concepts writes the opposite after the same word (an item of the set), or None."""
    m = _QUALIFIED.search(question)
    if m is None:
        return None
    word, qualifier = m.group(1), m.group(2)
    opposite = OPPOSITE[qualifier.casefold()]
    covering = others_covering(corpus, question, f"{word}-{qualifier}", bars)
    if not covering or any(writes(x, word, opposite) for x in covering):
        return None
    swapped = question[: m.start(2)] + opposite + question[m.end(2) :]
    return {"question": swapped, "qualified": f"{word}-{qualifier}", "swapped": f"{word}-{opposite}"}


ABOUT = (
    "Questions 'What is known about <title>?' from the titles of indexed abstracts (none of them a PubMedQA "
    "question) with their first hyphened post-qualifier (-positive/-negative, -resistant/-sensitive or "
    "-susceptible) before another word turned into its opposite where no abstract covering the "
    "question's other concepts writes the word with the opposite (a plain regular expression; "
    "bench/make_unanswerable_post_qualifiers.py)."
)


if __name__ == "__main__":
    build(__doc__ or "", OUT, ABOUT, post_swap)
