"""BM25 latency: BM25Index on bm25s (rescaled to Okapi) vs on rank-bm25, on a synthetic corpus.

    python bench/bm25_latency.py [--docs 100000] [--bm25s-queries 500] [--rank-queries 50]

Prints build times, median/p95 latency of 10-term queries, the speed-up, and whether the top-10 of every
query timed on both backends is identical. Figures only; no asserts.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from biocite.index.bm25 import BM25Index

T = TypeVar("T")
SEED = 20261122
ZIPF_EXPONENT = 1.0
HEAD_TERMS = 50  # the commonest terms stand in for stop words: kept in documents, never in queries


def zipf_weights(vocab: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, vocab + 1) ** ZIPF_EXPONENT
    return weights / weights.sum()


def synthetic_token_ids(n_docs: int, mean_len: int, vocab: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated Zipfian term ids and per-document offsets (lengths uniform in [mean/2, 3 mean/2])."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(mean_len // 2, mean_len + mean_len // 2 + 1, size=n_docs)
    draws = rng.choice(vocab, size=int(lengths.sum()), p=zipf_weights(vocab)).astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return draws, offsets


def synthetic_corpus(
    n_docs: int, mean_len: int = 150, vocab: int = 200_000, seed: int = SEED
) -> list[list[str]]:
    """Seeded synthetic documents as token lists; term ``t<r>`` has Zipf rank ``r``."""
    draws, offsets = synthetic_token_ids(n_docs, mean_len, vocab, seed)
    words = [f"t{i}" for i in range(vocab)]
    flat = [words[i] for i in draws.tolist()]
    return [flat[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)]


def synthetic_queries(
    n: int, terms: int, vocab: int, seed: int, skip_head: int = HEAD_TERMS
) -> list[list[str]]:
    """Distinct query terms drawn with the documents' Zipf weights, the ``skip_head`` commonest excluded."""
    rng = np.random.default_rng(seed)
    weights = zipf_weights(vocab)[skip_head:]
    weights /= weights.sum()
    return [
        [f"t{skip_head + i}" for i in rng.choice(len(weights), size=terms, replace=False, p=weights)]
        for _ in range(n)
    ]


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def latencies(index: BM25Index, queries: list[list[str]], k: int = 10) -> tuple[np.ndarray, list[list[str]]]:
    times, tops = [], []
    for query in queries:
        seconds, hits = timed(lambda: index.search(query, k))  # noqa: B023 (called at once)
        times.append(seconds)
        tops.append([doc for doc, _ in hits])
    return np.array(times) * 1000, tops


def describe(name: str, ms: np.ndarray) -> str:
    return f"{name:<22} n={len(ms):>4}  median {np.median(ms):8.2f} ms   p95 {np.percentile(ms, 95):8.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--doc-len", type=int, default=150)
    parser.add_argument("--vocab", type=int, default=200_000)
    parser.add_argument("--terms", type=int, default=10)
    parser.add_argument("--bm25s-queries", type=int, default=500)
    parser.add_argument("--rank-queries", type=int, default=50)
    parser.add_argument("--heavy-rank-queries", type=int, default=10)
    args = parser.parse_args()

    gen_s, corpus = timed(lambda: synthetic_corpus(args.docs, args.doc_len, args.vocab))
    tokens = corpus
    ids = [f"doc{i}" for i in range(len(tokens))]
    n_tokens = sum(map(len, tokens))
    print(
        f"corpus: {len(tokens):,} synthetic docs, {n_tokens / len(tokens):.1f} tokens/doc, "
        f"Zipf s={ZIPF_EXPONENT} over {args.vocab:,} terms, seed {SEED} (generated in {gen_s:.1f} s)"
    )

    fast_build_s, fast = timed(lambda: BM25Index.build(tokens, ids, backend="bm25s"))
    print(f"build bm25s (bm25+ delta 0 + Okapi rescale): {fast_build_s:7.1f} s")
    gc.collect()
    ref_build_s, ref = timed(lambda: BM25Index.build(tokens, ids, backend="rank_bm25"))
    print(f"build rank-bm25 BM25Okapi:                   {ref_build_s:7.1f} s")

    queries = synthetic_queries(max(args.bm25s_queries, args.rank_queries), args.terms, args.vocab, SEED + 1)
    fast.search(queries[0], 10)  # warm-up (first numpy calls)
    fast_ms, fast_tops = latencies(fast, queries[: args.bm25s_queries])
    ref_ms, ref_tops = latencies(ref, queries[: args.rank_queries])
    print(f"\n{args.terms}-term queries, top-10 (query terms Zipf-drawn, {HEAD_TERMS} commonest excluded)")
    print(describe("bm25s (BM25Index)", fast_ms))
    print(describe("rank-bm25 (BM25Index)", ref_ms))
    print(
        f"speed-up (median rank-bm25 / median bm25s): {np.median(ref_ms) / np.median(fast_ms):7.1f}x"
        f"   (p95: {np.percentile(ref_ms, 95) / np.percentile(fast_ms, 95):.1f}x; target >= 50x)"
    )

    shared = args.rank_queries
    same = sum(a == b for a, b in zip(fast_tops[:shared], ref_tops, strict=True))
    max_diff = max(float(np.abs(fast.scores(q) - ref.scores(q)).max()) for q in queries[:shared])
    print(f"top-10 identical on {same}/{shared} queries; max |score difference| {max_diff:.2e}")
    print(f"build-time ratio (rank-bm25 / bm25s): {ref_build_s / fast_build_s:.2f}x")

    # Worst case for the sparse index: query terms may include the very commonest (longest postings).
    heavy = synthetic_queries(args.bm25s_queries, args.terms, args.vocab, SEED + 2, skip_head=0)
    heavy_ms, heavy_tops = latencies(fast, heavy)
    n_ref = min(args.heavy_rank_queries, len(heavy))
    heavy_ref_ms, heavy_ref_tops = latencies(ref, heavy[:n_ref])
    print(f"\nworst case: {args.terms}-term queries drawn from ALL terms (head included)")
    print(describe("bm25s (BM25Index)", heavy_ms))
    print(describe("rank-bm25 (BM25Index)", heavy_ref_ms))
    same = sum(a == b for a, b in zip(heavy_tops[:n_ref], heavy_ref_tops, strict=True))
    print(
        f"speed-up (median): {np.median(heavy_ref_ms) / np.median(heavy_ms):.1f}x; "
        f"top-10 identical on {same}/{n_ref} queries"
    )


if __name__ == "__main__":
    main()
