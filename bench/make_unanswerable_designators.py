"""Build bench/agent_unanswerable_designators.json (issue 12): questions made unanswerable by changing a
designator, "type 2" to "type 1", "stage III" to "stage I", "phase II" to "phase III", "type A" to "type B".

Source questions: the titles of indexed abstracts (PubMedQA's own 500 have none, so none of its questions is
used) that name a designation (`agent/designators.py`: type, stage, grade, phase, class ... and a number,
roman numeral or capital letter), asked as "What is known about <title>?", in PMID order. The first
designation of the title gets the first other value (1-4, or A-D; written as the title writes numerals)
that no abstract covering the question's other concepts names. That check is a plain regular expression of
the new designation in roman and arabic numerals ("stage I", "stage 1", "stages I-II" ...), not the
designators module, so the set does not take the agent's reading as its own gold.

    python bench/make_unanswerable_designators.py [--n 40]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).parent))

from agent_concepts import Corpus  # noqa: E402

from biocite.agent.coverage import covers, key_concepts  # noqa: E402
from biocite.agent.designators import merge, of_token  # noqa: E402
from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

OUT = Path(__file__).with_name("agent_unanswerable_designators.json")
ROMAN = {1: "I", 2: "II", 3: "III", 4: "IV"}


def spellings(value: str) -> list[str]:
    """A designator value ('2', 'b') as abstracts may write it: arabic and roman numerals, or the letter."""
    return [value] if value.isalpha() else [value, ROMAN[int(value)]]


def names(text: str, classifier: str, value: str) -> bool:
    """Whether the text names this designation, alone, with a sub-stage ("type 2A") or in a list or range
    ("stages II and III", "I-III")."""
    forms = "|".join(re.escape(s) for s in spellings(value))
    plural = "(?:s|es)?" if classifier != "category" else "(?:y|ies)"
    stem = classifier if classifier != "category" else "categor"
    between = r"(?:[\s,/–-]+(?:and|or|to)?\s*[0-9IVXA-E]{1,4}[a-c]?)*"
    return bool(re.search(rf"\b{stem}{plural}[\s-]+(?:[0-9IVXA-E]{{1,4}}[a-c]?{between}[\s,/–-]+(?:and|or|to)?\s*)?"
                          rf"(?:{forms})[a-c]?\b", text, re.IGNORECASE))  # fmt: skip


def designation_swap(corpus: Corpus, bars: tuple[float, ...], question: str) -> dict | None:
    """The question with its first designation changed to a value no abstract covering its other concepts
    names (an item of the set), or None."""
    tokens = [t for t in merge(re.findall(r"[\w'-]+|[^\w\s]", question)) if of_token(t)]
    if not tokens or len(of_token(tokens[0])) != 1:
        return None
    token = tokens[0]
    classifier, (kind, value) = token.split()[0], of_token(token)[0]
    covering = covering_others(corpus, question, token, bars)
    pool = ["a", "b", "c", "d"] if value.isalpha() else ["1", "2", "3", "4"]
    new = next(
        (v for v in pool if v != value.rstrip("abc") and not any(names(x, kind, v) for x in covering)),
        None,
    )
    if not covering or new is None:
        return None
    roman = not token.split()[1][0].isdigit()
    written = new.upper() if new.isalpha() else (ROMAN[int(new)] if roman else new)
    swapped_token = f"{classifier} {written}"
    swapped = re.sub(
        rf"\b{re.escape(classifier)}[\s-]+{re.escape(token.split()[1])}\b",
        swapped_token,
        question,
        count=1,
    )
    if swapped == question:
        return None
    return {"question": swapped, "designation": token, "swapped": swapped_token}


Swap = Callable[[Corpus, tuple[float, ...], str], "dict | None"]


def build(description: str, out: Path, about: str, swap: Swap) -> None:
    """The set builders' one driver: every indexed title asked as "What is known about <title>?", in PMID
    order; `swap` makes it unanswerable (an item: the question and what was swapped) or returns None; the
    first --n items are written to `out` with the PMID of their title."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=40)
    args = parser.parse_args()
    corpus, bars = indexed_corpus()
    items = []
    for pmid, title in titles(corpus):
        item = swap(corpus, bars, f"What is known about {title}?")
        if item is None:
            continue
        question = item.pop("question")
        items.append({"question": question, "from_pmid": pmid, **item})
        before, after = item.values()
        print(f"{pmid}: {before!r} -> {after!r}  {question[:100]}")
        if len(items) >= args.n:
            break
    out.write_text(json.dumps({"about": about, "questions": items}, indent=1) + "\n")
    print(f"{len(items)} questions written to {out}")


ABOUT = (
    "Questions 'What is known about <title>?' from the titles of indexed abstracts (none of them a PubMedQA "
    "question) with their first designation (type/stage/grade/phase/class ... and a number, roman numeral "
    "or letter) changed to a value that no abstract covering the question's other concepts names (a plain "
    "regular expression, roman and arabic; bench/make_unanswerable_designators.py)."
)


def indexed_corpus() -> tuple[Corpus, tuple[float, ...]]:
    """The index's abstracts (as the concept benches read them) and the agent's four concept bars."""
    settings = load_settings(None, [])
    config = settings.agent
    corpus = Corpus(open_retriever(settings).documents)  # type: ignore[arg-type]
    return corpus, (
        config.max_concept_df,
        config.max_outcome_df,
        config.max_setting_df,
        config.max_subject_df,
    )


def titles(corpus: Corpus) -> list[tuple[str, str]]:
    """(PMID, title without its final period) of every indexed abstract that has a title, in PMID order."""
    named = ((pmid, corpus.docs[pmid].title.strip().rstrip(".")) for pmid in sorted(corpus.docs, key=int))
    return [(pmid, title) for pmid, title in named if title]


def covering_others(corpus: Corpus, question: str, token: str, bars: tuple[float, ...]) -> list[str]:
    """The texts of the abstracts covering the question's concepts other than the one with this designation
    ([] when there is no other concept)."""
    others = [
        k for k in key_concepts(question, corpus.df, *bars) if token.casefold() not in k.text.casefold()
    ]
    if not others:
        return []
    return [corpus.docs[p].text for p, t in corpus.terms.items() if all(covers(k, t) for k in others)]


def still_unanswerable(corpus: Corpus, item: dict, bars: tuple[float, ...]) -> bool:
    """The written question re-checked against this index: no abstract covering its other concepts names the
    swapped-in designation."""
    classifier, value = of_token(item["swapped"])[0]
    covering = covering_others(corpus, item["question"], item["swapped"], bars)
    return bool(covering) and not any(names(x, classifier, value) for x in covering)


if __name__ == "__main__":
    build(__doc__ or "", OUT, ABOUT, designation_swap)
