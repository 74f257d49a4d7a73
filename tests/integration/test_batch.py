"""`biocite batch` end to end on a small real index (40 shipped abstracts, MiniLM), extractive mode:
a run killed with SIGKILL resumes to the same file as an uninterrupted run; the output passes
`biocite validate`; `biocite report` scores it (PubMedQA long answers as gold nuggets)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from biocite.app.batch import read_journal, run_batch
from biocite.app.batchreport import report_run
from biocite.app.runfiles import load_topics, validate_run
from biocite.evaluator.runs import journal_path
from biocite.index.build import build_index
from biocite.index.hybrid import clear_retriever_cache
from biocite.pubmedqa import read_items
from biocite.settings import Settings, load_settings

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
N_TOPICS = 8


def small_corpus(root: Path) -> tuple[Path, Path]:
    """40 abstracts: the sources of 8 PubMedQA questions, 32 others; and a topics file of those questions."""
    questions = {item.pmid: item.question for item in read_items()}
    rows, topics = [], []
    with (REPO / "data/corpus/abstracts.jsonl").open() as handle:
        for line in handle:
            row = json.loads(line)
            pmid = str(row["pmid"])
            if pmid in questions and len(topics) < N_TOPICS:
                rows.append(row)
                topics.append({"id": pmid, "question": questions[pmid]})
            elif pmid not in questions and len(rows) - len(topics) < 32:
                rows.append(row)
            if len(topics) == N_TOPICS and len(rows) == 40:
                break
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    topics_file = root / "topics.json"
    topics_file.write_text(json.dumps({"topics": topics}))
    return corpus, topics_file


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, Path, list[str]]:
    root = tmp_path_factory.mktemp("batch")
    corpus, topics = small_corpus(root)
    overrides = [f"home={root / 'home'}", f"index.dir={root / 'index'}", "batch.run_name=test-run"]
    settings = load_settings("default", overrides)
    build_index(settings, [corpus], progress=False)
    clear_retriever_cache()
    return settings, topics, overrides


def cli(args: list[str], overrides: list[str]) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "biocite", *args]
    for o in overrides:
        cmd += ["-s", o]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE"}
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)


def test_sigkill_then_resume_gives_the_same_file(setup, tmp_path: Path) -> None:
    settings, topics, overrides = setup
    reference = tmp_path / "reference.json"
    summary = run_batch(settings, load_topics(str(topics)), reference, mode="extractive", progress=False)
    assert summary.answered + summary.abstained == N_TOPICS and summary.failed == 0
    assert summary.answered >= 1

    out = tmp_path / "killed.json"
    args = ["batch", "--topics", str(topics), "--out", str(out), "--mode", "extractive"]
    proc = cli(args, overrides)
    journal = journal_path(out)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if journal.is_file() and journal.read_text().count("\n") >= 3:  # header + 2 topics
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    _, done = read_journal(journal)
    assert 2 <= len(done) < N_TOPICS

    proc = cli(args, overrides)
    output = proc.communicate(timeout=180)[0].decode()
    assert proc.returncode == 0, output
    assert f"({len(done)} from an earlier run)" in output
    assert out.read_bytes() == reference.read_bytes()
    fmt, problems = validate_run(out, [t.topic_id for t in load_topics(str(topics)).topics])
    assert fmt == "biogen2024" and [p for p in problems if p.severity == "error"] == []


def test_report_on_a_small_run(setup, tmp_path: Path) -> None:
    from biocite.embedder import Embedder
    from biocite.evaluator.calibrate import calibrate_nuggets
    from biocite.evaluator.judges import COMPLETENESS_LABELS, SUPPORT_LABELS
    from biocite.heads import PairClassifier
    from biocite.kqa import load_questions

    settings, topics, _ = setup
    run = tmp_path / "run.json"
    run_batch(settings, load_topics(str(topics)), run, mode="extractive", progress=False, limit=4)
    heads = {
        "citation": (SUPPORT_LABELS, ["Supports", "Not relevant"]),
        "completeness": (COMPLETENESS_LABELS, ["Required", "Unnecessary"]),
    }
    for task, (label_set, labels) in heads.items():
        pairs = [
            ("Aspirin reduces fever.", "Aspirin lowered fever in adults."),
            ("Zinc helps.", "Cats purr."),
        ] * 4
        head = PairClassifier.train(
            pairs, labels * 4, label_set=label_set, epochs=1, batch_size=4, max_length=64, progress=False
        )
        head.save(tmp_path / f"{task}_head", meta={"train_data_sha256": "t" * 64})
    embedder = Embedder("minilm")
    matcher = calibrate_nuggets(embedder, n_trials=5, questions=load_questions()[:20], nli=[])
    matcher.save(tmp_path / "matcher.json")
    settings = settings.model_copy(
        update={
            "evaluator": settings.evaluator.model_copy(
                update={
                    "judge": "head",
                    "citation_head": tmp_path / "citation_head",
                    "completeness_head": tmp_path / "completeness_head",
                    "nugget_matcher": tmp_path / "matcher.json",
                    "bootstrap_samples": 100,
                }
            )
        }
    )
    metrics = ["completeness", "correctness", "citation", "nuggets"]
    doc, folder = report_run(settings, run, gold="pubmedqa", metrics=metrics, progress=False)
    assert folder == tmp_path / "run.report"
    saved = json.loads((folder / "metrics.json").read_text())
    html = (folder / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "batch journal run.journal.jsonl" in html
    batch, overall = saved["batch"], saved["overall"]
    assert batch["journaled"] == 4 and batch["failed"] == 0
    assert overall["answered"] == batch["answered"] and overall["abstained"] == batch["abstained"]
    assert "retrieve" in batch["node_timings"]
    m = overall["metrics"]
    if batch["answered"]:
        assert m["nugget_recall"]["n"] == batch["answered"] and 0.0 <= m["nugget_recall"]["mean"] <= 1.0
        assert m["completeness"]["n"] == batch["answered"] and m["citation_coverage"]["mean"] == 1.0
    gold = json.loads((folder / "gold_pubmedqa.json").read_text())
    assert set(gold) == set(read_journal(journal_path(run))[1]) and all(gold.values())


def test_parallel_workers_write_the_same_file(setup, tmp_path: Path) -> None:
    """Three threads, each with its own Agent over the shared retriever, give the one-worker result."""
    settings, topics, _ = setup
    one, three = tmp_path / "one.json", tmp_path / "three.json"
    run_batch(settings, load_topics(str(topics)), one, mode="extractive", progress=False, workers=1)
    summary = run_batch(
        settings, load_topics(str(topics)), three, mode="extractive", progress=False, workers=3
    )
    assert summary.workers == 3 and summary.failed == 0
    assert json.loads(one.read_text())["results"] == json.loads(three.read_text())["results"]


# Another program's private Ray on the same machine (another biocite run, say): it stops when that program ends.
_OTHER_RAY = """
import logging, sys, ray
ray.init(num_cpus=1, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
print(ray.get_runtime_context().gcs_address, flush=True)
sys.stdin.read()
"""


def test_ray_actors_write_the_same_file(setup, tmp_path: Path) -> None:
    """`biocite batch --ray auto --workers 2`: two Ray actors on a private local Ray, each with its own agent,
    write the one-worker file; the driver's journal makes the run resumable as any other. A Ray that another
    program started on the machine is not joined (Ray's own "auto" joined it, and lost its workers when that
    program ended)."""
    settings, topics, overrides = setup
    one, on_ray = tmp_path / "one.json", tmp_path / "ray.json"
    run_batch(settings, load_topics(str(topics)), one, mode="extractive", progress=False, workers=1)
    other = subprocess.Popen(
        [sys.executable, "-c", _OTHER_RAY], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        other_address = (other.stdout.readline() if other.stdout else "").strip()
        assert other_address, "the other program's Ray did not start"
        args = ["batch", "--topics", str(topics), "--out", str(on_ray), "--mode", "extractive"]
        proc = cli([*args, "--ray", "auto", "--workers", "2"], overrides)
        try:
            output = proc.communicate(timeout=600)[0].decode()
        except subprocess.TimeoutExpired:  # the old "auto" hung on the other program's 1-CPU Ray
            proc.kill()
            raise
    finally:
        other.communicate(input="", timeout=120)
    assert proc.returncode == 0, output
    assert "with 2 worker(s) on Ray at " in output
    assert other_address not in output, output
    assert json.loads(one.read_text())["results"] == json.loads(on_ray.read_text())["results"]
    _, done = read_journal(journal_path(on_ray))
    assert len(done) == N_TOPICS
