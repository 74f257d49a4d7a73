"""Search latency on the default corpus: ms per query for BM25 only, dense only, and the full search
(hybrid + rerank + best sentences, as `biocite search` runs it), over ~50 PubMedQA validation questions.

Prints median and p95 per stage, the load average (the box is shared: read timings beside it), the
process's peak RSS and the time to open the retriever.

    python bench/search_latency.py [--preset default] [--set index.reranker=dense] [--n 50]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.index.rerank import validation_questions  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

WARMUP = 3


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def timed(fn: Callable[[str], object], queries: list[str]) -> list[float]:
    for query in queries[:WARMUP]:
        fn(query)
    out = []
    for query in queries:
        started = time.perf_counter()
        fn(query)
        out.append((time.perf_counter() - started) * 1000)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--preset", default=None)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("-k", type=int, default=10)
    args = parser.parse_args(argv)

    settings = load_settings(args.preset, args.overrides)
    cfg = settings.index
    started = time.perf_counter()
    retriever = open_retriever(settings)
    open_s = time.perf_counter() - started
    _ = retriever.idf  # built lazily on the first search; count it in the open time, not in query 1
    open_idf_s = time.perf_counter() - started
    queries = [q.question for q in validation_questions(settings)[: args.n]]
    load_before = os.getloadavg()[0]

    rows = {
        f"bm25 only (top {cfg.bm25_k})": timed(lambda q: retriever.bm25(q, cfg.bm25_k), queries),
        f"dense only (embed + FAISS top {cfg.dense_k})": timed(
            lambda q: retriever.dense(q, cfg.dense_k), queries
        ),
        "hybrid (fused, + best sentences)": timed(
            lambda q: retriever.search(q, k=args.k, stage="hybrid"), queries
        ),
    }
    if retriever.reranker is not None:
        label = f"full search: hybrid + {cfg.reranker} rerank of top {cfg.rerank_k}"
        rows[label] = timed(lambda q: retriever.search(q, k=args.k), queries)

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"index {settings.index_dir}: {len(retriever.documents)} abstracts")
    print(f"{len(queries)} queries, k={args.k}")
    print(f"open retriever {open_s:.1f} s (+ IDF table {open_idf_s - open_s:.1f} s)")
    print()
    print(f"{'stage':52s} {'median ms':>10s} {'p95 ms':>8s}")
    for name, values in rows.items():
        print(f"{name:52s} {statistics.median(values):10.1f} {percentile(values, 0.95):8.1f}")
    print()
    print(f"peak RSS {peak_mb:.0f} MB; load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs (shared box: compare timings only at similar load)")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
