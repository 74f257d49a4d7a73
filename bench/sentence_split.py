"""Sentence splitting time against text length: pysbd alone vs biocite's split (pysbd on pieces of at
most 4,000 characters cut at sentence ends), on repeated abstract-like sentences and on one long run of
words with no full stop. A 25 MB abstract used to hang ingestion; records are now also capped at 100,000
characters (index/readers.py), so the largest split is the last row's size.

    nice -n 5 .venv/bin/python bench/sentence_split.py
"""

from __future__ import annotations

import time

from biocite import sentences
from biocite.records import Document

SENTENCE = "Patients with migraine received riboflavin 400 mg daily for three months (p<.05). "
WORDS = "riboflavin reduced migraine days in adults with episodic migraine and aura "


def seconds(fn, text: str) -> float:
    started = time.perf_counter()
    fn(text)
    return time.perf_counter() - started


def main() -> None:
    print(f"{'text':<12} {'chars':>8} {'pysbd alone s':>14} {'biocite s':>10}")
    for name, unit in (("sentences", SENTENCE), ("no stops", WORDS)):
        for n in (8_000, 16_000, 32_000, 100_000):
            text = (unit * (n // len(unit) + 1))[:n]
            alone = seconds(lambda t: sentences._piece_spans(t, 0), text) if n <= 32_000 else float("nan")
            ours = seconds(lambda t: sentences.split_sentences(Document(pmid="1", abstract=t)), text)
            print(f"{name:<12} {n:>8,} {alone:>14.2f} {ours:>10.2f}")


if __name__ == "__main__":
    main()
