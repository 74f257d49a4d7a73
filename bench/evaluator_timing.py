"""Time `biocite evaluate` on the 65 TREC BioGen 2024 topics: cold (empty judge cache), then warm (re-run).

Targets (issue 4): under 20 minutes cold, under 1 minute from the cache, 2 cores, default judges (heads).
Give a run file (e.g. the batch runner's output); without one, a retrieval-only run is built here from the
index (per topic: the best sentence of each of the top 4 hybrid hits, citing its PMID) and saved next to the
outputs, so the timing covers a real 65-topic run with real citations. Prints figures; asserts nothing.

    python bench/evaluator_timing.py [RUN.json] [--out /tmp/evaltiming] [--set index.dir=...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from biocite.records import Answer, AnswerSentence, Citation, Trace  # noqa: E402
from biocite.settings import DATA_DIR, load_settings  # noqa: E402


def retrieval_run(settings, path: Path, hits_per_topic: int = 4) -> Path:
    from biocite.index.hybrid import open_retriever

    retriever = open_retriever(settings)
    topics = json.loads((DATA_DIR / "biogen" / "BioGen2024topics.json").read_text())["topics"]
    answers = []
    for t in topics:
        hits = retriever.search(t["question"], k=10)
        sentences = [
            AnswerSentence(text=h.best_sentence.text, citations=[Citation(pmid=h.pmid)])
            for h in hits[:hits_per_topic]
            if h.best_sentence
        ]
        ans = Answer(
            question=t["question"],
            sentences=sentences,
            abstained=not sentences,
            mode="retrieval-only",
            trace=Trace(retrieved=[h.pmid for h in hits]),
        )
        answers.append(
            {"topic_id": str(t["id"]), "question": t["question"], "answer": json.loads(ans.model_dump_json())}
        )
    path.write_text(json.dumps({"run_name": "retrieval-only-bench", "answers": answers}))
    return path


def main() -> None:
    from biocite.app.evaluation import cache_path, evaluate_run_file, parse_metrics

    ap = argparse.ArgumentParser()
    ap.add_argument("run", nargs="?", type=Path)
    ap.add_argument("--out", type=Path, default=Path("/tmp/evaluator-timing"))
    ap.add_argument("--metrics", default="completeness,correctness,citation")
    ap.add_argument("--keep-cache", action="store_true", help="start from the existing judge cache")
    ap.add_argument("--preset", default=None)
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cache_dir = args.out / "cache"
    if not args.keep_cache:
        shutil.rmtree(cache_dir, ignore_errors=True)
    settings = load_settings(args.preset, [*args.set, f"evaluator.cache_dir={cache_dir}"])
    run = args.run or retrieval_run(settings, args.out / "retrieval_run.json")
    metrics = parse_metrics(args.metrics)
    timings = []
    for label in ("first", "second") if args.keep_cache else ("cold", "warm"):
        started = time.perf_counter()
        doc = evaluate_run_file(settings, run, args.out / label, metrics=metrics, progress=False)
        timings.append((label, time.perf_counter() - started, doc))
    o = timings[0][2]["overall"]
    print(
        f"run {run}: {o['questions']} topics, {o['answered']} answered, {o['sentences']} sentences, "
        f"{o['citations_missing']} cited PMIDs missing from the index"
    )
    for label, seconds, doc in timings:
        t = doc["timing"]
        print(
            f"{label}: {seconds:.1f} s  (completeness {t.get('completeness', 0):.1f} s, "
            f"support {t.get('support', 0):.1f} s;"
            f" cache hits {t['cache_hits']}, misses {t['cache_misses']})"
        )
    print(
        f"cold / 20 min target = {timings[0][1] / 1200:.3f};  warm / 60 s target = {timings[1][1] / 60:.3f}"
    )
    print(f"cache file {cache_path(settings)}: {cache_path(settings).stat().st_size / 1e6:.1f} MB")
    for name, m in timings[0][2]["overall"]["metrics"].items():
        if m["n"]:
            print(f"  {name:<20} {m['mean']:.3f}  95% CI {m['ci95']}  n={m['n']}")


if __name__ == "__main__":
    main()
