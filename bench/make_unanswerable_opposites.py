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

import argparse
import json
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).parent))

from agent_concepts import Corpus  # noqa: E402
from make_unanswerable_designators import covering_others, indexed_corpus, titles  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=40)
    args = parser.parse_args()
    corpus, bars = indexed_corpus()
    out = []
    for pmid, title in titles(corpus):
        m = _QUALIFIED.search(title)
        if m is None:
            continue
        qualifier, word = m.group(1), m.group(2)
        if word.casefold() in STOPWORDS:  # "secondary to": no qualified word
            continue
        opposite = OPPOSITE[qualifier.casefold()]
        opposite = opposite.capitalize() if qualifier[0].isupper() else opposite
        question = f"What is known about {title}?"
        covering = covering_others(corpus, question, f"{qualifier} {word}", bars)
        if not covering or any(writes(x, opposite, word) for x in covering):
            continue
        swapped = (
            question[: m.start() + 20] + opposite + question[m.end(1) + 20 :]
        )  # 20: "What is known about "
        item = {"question": swapped, "from_pmid": pmid, "qualified": f"{qualifier} {word}",
                "swapped": f"{opposite} {word}"}  # fmt: skip
        out.append(item)
        print(f"{pmid}: {item['qualified']!r} -> {item['swapped']!r}  {swapped[:100]}")
        if len(out) >= args.n:
            break
    about = (
        "Questions 'What is known about <title>?' from the titles of indexed abstracts (none of them a PubMedQA "
        "question) with their first qualifier (acute/chronic, left/right, upper/lower, primary/secondary, ...) "
        "turned into its opposite where no abstract covering the question's other concepts writes the opposite "
        "before the same word (a plain regular expression; bench/make_unanswerable_opposites.py)."
    )
    OUT.write_text(json.dumps({"about": about, "questions": out}, indent=1) + "\n")
    print(f"{len(out)} questions written to {OUT}")


if __name__ == "__main__":
    main()
