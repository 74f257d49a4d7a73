"""Cost of the index integrity check at open: sizes + xxh3-128 of every index file against the manifest,
done by every process that opens the index (search, ask, serve). Reference: the rest of `open_index`
(SQLite, BM25, FAISS, the embedding model) and a whole `biocite search` process, timed in the same run.

    nice -n 5 .venv/bin/python bench/index_open.py --set index.dir=/tmp/wt16big/index/default
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

from biocite.index.build import open_index
from biocite.index.store import read_manifest, verify_index
from biocite.settings import load_settings


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    settings = load_settings(None, args.overrides)
    folder = settings.index_dir
    manifest = read_manifest(folder)
    if not manifest.files:
        print(f"{folder}: the manifest records no checksums; rebuild with this biocite first")
        return 2
    total_bytes = sum(f.size for f in manifest.files.values())
    verify = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        verify_index(folder, manifest)
        verify.append(time.perf_counter() - started)
    started = time.perf_counter()
    open_index(settings)  # first open in this process: loads the embedding model too
    open_first = time.perf_counter() - started
    exe = shutil.which("biocite", path=os.path.dirname(sys.executable)) or "biocite"
    command = [exe, "search", "aspirin stroke prevention", "-k", "5", "--json"]
    command += [x for item in args.overrides for x in ("--set", item)]
    process = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        process.append(time.perf_counter() - started)
    v, p = statistics.median(verify), statistics.median(process)
    print(
        f"index {folder}: {manifest.documents} documents, {len(manifest.files)} files, {total_bytes / 1e6:.1f} MB"
    )
    print(
        f"integrity check (sizes + xxh3-128 of every byte): median {v * 1000:.1f} ms over {args.repeats} "
        f"({total_bytes / v / 1e9:.2f} GB/s, page cache warm)"
    )
    print(
        f"open_index in a fresh process state (model load included): {open_first * 1000:.0f} ms; "
        f"check = {v / open_first:.1%} of it"
    )
    print(f"whole `biocite search` process: median {p * 1000:.0f} ms over 3; check = {v / p:.1%} of it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
