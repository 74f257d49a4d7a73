"""Retrieval quality on PubMedQA: is the question's source abstract found, at which stage?

Evaluates the VALIDATION questions only (the reranker's held-out split; the split is read from the
reranker artifact when there is one). Prints recall@1, recall@10 and MRR of the source abstract for BM25,
dense, the fused union and the reranked list, one table. With --tune, the fusion parameters (RRF k, or
the dense weight of weighted fusion) are chosen on the TRAIN split and then reported on validation.

    python bench/retrieval_pubmedqa.py [--preset default] [--set index.dir=...] [--tune] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from biocite.index.hybrid import Ranked, rrf_fuse, weighted_fuse  # noqa: E402
from biocite.index.rerank import (  # noqa: E402
    Question,
    RankMetrics,
    _plain_retriever,
    make_reranker,
    rank_of,
    rerank_order,
    train_questions,
    validation_questions,
)
from biocite.settings import load_settings  # noqa: E402

RRF_GRID = [5, 10, 20, 30, 60, 100]
WEIGHT_GRID = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


def stage_lists(
    retriever, questions: Sequence[Question], k_bm25: int, k_dense: int
) -> list[tuple[Ranked, Ranked]]:
    out = []
    for q in questions:
        out.append((retriever.bm25(q.question, k_bm25), retriever.dense(q.question, k_dense)))
    return out


def fuse(bm25: Ranked, dense: Ranked, fusion: str, param: float) -> list[str]:
    if fusion == "rrf":
        return [p for p, _ in rrf_fuse([[p for p, _ in bm25], [p for p, _ in dense]], k=int(param))]
    return [p for p, _ in weighted_fuse(bm25, dense, dense_weight=param)]


def metrics(questions: Sequence[Question], orders: Sequence[Sequence[str]]) -> RankMetrics:
    return RankMetrics.from_ranks(
        [rank_of(q.pmid, order) for q, order in zip(questions, orders, strict=True)]
    )


def tune_fusion(questions, lists) -> tuple[str, float, RankMetrics]:
    """Best (fusion, parameter) on these questions by MRR (recall@1 then recall@10 break ties)."""
    best: tuple[tuple[float, float, float], str, float, RankMetrics] | None = None
    for fusion, grid in (("rrf", RRF_GRID), ("weighted", WEIGHT_GRID)):
        for param in grid:
            m = metrics(questions, [fuse(b, d, fusion, param) for b, d in lists])
            key = (m.mrr, m.recall_at_1, m.recall_at_10)
            figures = f"R@1 {m.recall_at_1:.3f}  R@10 {m.recall_at_10:.3f}  MRR {m.mrr:.3f}"
            print(f"  train  {fusion:8s} {param:>5}: {figures}")
            if best is None or key > best[0]:
                best = (key, fusion, param, m)
    assert best is not None
    return best[1], best[2], best[3]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--preset", default=None)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--tune", action="store_true", help="choose the fusion on the TRAIN split")
    parser.add_argument("--limit", type=int, default=0, help="first N validation questions only")
    parser.add_argument("--no-rerank", action="store_true")
    args = parser.parse_args(argv)

    settings = load_settings(args.preset, args.overrides)
    cfg = settings.index
    retriever = _plain_retriever(settings)
    validation = validation_questions(settings)
    if args.limit:
        validation = validation[: args.limit]
    print(f"index {settings.index_dir}: {len(retriever.index.docs)} abstracts; "
          f"{len(validation)} validation questions")  # fmt: skip
    print(f"settings: bm25_k={cfg.bm25_k} dense_k={cfg.dense_k} fusion={cfg.fusion} rrf_k={cfg.rrf_k} "
          f"dense_weight={cfg.dense_weight} reranker={cfg.reranker} rerank_k={cfg.rerank_k}")  # fmt: skip

    fusion, param = cfg.fusion, float(cfg.rrf_k if cfg.fusion == "rrf" else cfg.dense_weight)
    if args.tune:
        train = train_questions(settings)
        print(f"tuning fusion on {len(train)} TRAIN questions")
        fusion, param, _ = tune_fusion(train, stage_lists(retriever, train, cfg.bm25_k, cfg.dense_k))
        print(f"  chosen: {fusion} {param}")

    started = time.perf_counter()
    lists = stage_lists(retriever, validation, cfg.bm25_k, cfg.dense_k)
    seconds_first = time.perf_counter() - started
    rows: dict[str, RankMetrics] = {
        "bm25": metrics(validation, [[p for p, _ in b] for b, _ in lists]),
        "dense": metrics(validation, [[p for p, _ in d] for _, d in lists]),
    }
    fused = [fuse(b, d, fusion, param) for b, d in lists]
    rows[f"hybrid ({fusion} {param:g})"] = metrics(validation, fused)
    seconds_rerank = 0.0
    if cfg.reranker != "none" and not args.no_rerank:
        reranker = make_reranker(settings, retriever.index)
        assert reranker is not None
        started = time.perf_counter()
        reranked = []
        for q, order in zip(validation, fused, strict=True):
            docs = retriever.index.docs.get_many(order[: cfg.rerank_k])
            reranked.append(rerank_order(reranker, q.question, order, docs, cfg.rerank_k)[0])
        seconds_rerank = time.perf_counter() - started
        rows[f"reranked ({reranker.name}, top {cfg.rerank_k})"] = metrics(validation, reranked)

    print()
    print(f"{'stage':40s} {'recall@1':>9s} {'recall@10':>10s} {'MRR':>7s}")
    for name, m in rows.items():
        print(f"{name:40s} {m.recall_at_1:9.3f} {m.recall_at_10:10.3f} {m.mrr:7.3f}")
    print()
    print("MRR is over each stage's candidate list (bm25_k / dense_k / their union); a miss counts 0.")
    load = os.getloadavg()[0]
    print(f"time: first stages {seconds_first:.1f} s, reranking {seconds_rerank:.1f} s "
          f"({len(validation)} questions); load average {load:.1f} on {os.cpu_count()} CPUs")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
