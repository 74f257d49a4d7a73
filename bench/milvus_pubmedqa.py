"""Milvus (milvus-lite) against the default engines on PubMedQA held-out retrieval.

    python bench/milvus_pubmedqa.py [--source-index DIR] [--out DIR] [--limit N]

The default index (`--source-index`, the 5,666 shipped abstracts with their MiniLM vectors) is copied and
re-derived with `index.engine=milvus` through `build_index` (the product path: no document is parsed or
embedded again, the Milvus collection is filled from the stored tokens and vectors). Both indexes then
answer the PubMedQA VALIDATION questions (200, held out, split by question with index/rerank.py's fixed
seed) through `HybridRetriever.search(stage="hybrid", k=10)`; printed: recall@10 of the source abstract on each,
the difference, and the median latency (milvus-lite is embedded and slow at BM25; a Milvus server is the
production engine).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def evaluate(settings, limit: int) -> tuple[float, float, int]:
    from biocite.index.build import open_index
    from biocite.index.hybrid import HybridRetriever
    from biocite.index.rerank import validation_questions

    retriever = HybridRetriever(open_index(settings), settings)
    questions = validation_questions(settings)[:limit]
    found, times = 0, []
    for q in questions:
        started = time.perf_counter()
        hits = retriever.search(q.question, k=10, stage="hybrid")
        times.append((time.perf_counter() - started) * 1000)
        found += q.pmid in {h.pmid for h in hits}
    return found / len(questions), statistics.median(times), len(questions)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--source-index", type=Path, default=Path.home() / ".cache/biocite/index/default")
    parser.add_argument("--out", type=Path, default=Path("/tmp/biocite-milvus"))
    parser.add_argument("--limit", type=int, default=200)
    args = parser.parse_args()

    from biocite.index.build import build_index
    from biocite.index.store import read_manifest
    from biocite.settings import load_settings

    index_dir = args.out / "index"
    shutil.rmtree(args.out, ignore_errors=True)
    index_dir.mkdir(parents=True)
    shutil.copy2(args.source_index / "docs.sqlite", index_dir / "docs.sqlite")
    shutil.copy2(args.source_index / "manifest.json", index_dir / "manifest.json")
    sources = [Path(s.path) for s in read_manifest(index_dir).sources]
    default = load_settings("default", [f"index.dir={args.source_index}", "index.reranker=none"])
    milvus = load_settings(
        "default", [f"index.dir={index_dir}", "index.reranker=none", "index.engine=milvus"]
    )
    started = time.perf_counter()
    report = build_index(milvus, sources, progress=False)
    build_s = time.perf_counter() - started
    ref_recall, ref_ms, n = evaluate(default, args.limit)
    mil_recall, mil_ms, _ = evaluate(milvus, args.limit)
    print(f"# PubMedQA validation ({n} held-out questions), hybrid top 10, {report.documents:,} abstracts "
          f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")  # fmt: skip
    print(f"milvus-lite build from the stored tokens and vectors: {build_s:.0f} s ({report.seconds})")
    print(f"{'engine':38s} {'recall@10':>9s} {'median ms':>10s}")
    print(f"{'default: bm25s + flat FAISS':38s} {ref_recall:9.3f} {ref_ms:10.1f}")
    print(f"{'milvus-lite: BM25 full text + FLAT IP':38s} {mil_recall:9.3f} {mil_ms:10.1f}")
    print(f"recall@10 difference (milvus - default): {mil_recall - ref_recall:+.3f} (target: within 0.01)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
