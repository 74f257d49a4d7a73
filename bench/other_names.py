"""A drug or condition asked by its other name (issue 12, item 2): does the answer still come from the study?

`biocite.other_names` pairs a drug's international or British name with its United States one
("paracetamol" / "acetaminophen") and a condition's lay or older name with its medical or newer one ("heart
attack" / "myocardial infarction"). Search adds the other names of what a query names to its BM25 terms,
evidence relevance counts a sentence's other name as the question's term, and the agent's coverage counts
either name. No label lists the questions a user asks with the other name, so
this bench makes them from the shipped corpus: each abstract whose title names one of the table's names is
asked its title (as PubMedQA questions are their papers' titles) with that name swapped for its other name,
in extractive mode, with the table on and off. It reports how often the source abstract is retrieved and
cited, and how often the answer says the swapped name is "not covered" or abstains; the titles asked with
their own names are the control (the table must not lose them). The table was written from pharmacology and
clinical naming, not fitted on these titles.

    python bench/other_names.py [--n 60]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from unittest import mock

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).parent))

from biocite import other_names  # noqa: E402
from biocite.agent import coverage  # noqa: E402
from biocite.agent.graph import Agent  # noqa: E402
from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.records import Answer  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus" / "abstracts.jsonl"
PER_NAME = 3


def swapped_titles(n: int) -> list[tuple[str, str, str, str, str]]:
    """(pmid, title, title with a name swapped, the title's name, its other name) for up to `n` corpus titles,
    shuffled (seed 13)."""
    # "hypertension" is mostly a compound's head in titles ("portal", "ocular", "intracranial hypertension"),
    # where "high blood pressure" would make no question anyone asks; nor does "acetylsalicylic" alone, nor the
    # verb "die" in place of a title's noun "mortality"
    pairs = [
        p
        for p in other_names.every_pair()
        if p[1] != "hypertension" and p[0] not in ("acetylsalicylic", "die")
    ]
    names = {**{a: b for a, b in pairs}, **{b: a for a, b in pairs}}
    by_name: dict[str, list[tuple[str, str, str, str, str]]] = {}
    for line in CORPUS.open():
        row = json.loads(line)
        title = row["title"].strip()
        for name, other in sorted(names.items(), key=lambda kv: -len(kv[0])):
            found = re.search(rf"\b{re.escape(name)}(s?)\b", title, re.IGNORECASE)
            if title and found:
                swapped = title[: found.start()] + other + found.group(1) + title[found.end() :]
                by_name.setdefault(name, []).append((row["pmid"], title, swapped, name, other))
                break
    items = []
    for name in sorted(by_name):  # at most PER_NAME titles a name, so that the sample spans the table
        rows = sorted(by_name[name])
        random.Random(13).shuffle(rows)
        items.extend(rows[:PER_NAME])
    random.Random(13).shuffle(items)
    return items[:n]


@contextmanager
def table_off() -> Iterator[None]:
    """Search and coverage as they were before the table: no other names added or counted."""
    with (
        mock.patch("biocite.index.hybrid.search_names", lambda query: []),
        mock.patch("biocite.index.hybrid.with_other_names", lambda query: query),
        mock.patch("biocite.agent.evidence.with_other_names", lambda question: question),
        mock.patch("biocite.agent.evidence.asked_names", lambda question: ()),
        mock.patch.object(coverage, "SYNONYMS", coverage.synonyms(coverage.PLAIN_NAMES)),
        mock.patch.object(coverage, "_condition_written", lambda concept, terms: None),
        mock.patch.object(coverage, "_other_word_name", lambda asked, key, terms: None),
    ):
        yield


def figures(answers: list[tuple[str, str, Answer]]) -> dict[str, float]:
    """Shares over (source pmid, asked name, answer): source retrieved, cited, asked name not covered, abstained."""
    n = len(answers) or 1

    def share(test: Callable[[str, str, Answer], bool]) -> float:
        return round(sum(1 for item in answers if test(*item)) / n, 3)

    return {
        "source_retrieved": share(lambda p, name, a: p in a.trace.retrieved),
        "source_cited": share(lambda p, name, a: p in a.cited_pmids),
        "asked_name_not_covered": share(
            lambda p, name, a: any(name.lower() in c.lower() for c in a.not_covered)
        ),
        "abstained": share(lambda p, name, a: a.abstained),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="corpus titles asked (each four times)")
    args = parser.parse_args()
    settings = load_settings(None, [])
    agent = Agent(settings, retriever=open_retriever(settings))
    items = swapped_titles(args.n)
    print(f"{len(items)} corpus titles naming a drug or condition of the table (seed 13 sample)")
    start = time.perf_counter()
    runs: dict[str, list[tuple[str, str, Answer]]] = {}
    for label, swap, table in [
        ("other name, table on", True, True),
        ("other name, table off", True, False),
        ("own name, table on", False, True),
        ("own name, table off", False, False),
    ]:
        with nullcontext() if table else table_off():
            runs[label] = [
                (pmid, other if swap else own, agent.ask(swapped if swap else title, mode="extractive"))
                for pmid, title, swapped, own, other in items
            ]
        print(f"  {label:22s} {figures(runs[label])}")
    on, off = runs["other name, table on"], runs["other name, table off"]
    gained = [(p, a.question) for (p, _, a), (_, _, b) in zip(on, off, strict=True)
              if p in a.cited_pmids and p not in b.cited_pmids]  # fmt: skip
    lost = [(p, a.question) for (p, _, a), (_, _, b) in zip(on, off, strict=True)
            if p not in a.cited_pmids and p in b.cited_pmids]  # fmt: skip
    print(f"source cited with the other name: table on {len(gained)} gained, {len(lost)} lost vs off")
    for pmid, question in lost:
        print(f"  lost {pmid}: {question}")
    for pmid, _, answer in on:  # to be read: what the other name still misses
        if pmid not in answer.cited_pmids:
            why = answer.abstain_reason or f"not covered: {answer.not_covered}, cited {answer.cited_pmids}"
            print(f"  not cited {pmid}: {answer.question} -- {why[:160]}")
    brands = {brand for brand, _ in other_names.BRANDS}
    for label in ("other name, table on", "other name, table off"):
        asked_brand = [item for item in runs[label] if item[1].casefold() in brands]
        cited = sum(1 for p, _, a in asked_brand if p in a.cited_pmids)
        print(f"  asked by a brand name, {label}: source cited {cited} of {len(asked_brand)}")
    own_on, own_off = runs["own name, table on"], runs["own name, table off"]
    changed = sum(
        1 for (_, _, a), (_, _, b) in zip(own_on, own_off, strict=True) if a.cited_pmids != b.cited_pmids
    )
    print(f"own names: citations changed by the table in {changed} of {len(own_on)}")
    for (pmid, _, a), (_, _, b) in zip(own_on, own_off, strict=True):
        if pmid in b.cited_pmids and pmid not in a.cited_pmids:
            print(f"  own name lost with the table {pmid}: {a.question}")
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
