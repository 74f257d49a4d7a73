"""Full index build of the embedded default corpus (~5.7k abstracts), embeddings included, on this box.

Each build runs in a fresh subprocess into a temporary folder, so model loading and peak memory are
counted as a user would see them. Prints seconds per step, the wall time against the 4-minute target,
peak RSS, and with --compare-fp32 the same build with fp32 embeddings (the ratio is measured in one run).

    python bench/index_build.py [--compare-fp32] [--set key=value ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TARGET_SECONDS = 240.0

BUILD = """
import json, sys
from biocite.index.build import build_index
from biocite.settings import load_settings
settings = load_settings(overrides=sys.argv[1:])
report = build_index(settings, settings.corpus.paths, progress=False)
print(json.dumps(report.model_dump()))
"""


def build_once(overrides: list[str]) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory(prefix="biocite-build-") as tmp:
        args = [f"index.dir={tmp}/index", *overrides]
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", BUILD, *args], check=True, capture_output=True, text=True
        ).stdout
        return time.perf_counter() - started, json.loads(out.strip().splitlines()[-1])


def describe(label: str, wall: float, report: dict) -> None:
    steps = "  ".join(f"{k} {v:.1f}s" for k, v in report["seconds"].items())
    print(f"{label:<16} wall {wall:6.1f} s ({wall / TARGET_SECONDS:.2f}x the 4-minute target)  {steps}")
    print(
        f"{'':<16} {report['documents']} documents, {report['sentences']} sentences, peak RSS {report['peak_rss_mb']:.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--compare-fp32", action="store_true", help="also build with fp32 embeddings")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args()

    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    wall, report = build_once(args.overrides)
    describe("default (auto)", wall, report)
    if args.compare_fp32:
        wall32, report32 = build_once([*args.overrides, "index.embed_precision=fp32"])
        describe("fp32", wall32, report32)
        embed, embed32 = report["seconds"].get("embed", 0), report32["seconds"].get("embed", 0)
        print(f"fp32 / default: wall {wall32 / wall:.2f}x, embedding {embed32 / max(embed, 1e-9):.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
