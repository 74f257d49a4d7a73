"""TREC interop through the installed command: `search --topics --trec-run` then `eval-retrieval`, whose
ir_measures figures must equal the benchmark's in-process computation on the same hits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from biocite.index.hybrid import clear_retriever_cache, open_retriever
from biocite.index.rerank import RankMetrics
from biocite.index.trec import read_run
from biocite.pubmedqa import Question
from biocite.settings import load_settings
from tests.conftest import write_question_corpus

pytestmark = pytest.mark.slow  # builds a real 40-abstract index with MiniLM (~20 s)

BIOCITE = str(Path(sys.executable).with_name("biocite"))


def run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BIOCITE_HOME": str(home)}
    return subprocess.run([BIOCITE, *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("trec")
    questions = write_question_corpus(root / "corpus.jsonl")
    done = run("index", "build", "--corpus", str(root / "corpus.jsonl"), "-p", "test", home=root / "home")
    assert done.returncode == 0, done.stderr
    return root, questions


def test_trec_run_evaluates_to_the_benchmark_recall(built: tuple[Path, dict[str, str]]) -> None:
    root, questions = built
    topics = root / "topics.json"
    topics.write_text(json.dumps([{"id": p, "question": q} for p, q in questions.items()]))
    out = root / "run.trec"
    done = run(
        "search",
        "--topics",
        str(topics),
        "--trec-run",
        str(out),
        "-k",
        "10",
        "-p",
        "test",
        home=root / "home",
    )
    assert done.returncode == 0, done.stderr
    assert {d.query_id for d in read_run(out)} == set(questions)

    done = run("eval-retrieval", str(out), "pubmedqa", "--json", home=root / "home")
    assert done.returncode == 0, done.stderr
    scores = json.loads(done.stdout)
    assert set(scores) == {"nDCG@10", "R@1", "R@10", "R@100", "AP", "RR"}

    os.environ["BIOCITE_HOME"] = str(root / "home")
    try:
        clear_retriever_cache()
        retriever = open_retriever(load_settings("test"))
        qs = [Question(pmid=p, question=q) for p, q in questions.items()]
        bench = RankMetrics.of(qs, [[h.pmid for h in retriever.search(q.question, k=10)] for q in qs])
    finally:
        os.environ.pop("BIOCITE_HOME")
    assert scores["R@10"] == pytest.approx(bench.recall_at_10)
    assert scores["R@1"] == pytest.approx(bench.recall_at_1)
    assert scores["RR"] == pytest.approx(bench.mrr)
    assert bench.recall_at_10 == 1.0  # each question's own abstract is in a 40-abstract index


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty"),
        ("q1 Q0 d1 1\n", "run.trec:1: not a TREC run line"),
        ("q1 Q0 d1 1 x tag\n", "run.trec:1"),
    ],
)
def test_bad_run_file_is_one_line_exit_2(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "run.trec"
    bad.write_text(content)
    done = run("eval-retrieval", str(bad), "pubmedqa", home=tmp_path / "home")
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
