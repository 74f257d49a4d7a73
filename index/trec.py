"""TREC run files and qrels: the one owner of these formats; the measures come from `ir_measures`.

A run line is `qid Q0 docno rank score tag` (trec_eval's format); a qrels line is `qid 0 docno relevance`.
PubMedQA has built-in qrels: each question's relevant document is its own source abstract.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import ir_measures
from ir_measures import AP, RR, R, nDCG

from biocite.errors import InputError
from biocite.files import atomic_write_text

# nDCG@10, recall at 1/10/100, MAP and MRR: what `biocite eval-retrieval` and the benchmarks report.
DEFAULT_MEASURES = (nDCG @ 10, R @ 1, R @ 10, R @ 100, AP, RR)
Ranking = Sequence[tuple[str, float]]  # (docno, score), best first


def ranked(docnos: Sequence[str]) -> list[tuple[str, float]]:
    """A ranking given only as an order: strictly decreasing scores, so every tool keeps that order."""
    return [(docno, float(len(docnos) - i)) for i, docno in enumerate(docnos)]


def format_run(rankings: Mapping[str, Ranking], tag: str = "biocite") -> str:
    lines = []
    for qid, ranking in rankings.items():
        for rank, (docno, score) in enumerate(ranking, start=1):
            lines.append(f"{qid} Q0 {docno} {rank} {score:.6f} {tag}\n")
    return "".join(lines)


def write_run(path: Path, rankings: Mapping[str, Ranking], tag: str = "biocite") -> Path:
    """Write a TREC run atomically (a crash never leaves half a file under the final name)."""
    atomic_write_text(path, format_run(rankings, tag))
    return path


def run_docs(rankings: Mapping[str, Ranking]) -> list[ir_measures.ScoredDoc]:
    return [
        ir_measures.ScoredDoc(qid, docno, float(score))
        for qid, ranking in rankings.items()
        for docno, score in ranking
    ]


def read_run(path: Path) -> list[ir_measures.ScoredDoc]:
    return _read(path, "run", 6, lambda f: [ir_measures.ScoredDoc(f[0], f[2], float(f[4]))])


def read_qrels(path: Path) -> list[ir_measures.Qrel]:
    return _read(path, "qrels", 4, lambda f: [ir_measures.Qrel(f[0], f[2], int(f[3]))])


def _read(path: Path, kind: str, fields: int, parse) -> list:  # type: ignore[no-untyped-def]
    if not path.is_file():
        raise InputError(f"{path}: {kind} file not found")
    rows = []
    with path.open(encoding="utf-8", errors="strict") as handle:
        try:
            for number, line in enumerate(handle, start=1):
                parts = line.split()
                if not parts:
                    continue
                try:
                    if len(parts) != fields:
                        raise ValueError(f"expected {fields} fields, found {len(parts)}")
                    rows.extend(parse(parts))
                except ValueError as exc:
                    raise InputError(f"{path}:{number}: not a TREC {kind} line ({exc})") from None
        except UnicodeDecodeError:
            raise InputError(f"{path}: not UTF-8 text") from None
    if not rows:
        raise InputError(f"{path}: the {kind} file is empty")
    return rows


def source_qrels(pairs: Iterable[tuple[str, str]]) -> list[ir_measures.Qrel]:
    """Qrels with one relevant document per query: (qid, docno)."""
    return [ir_measures.Qrel(qid, docno, 1) for qid, docno in pairs]


def evaluate(
    run: Iterable[ir_measures.ScoredDoc],
    qrels: Iterable[ir_measures.Qrel],
    measures: Sequence = DEFAULT_MEASURES,
) -> dict[str, float]:
    """Mean of each measure over the queries that have qrels (a query the run misses scores 0)."""
    qrels = list(qrels)
    run = [d for d in run if math.isfinite(d.score)]
    judged = {q.query_id for q in qrels}
    missing = judged - {d.query_id for d in run}
    # ir_measures averages over the queries present in the run: pad so a missed query counts as 0.
    run += [ir_measures.ScoredDoc(qid, "__none__", 0.0) for qid in sorted(missing)]
    result = ir_measures.calc_aggregate(measures, qrels, run)
    return {str(m): float(result.get(m, 0.0)) for m in measures}
