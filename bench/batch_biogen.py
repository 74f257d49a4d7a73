"""Batch benchmark (issue 5): the 65 TREC BioGen 2024 topics end to end, generate and extractive mode.

For each mode: answers every topic with `run_batch` (resuming the journal in --out-dir if a run was
started earlier, e.g. in the background with `biocite batch`), then prints
- answered / abstained / failed and minutes for the 65 topics (the sum of per-topic seconds from the
  journal: the run is sequential with the local model, so this is the end-to-end answering time without
  the one-off model loading; the wall time of this invocation is printed too);
- the per-node time table from each answer's trace.timings;
- the run file's validation (`biocite validate`) and the self-evaluation report's headline numbers
  (`biocite report`: completeness, correctness, citation support, abstention; BioGen has no public gold
  nuggets, so no nugget recall).

    python bench/batch_biogen.py --index-dir ~/.cache/biocite/index/default [--modes generate,extractive]
        [--out-dir /tmp/batch] [--save-runs bench/runs] [--no-report] [--set k=v]
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from biocite.app.batch import read_journal, run_batch
from biocite.app.batchreport import batch_section, headline, report_run  # noqa: E402
from biocite.app.runfiles import load_topics, validate_run  # noqa: E402
from biocite.evaluator.evaluate import ALL_METRICS  # noqa: E402
from biocite.evaluator.runs import journal_path  # noqa: E402
from biocite.settings import Settings, load_settings  # noqa: E402


def node_table(section: dict) -> list[str]:
    timings = section["node_timings"]
    total = sum(t["total_s"] for t in timings.values()) or 1.0
    lines = [f"{'node':<14}{'calls':>6}{'total s':>10}{'mean s':>9}{'median s':>10}{'share':>8}"]
    for node, t in timings.items():
        lines.append(
            f"{node:<14}{t['calls']:>6}{t['total_s']:>10.1f}{t['mean_s']:>9.2f}{t['median_s']:>10.2f}"
            f"{t['total_s'] / total:>8.1%}"
        )
    return lines


def bench_mode(settings: Settings, mode: str, out_dir: Path, report: bool, save: Path | None) -> None:
    topics = load_topics("biogen2024")
    out = out_dir / f"biogen2024_{mode}.json"
    print(f"\n=== {mode} mode: {len(topics.topics)} BioGen 2024 topics -> {out}", flush=True)
    started = time.perf_counter()
    summary = run_batch(settings, topics, out, mode=mode, progress=True)
    wall = time.perf_counter() - started
    header, records = read_journal(journal_path(out))
    section = batch_section(header, [records[t.topic_id] for t in topics.topics if t.topic_id in records])
    spt = section["seconds_per_topic"]
    print(
        f"topics {summary.topics}: answered {summary.answered}, abstained {summary.abstained}, "
        f"failed {summary.failed}; llm {header.llm}"
    )
    print(
        f"answering time (sum over topics, from the journal): {spt['total'] / 60:.1f} min; "
        f"per topic median {spt['median']:.1f} s, mean {spt['mean']:.1f} s"
    )
    answered = [r.seconds for r in records.values() if r.status == "answered"]
    if answered:
        print(f"  answered topics only: mean {sum(answered) / len(answered):.1f} s (n={len(answered)})")
    stamped = [r for r in records.values() if r.finished_at is not None]
    if len(stamped) == len(records):
        span = max(r.finished_at for r in stamped) - min(r.finished_at - r.seconds for r in stamped)  # type: ignore[operator]
        print(f"journal span (first topic start to last topic end): {span / 60:.1f} min")
    print(f"this invocation: {wall / 60:.1f} min wall, {summary.resumed} topics resumed from the journal")
    print("per-node time (trace.timings, all topics):")
    for line in node_table(section):
        print("  " + line)
    fmt, problems = validate_run(out, [t.topic_id for t in topics.topics])
    errors = [p for p in problems if p.severity == "error"]
    print(f"validation ({fmt}): {'valid' if not errors else f'{len(errors)} errors'}")
    for p in problems:
        print("  " + p.render(out.name))
    if report:
        started = time.perf_counter()
        metrics = [m for m in ALL_METRICS if m != "nuggets"]
        doc, folder = report_run(settings, out, metrics=metrics, progress=False)
        print(f"report ({time.perf_counter() - started:.0f} s, {folder}):")
        for line in headline(doc):
            print("  " + line)
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        if out.stat().st_size < 1_000_000:
            shutil.copy(out, save / out.name)
            print(f"saved {save / out.name}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--index-dir", type=Path, default=None)
    parser.add_argument("--modes", default="generate,extractive")
    parser.add_argument("--out-dir", type=Path, default=Path("/tmp/batch"))
    parser.add_argument("--save-runs", type=Path, default=None)
    parser.add_argument("--no-report", action="store_true")
    parser.add_argument("--preset", default=None)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args()
    overrides = list(args.overrides)
    if args.index_dir:
        overrides.append(f"index.dir={args.index_dir}")
    settings = load_settings(args.preset, overrides)
    print(
        f"index {settings.index_dir}; llm {settings.llm.backend}:{settings.llm.model}; {os.cpu_count()} CPUs"
    )
    for mode in args.modes.split(","):
        bench_mode(settings, mode.strip(), args.out_dir, not args.no_report, args.save_runs)


if __name__ == "__main__":
    main()
