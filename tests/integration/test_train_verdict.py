"""`biocite train verdict --llm` through the installed executable, with SmolLM2-135M as the user's LLM: the
masses are computed once and reused, the report carries held-out figures, and `biocite ask` in generate mode
uses the head the report says it will."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from biocite.pubmedqa import load_questions, split_questions
from tests.conftest import DATA, write_jsonl

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
CUES_ONLY_NOTE = "verdict from the evidence cues only"


def biocite(home: Path, *args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("biocite") or str(Path(sys.executable).with_name("biocite"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIOCITE_")}
    env.update(BIOCITE_HOME=str(home), BIOCITE_PRESET="test", HF_HUB_OFFLINE="1")
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=600, cwd=REPO, env=env)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of the first 60 train and 5 held-out PubMedQA source abstracts (MiniLM) and SmolLM2."""
    root = tmp_path_factory.mktemp("verdict")
    train, held = split_questions(load_questions())
    wanted = {q.pmid for q in train[:60] + held[:5]}
    with (DATA / "corpus/abstracts.jsonl").open() as handle:
        rows = [row for line in handle if str((row := json.loads(line))["pmid"]) in wanted]
    corpus = write_jsonl(root / "pubmedqa.jsonl", rows)
    home = root / "home"
    for args in (["models", "install", "smollm2"], ["index", "build", "--corpus", str(corpus)]):
        done = biocite(home, "-q", *args)
        assert done.returncode == 0, done.stderr
    return home


def test_train_verdict_for_the_users_llm_resumes_and_the_agent_uses_what_it_reports(home: Path) -> None:
    first = biocite(home, "-q", "train", "verdict", "--llm", "--limit", "50", "--held-out", "5", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["llm"] == "smollm2" and report["train_questions"] == 60
    assert report["llm_train_questions"] == 50 and report["llm_calls"] == 55
    llm_head = set(report["choices"]) - {"cues"}  # with the cues, or the LLM alone: whichever CV prefers
    assert "cues" in report["choices"] and len(llm_head) == 1, report["choices"]
    assert llm_head <= {"cues + LLM", "LLM alone (cross-validated better than cues + LLM)"}
    assert {f["questions"] for f in report["held_out"].values()} == {5} and len(report["held_out"]) == 4
    assert all(Path(p).is_file() for p in report["saved"])

    again = json.loads(biocite(home, "-q", "train", "verdict", "--llm", "--limit", "52", "--held-out", "5",
                               "--json").stdout)  # fmt: skip
    assert again["llm_calls"] == 2 and again["llm_train_questions"] == 52  # the 55 masses were reused

    _, held = split_questions(load_questions())
    asked = biocite(home, "-q", "ask", held[0].question, "--mode", "generate", "--json")
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    notes = " ".join(answer["trace"]["notes"])
    if answer["question_type"] == "yes/no" and answer["verdict"] != "insufficient":
        assert (CUES_ONLY_NOTE in notes) == (again["generate_head"] not in ("cues + LLM", "LLM alone")), notes

    # The printed bottom line says how sure the verdict is: hedged below 0.66 as shown (agent/graph.py LIKELY).
    shown = json.loads(biocite(home, "-q", "ask", held[0].question, "--mode", "extractive", "--json").stdout)
    readable = biocite(home, "-q", "ask", held[0].question, "--mode", "extractive")
    assert readable.returncode == 0 and shown["verdict"] in ("yes", "no", "mixed"), readable.stderr
    p, verdict = shown["verdict_probability"], shown["verdict"]
    hedged = f"Bottom line: uncertain, leaning {verdict} (probability {p:.2f})"
    assert (hedged if round(p, 2) < 0.66 else f"Bottom line: {verdict}, the cited studies") in readable.stdout
