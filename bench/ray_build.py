"""`biocite index build --ray auto` (local Ray, 2 workers) against the single-process build.

    python bench/ray_build.py --docs 2000 [--out /tmp/biocite-ray]

Corpus: N synthetic abstracts in JSONL shards of 1,000 (bench/index_build_scale.py's recombination of the
shipped abstracts' sentences, seeded). Both builds run as the installed `biocite` in a subprocess on the
same corpus. Printed: wall time and documents/s of each and their ratio, and whether the indexes are equal:
the same stored documents (rows byte-identical), vectors within 1e-4, the same top-10 for 50 queries (the
titles of 50 documents), and each build's stage times and peak RSS (of the build process, and of its whole
process tree, Ray workers included).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from index_build_scale import BIOCITE, watch, write_corpus  # noqa: E402


def build(corpus: Path, index: Path, home: Path, *extra: str) -> tuple[dict, float, float]:
    """The build's --json report (stage seconds, peak RSS of the driver process), its wall seconds and the
    peak RSS of its whole process tree (Ray workers included) in MB."""
    cmd = [BIOCITE, "index", "build", "--corpus", str(corpus), "--json", "--set", f"index.dir={index}",
           "--set", f"home={home}", *extra]  # fmt: skip
    report, seconds, peak = watch(cmd)
    assert report is not None
    return report, seconds, peak


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=Path("/tmp/biocite-ray"))
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    corpus, home = args.out / "corpus", args.out / "home"
    write_corpus(corpus, args.docs)
    single, single_s, single_peak = build(corpus, args.out / "single", home)
    ray, ray_s, ray_peak = build(
        corpus, args.out / "ray", home, "--ray", "auto", "--set", "index.ray_workers=2"
    )

    from biocite.index.build import open_index
    from biocite.index.hybrid import HybridRetriever
    from biocite.index.store import DocStore
    from biocite.settings import load_settings

    a = DocStore(args.out / "single" / "docs.sqlite", readonly=True)
    b = DocStore(args.out / "ray" / "docs.sqlite", readonly=True)
    rows = "SELECT pmid, content_hash, doc, sentences, tokens FROM docs ORDER BY pmid"
    same_docs = a.conn.execute(rows).fetchall() == b.conn.execute(rows).fetchall()
    ids_a, vec_a = a.all_embeddings("minilm", 384)
    ids_b, vec_b = b.all_embeddings("minilm", 384)
    max_diff = float(np.abs(vec_a - vec_b).max()) if ids_a == ids_b else float("inf")
    queries = [doc.title for doc in a.get_many(a.pmids()[:: max(len(ids_a) // 50, 1)][:50]).values()]
    tops = []
    for name in ("single", "ray"):
        settings = load_settings(
            "default", [f"index.dir={args.out / name}", f"home={home}", "index.reranker=none"]
        )
        retriever = HybridRetriever(open_index(settings), settings)
        tops.append([[h.pmid for h in retriever.search(q, k=10, stage="hybrid")] for q in queries])
    same_top = sum(x == y for x, y in zip(tops[0], tops[1], strict=True))
    print(f"# index build, {args.docs:,} synthetic abstracts ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} CPUs shared, load {os.getloadavg()[0]:.1f})")  # fmt: skip
    print(f"single process         {single_s:7.1f} s  {args.docs / single_s:6.1f} docs/s")
    print(f"Ray, 2 local workers   {ray_s:7.1f} s  {args.docs / ray_s:6.1f} docs/s")
    print(f"throughput ratio Ray / single: {single_s / ray_s:.2f}")
    for name, report, peak in (("single", single, single_peak), ("Ray", ray, ray_peak)):
        stages = ", ".join(f"{k} {v:.1f} s" for k, v in report["seconds"].items())
        print(f"  {name:6s} stages: {stages}; peak RSS of the build process {report['peak_rss_mb']:.0f} MB, "
              f"of its process tree {peak:.0f} MB")  # fmt: skip
    print(f"same stored documents: {same_docs}; vectors max |diff| {max_diff:.2e}; "
          f"same top-10 for {same_top}/{len(queries)} queries")  # fmt: skip
    return 0 if same_docs and max_diff < 1e-4 and same_top == len(queries) else 1


if __name__ == "__main__":
    sys.exit(main())
