"""Retrieval quality on PubMedQA: is the question's source abstract found, at which stage?

Evaluates the VALIDATION questions only (the reranker's held-out split; the split is read from the
reranker artifact when there is one). Prints recall@1, recall@10 and MRR of the source abstract for BM25,
dense, the fused union and the reranked list, one table. With --tune, the fusion parameters (RRF k, or
the dense weight of weighted fusion) are chosen on the TRAIN split and then reported on validation.

    python bench/retrieval_pubmedqa.py [--preset default] [--set index.dir=...] [--tune] [--limit N]
        [--trec-run OUT]   # also write the hybrid stage as a TREC run: `biocite eval-retrieval OUT pubmedqa`
                           # then reports the same recall (both go through ir_measures)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from biocite.index.hybrid import Ranked, minmax, rrf_fuse, weighted_fuse  # noqa: E402
from biocite.index.rerank import (  # noqa: E402
    RankMetrics,
    _plain_retriever,
    make_reranker,
    rerank_order,
    train_questions,
    validation_questions,
)
from biocite.index.trec import write_run  # noqa: E402
from biocite.pubmedqa import Question  # noqa: E402
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


def fuse_scored(bm25: Ranked, dense: Ranked, fusion: str, param: float) -> Ranked:
    if fusion == "rrf":
        return rrf_fuse([[p for p, _ in bm25], [p for p, _ in dense]], k=int(param))
    return weighted_fuse(bm25, dense, dense_weight=param)


def fuse(bm25: Ranked, dense: Ranked, fusion: str, param: float) -> list[str]:
    return [p for p, _ in fuse_scored(bm25, dense, fusion, param)]


def head_scores(
    reranker, retriever, questions, fused: Sequence[Ranked], rerank_k: int
) -> list[dict[str, float]]:
    out = []
    for q, ranked in zip(questions, fused, strict=True):
        order = [p for p, _ in ranked]
        docs = retriever.documents.get_many(order[:rerank_k])
        out.append(rerank_order(reranker, q.question, order, docs, rerank_k)[1])
    return out


def blend(ranked: Ranked, rerank: dict[str, float], alpha: float) -> list[str]:
    """alpha * reranker score + (1 - alpha) * min-max fused score on the reranked head; the tail follows."""
    head = [(p, s) for p, s in ranked if p in rerank]
    fused = minmax(head)
    scored = {p: alpha * rerank[p] + (1 - alpha) * fused[p] for p, _ in head}
    order = sorted(scored, key=lambda p: -scored[p])
    return order + [p for p, _ in ranked if p not in rerank]


def metrics(questions: Sequence[Question], orders: Sequence[Sequence[str]]) -> RankMetrics:
    return RankMetrics.of(questions, orders)


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


def tune_blend(settings, retriever, reranker, fusion: str, param: float) -> float:
    cfg = settings.index
    train = train_questions(settings)
    print(f"tuning the reranker/fused blend on {len(train)} TRAIN questions (the head was trained on them)")
    scored = [
        fuse_scored(b, d, fusion, param) for b, d in stage_lists(retriever, train, cfg.bm25_k, cfg.dense_k)
    ]
    heads = head_scores(reranker, retriever, train, scored, cfg.rerank_k)
    best = (-1.0, 1.0)
    for alpha in [i / 10 for i in range(11)]:
        m = metrics(train, [blend(r, h, alpha) for r, h in zip(scored, heads, strict=True)])
        print(
            f"  train  alpha {alpha:.1f}: R@1 {m.recall_at_1:.3f}  R@10 {m.recall_at_10:.3f}  MRR {m.mrr:.3f}"
        )
        if m.mrr > best[0] + 1e-12:
            best = (m.mrr, alpha)
    print(f"  chosen: alpha {best[1]:g}")
    return best[1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--preset", default=None)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--tune", action="store_true", help="choose the fusion on the TRAIN split")
    parser.add_argument("--limit", type=int, default=0, help="first N validation questions only")
    parser.add_argument("--no-rerank", action="store_true")
    parser.add_argument("--trec-run", type=Path, default=None, help="write the hybrid stage as a TREC run")
    parser.add_argument(
        "--blend", action="store_true", help="also blend reranker and fused scores, weight tuned on TRAIN"
    )
    args = parser.parse_args(argv)

    settings = load_settings(args.preset, args.overrides)
    cfg = settings.index
    retriever = _plain_retriever(settings)
    validation = validation_questions(settings)
    if args.limit:
        validation = validation[: args.limit]
    print(f"index {settings.index_dir}: {len(retriever.documents)} abstracts; "
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
    if args.trec_run:
        scored = {
            q.pmid: fuse_scored(b, d, fusion, param) for q, (b, d) in zip(validation, lists, strict=True)
        }
        write_run(args.trec_run, scored, tag=f"hybrid-{fusion}")
        print(f"wrote the hybrid stage as a TREC run: {args.trec_run}")
    seconds_rerank = 0.0
    if cfg.reranker != "none" and not args.no_rerank:
        reranker = make_reranker(settings, retriever.index)
        assert reranker is not None
        started = time.perf_counter()
        reranked = []
        for q, order in zip(validation, fused, strict=True):
            docs = retriever.documents.get_many(order[: cfg.rerank_k])
            reranked.append(rerank_order(reranker, q.question, order, docs, cfg.rerank_k)[0])
        seconds_rerank = time.perf_counter() - started
        rows[f"reranked ({reranker.name}, top {cfg.rerank_k})"] = metrics(validation, reranked)
        if args.blend:
            alpha = tune_blend(settings, retriever, reranker, fusion, param)
            scored = [fuse_scored(b, d, fusion, param) for b, d in lists]
            heads = head_scores(reranker, retriever, validation, scored, cfg.rerank_k)
            blended = [blend(r, h, alpha) for r, h in zip(scored, heads, strict=True)]
            rows[f"blend ({alpha:g} rerank + fused)"] = metrics(validation, blended)

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
