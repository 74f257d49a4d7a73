"""The whole `biocite index build` on the scale path, killed with SIGKILL mid-build and resumed.

    python bench/index_build_scale.py --docs 3000 [--out /tmp/biocite-build-scale] [--kill-at 0.5]
    python bench/index_build_scale.py --docs 200000 --vectors composed [--ray]

`--vectors composed` (for sizes whose MiniLM embedding would take hours on 2 cores: 200k is ~4 h here):
no uninterrupted reference build; the build is killed with SIGKILL as soon as its embedding stage has
committed a first shard (every document parsed and stored by then), the bench stores a vector for every
document still lacking one, composed as in bench/scale_engines.py (the L2-normalised sum of the real
MiniLM vectors of the document's title and sentences, each distinct sentence embedded once), and the
resumed build runs the rest: it finds nothing to parse or embed and builds tantivy and IVF-PQ. So every
stage but the model's forward passes runs at full size; the embedding throughput is measured elsewhere
(bench/index_build_results.txt). `--ray` runs both builds with `--ray auto` (2 local workers parse). Peak
RSS is sampled every second over the build's whole process tree (Ray workers included).

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
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIOCITE = shutil.which("biocite") or str(Path(sys.executable).with_name("biocite"))
ENGINES = ["--set", "index.bm25_backend=tantivy", "--set", "index.faiss_kind=ivfpq"]


def write_corpus(folder: Path, n: int, seed: int = 13) -> tuple[list[str], list[str], dict[str, list[int]]]:
    """The shards; returns the sentence pool, the titles and each PMID's (title, sentences...) indexes."""
    rows = [json.loads(line) for line in (REPO / "data/corpus/abstracts.jsonl").open()]
    rows = [r for r in rows if r.get("abstract")]
    pool = [s.strip() + "." for r in rows for s in r["abstract"].split(". ") if len(s) > 30]
    titles = [r["title"] for r in rows if r.get("title")]
    rng = random.Random(seed)
    picks: dict[str, list[int]] = {}
    folder.mkdir(parents=True, exist_ok=True)
    for shard in range(0, n, 1000):
        with (folder / f"synthetic_{shard // 1000:04d}.jsonl").open("w") as handle:
            for i in range(shard, min(shard + 1000, n)):
                sentences = [rng.randrange(len(pool)) for _ in range(rng.randint(4, 14))]
                title = rng.randrange(len(titles))
                doc = {"pmid": str(40_000_000 + i), "title": titles[title],
                       "abstract": " ".join(pool[j] for j in sentences)}  # fmt: skip
                picks[doc["pmid"]] = [title, *sentences]
                handle.write(json.dumps(doc) + "\n")
    return pool, titles, picks


def tree_rss_mb(pid: int) -> float:
    """RSS of a process and all its descendants (a Ray build's workers included), in MB."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for proc in procs:
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def watch(cmd: list[str], until: Callable[[], bool] | None = None) -> tuple[dict | None, float, float]:
    """Run a build, sampling its process tree's RSS each second; SIGKILL it when `until()` turns true.
    Returns its JSON report (None when killed), wall seconds and the peak tree RSS in MB."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)  # fmt: skip
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, tree_rss_mb(proc.pid))
        if until is not None and until():
            os.killpg(proc.pid, signal.SIGKILL)  # the build and its Ray processes, as a crash would
            proc.wait()
            return None, time.perf_counter() - started, peak
        time.sleep(1.0)
    out = proc.stdout.read() if proc.stdout else ""
    if proc.returncode != 0:
        raise SystemExit(f"build failed with exit {proc.returncode}")
    return json.loads(out[out.index("{") :]), time.perf_counter() - started, peak


def compose_missing(
    db: Path, pool: list[str], titles: list[str], picks: dict[str, list[int]], out: Path
) -> int:
    """Store a composed vector for every document without one (see the module docstring)."""
    import numpy as np
    from scale_engines import embed_cached  # each distinct sentence embedded once, cached beside the corpus

    from biocite.index.store import DocStore

    used_s = sorted({j for p in picks.values() for j in p[1:]})
    used_t = sorted({p[0] for p in picks.values()})
    s_vec = embed_cached([pool[j] for j in used_s], out / "pool_sentence_vectors.npy")
    t_vec = embed_cached([titles[j] for j in used_t], out / "pool_title_vectors.npy")
    s_row = {j: i for i, j in enumerate(used_s)}
    t_row = {j: i for i, j in enumerate(used_t)}
    store = DocStore(db)
    missing = store.missing_embeddings("minilm")
    for start in range(0, len(missing), 5000):
        chunk = missing[start : start + 5000]
        rows = []
        for pmid in chunk:
            title, *sentences = picks[pmid]
            v = t_vec[t_row[title]] + s_vec[[s_row[j] for j in sentences]].sum(axis=0)
            rows.append(v / np.linalg.norm(v))
        store.put_embeddings("minilm", chunk, np.asarray(rows, dtype=np.float32))
        store.commit()
    store.close()
    return len(missing)


def count(db: Path, sql: str) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        return int(conn.execute(sql).fetchone()[0])
    except sqlite3.Error:
        return 0


def build_cmd(corpus: Path, index: Path, home: Path) -> list[str]:
    return [BIOCITE, "index", "build", "--corpus", str(corpus), "--json", "--set", f"index.dir={index}",
            "--set", f"home={home}", *ENGINES]  # fmt: skip


