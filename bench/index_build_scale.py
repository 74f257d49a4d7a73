"""The whole `biocite index build` on the scale path, killed with SIGKILL mid-build and resumed.

    python bench/index_build_scale.py --docs 3000 [--out /tmp/biocite-build-scale] [--kill-at 0.5]

Corpus: N synthetic abstracts written as JSONL shards of 1,000 (a real title and 4-14 real sentences from
the shipped abstracts, seeded; the same recombination as bench/scale_engines.py, here parsed, split and
embedded for real by the build). The build runs as the installed `biocite` in a subprocess with
`index.bm25_backend=tantivy index.faiss_kind=ivfpq`; it is killed with SIGKILL once `--kill-at` of the
documents have a stored embedding, then run again. Printed: stage times and peak RSS of the resumed run and
of an uninterrupted reference build of the same corpus, what the resumed run re-did, and the checks that
no document was lost or duplicated (store rows, embeddings, tantivy documents, IVF-PQ vectors, ids).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIOCITE = shutil.which("biocite") or str(Path(sys.executable).with_name("biocite"))
ENGINES = ["--set", "index.bm25_backend=tantivy", "--set", "index.faiss_kind=ivfpq"]


def write_corpus(folder: Path, n: int, seed: int = 13) -> None:
    rows = [json.loads(line) for line in (REPO / "data/corpus/abstracts.jsonl").open()]
    rows = [r for r in rows if r.get("abstract")]
    pool = [s.strip() + "." for r in rows for s in r["abstract"].split(". ") if len(s) > 30]
    titles = [r["title"] for r in rows if r.get("title")]
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for shard in range(0, n, 1000):
        with (folder / f"synthetic_{shard // 1000:04d}.jsonl").open("w") as handle:
            for i in range(shard, min(shard + 1000, n)):
                abstract = " ".join(rng.choice(pool) for _ in range(rng.randint(4, 14)))
                doc = {"pmid": str(40_000_000 + i), "title": rng.choice(titles), "abstract": abstract}
                handle.write(json.dumps(doc) + "\n")


def count(db: Path, sql: str) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        return int(conn.execute(sql).fetchone()[0])
    except sqlite3.Error:
        return 0


def build_cmd(corpus: Path, index: Path, home: Path) -> list[str]:
    return [BIOCITE, "index", "build", "--corpus", str(corpus), "--json", "--set", f"index.dir={index}",
            "--set", f"home={home}", *ENGINES]  # fmt: skip


def run_build(cmd: list[str]) -> tuple[dict, float]:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    report = json.loads(done.stdout[done.stdout.index("{") :])
    return report, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=Path("/tmp/biocite-build-scale"))
    parser.add_argument("--kill-at", type=float, default=0.5)
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    corpus, home = args.out / "corpus", args.out / "home"
    write_corpus(corpus, args.docs)

    reference, reference_s = run_build(build_cmd(corpus, args.out / "reference", home))

    index = args.out / "killed"
    db = index / "docs.sqlite"
    proc = subprocess.Popen(
        build_cmd(corpus, index, home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    target = int(args.docs * args.kill_at)
    while proc.poll() is None and count(db, "SELECT COUNT(*) FROM embeddings") < target:
        time.sleep(0.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    docs_before = count(db, "SELECT COUNT(*) FROM docs")
    embedded_before = count(db, "SELECT COUNT(*) FROM embeddings")
    resumed, resumed_s = run_build(build_cmd(corpus, index, home))

    from biocite.index.ivfpq import IvfPqIndex
    from biocite.index.lexical import TantivyBM25

    n_docs = count(db, "SELECT COUNT(*) FROM docs")
    n_distinct = count(db, "SELECT COUNT(DISTINCT pmid) FROM docs")
    n_vectors = count(db, "SELECT COUNT(*) FROM embeddings")
    dense = IvfPqIndex.load(index)
    lexical = TantivyBM25.load(index / "tantivy")
    ids = [str(i) for i in dense.ids]
    children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    print(f"# index build, scale path (tantivy + IVF-PQ), {args.docs:,} synthetic abstracts in "
          f"{len(list(corpus.iterdir()))} JSONL shards ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} CPUs shared, load {os.getloadavg()[0]:.1f})")  # fmt: skip
    for name, report, secs in (
        ("uninterrupted", reference, reference_s),
        ("resumed after kill -9", resumed, resumed_s),
    ):
        stages = ", ".join(f"{k} {v:.1f} s" for k, v in report["seconds"].items())
        print(f"{name:24s} {secs:7.1f} s wall; {stages}; peak RSS {report['peak_rss_mb']:.0f} MB; "
              f"+{report['added']} added, {report['embedded']} embedded")  # fmt: skip
    print(f"killed at: {docs_before:,} documents stored, {embedded_before:,} embedded")
    print(f"resumed run re-did: {resumed['added']:,} documents parsed and stored, {resumed['embedded']:,} embedded "
          f"(= {args.docs:,} - {embedded_before:,} embedded before the kill: "
          f"{resumed['embedded'] == args.docs - embedded_before})")  # fmt: skip
    checks = {
        "store rows == documents": n_docs == args.docs,
        "no duplicate pmid": n_distinct == n_docs,
        "one embedding per document": n_vectors == n_docs,
        "tantivy documents == documents": len(lexical) == n_docs,
        "IVF-PQ vectors == documents, same ids": len(dense) == n_docs and len(set(ids)) == n_docs,
        "same documents as the uninterrupted build": reference["documents"] == n_docs,
    }
    for name, ok in checks.items():
        print(f"check  {name:45s} {'ok' if ok else 'FAILED'}")
    print(f"peak RSS of any build process: {children_peak:.0f} MB")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