def built_index_checks(index: Path, n: int) -> dict[str, bool]:
    """What a finished build of n documents must hold: no document lost or duplicated in any engine."""
    from biocite.index.ivfpq import IvfPqIndex
    from biocite.index.lexical import TantivyBM25

    db = index / "docs.sqlite"
    n_docs = count(db, "SELECT COUNT(*) FROM docs")
    dense = IvfPqIndex.load(index)
    ids = {str(i) for i in dense.ids}
    return {
        "store rows == documents": n_docs == n,
        "no duplicate pmid": count(db, "SELECT COUNT(DISTINCT pmid) FROM docs") == n_docs,
        "one embedding per document": count(db, "SELECT COUNT(*) FROM embeddings") == n_docs,
        "tantivy documents == documents": len(TantivyBM25.load(index / "tantivy")) == n_docs,
        "IVF-PQ vectors == documents, same ids": len(dense) == n_docs and len(ids) == n_docs,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=Path("/tmp/biocite-build-scale"))
    parser.add_argument("--kill-at", type=float, default=0.5)
    parser.add_argument("--vectors", choices=["real", "composed"], default="real")
    parser.add_argument("--ray", action="store_true", help="build with --ray auto")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    corpus, home = args.out / "corpus", args.out / "home"
    pool, titles, picks = write_corpus(corpus, args.docs)
    if args.vectors == "composed":
        return composed(args, corpus, home, pool, titles, picks)

    reference, reference_s, reference_peak = watch(build_cmd(corpus, args.out / "reference", home))
    assert reference is not None
    index = args.out / "killed"
    db = index / "docs.sqlite"
    target = int(args.docs * args.kill_at)
    watch(
        build_cmd(corpus, index, home), until=lambda: count(db, "SELECT COUNT(*) FROM embeddings") >= target
    )
    docs_before = count(db, "SELECT COUNT(*) FROM docs")
    embedded_before = count(db, "SELECT COUNT(*) FROM embeddings")
    resumed, resumed_s, resumed_peak = watch(build_cmd(corpus, index, home))
    assert resumed is not None

    print(f"# index build, scale path (tantivy + IVF-PQ), {args.docs:,} synthetic abstracts in "
          f"{len(list(corpus.iterdir()))} JSONL shards ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} CPUs shared, load {os.getloadavg()[0]:.1f})")  # fmt: skip
    for name, report, secs, peak in (
        ("uninterrupted", reference, reference_s, reference_peak),
        ("resumed after kill -9", resumed, resumed_s, resumed_peak),
    ):
        stages = ", ".join(f"{k} {v:.1f} s" for k, v in report["seconds"].items())
        print(f"{name:24s} {secs:7.1f} s wall; {stages}; peak RSS of the process tree {peak:.0f} MB "
              f"(build process {report['peak_rss_mb']:.0f} MB); +{report['added']} added, "
              f"{report['embedded']} embedded")  # fmt: skip
    print(f"killed at: {docs_before:,} documents stored, {embedded_before:,} embedded")
    print(f"resumed run re-did: {resumed['added']:,} documents parsed and stored, {resumed['embedded']:,} embedded "
          f"(= {args.docs:,} - {embedded_before:,} embedded before the kill: "
          f"{resumed['embedded'] == args.docs - embedded_before})")  # fmt: skip
    checks = {
        **built_index_checks(index, args.docs),
        "same documents as the uninterrupted build": reference["documents"] == args.docs,
    }
    for name, ok in checks.items():
        print(f"check  {name:45s} {'ok' if ok else 'FAILED'}")
    return 0 if all(checks.values()) else 1


def composed(args: argparse.Namespace, corpus: Path, home: Path, pool: list[str], titles: list[str],
             picks: dict[str, list[int]]) -> int:  # fmt: skip
    index = args.out / "killed"
    db = index / "docs.sqlite"
    cmd = build_cmd(corpus, index, home) + (["--ray", "auto"] if args.ray else [])
    _, killed_s, killed_peak = watch(cmd, until=lambda: count(db, "SELECT COUNT(*) FROM embeddings") > 0)
    docs_before = count(db, "SELECT COUNT(*) FROM docs")
    embedded_before = count(db, "SELECT COUNT(*) FROM embeddings")
    started = time.perf_counter()
    composed_n = compose_missing(db, pool, titles, picks, args.out)
    compose_s = time.perf_counter() - started
    resumed, resumed_s, resumed_peak = watch(cmd)
    assert resumed is not None
    sizes = {p.name: p.stat().st_size for p in index.iterdir() if p.is_file()}
    print(f"# index build, scale path (tantivy + IVF-PQ{', --ray auto' if args.ray else ''}), {args.docs:,} "
          f"synthetic abstracts in {len(list(corpus.iterdir()))} JSONL shards, composed vectors "
          f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f})")  # fmt: skip
    print(f"first run (parse, split, tokenise, store; killed at its first embedding shard): {killed_s:.1f} s wall, "
          f"peak RSS of the process tree {killed_peak:.0f} MB; {docs_before:,} documents stored, "
          f"{embedded_before:,} embedded")  # fmt: skip
    print(
        f"vectors composed for {composed_n:,} documents by the bench in {compose_s:.1f} s (not a build stage)"
    )
    stages = ", ".join(f"{k} {v:.1f} s" for k, v in resumed["seconds"].items())
    print(f"resumed after kill -9: {resumed_s:.1f} s wall; {stages}; peak RSS of the process tree "
          f"{resumed_peak:.0f} MB (build process {resumed['peak_rss_mb']:.0f} MB); +{resumed['added']} added, "
          f"{resumed['embedded']} embedded")  # fmt: skip
    print("index files (MB): " + ", ".join(f"{k} {v / 2**20:.0f}" for k, v in sorted(sizes.items())))
    checks = {
        "every document stored before the kill": docs_before == args.docs,
        "resume parsed and embedded nothing again": resumed["added"] == 0 and resumed["embedded"] == 0,
        **built_index_checks(index, args.docs),
    }
    for name, ok in checks.items():
        print(f"check  {name:45s} {'ok' if ok else 'FAILED'}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
