"""The README's Python API example, run as written in a fresh interpreter against a small real index."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, write_question_corpus

pytestmark = pytest.mark.slow  # builds a 40-abstract index with MiniLM (~20 s)

MARKER = "<!-- python-api-example: run by tests/integration/test_python_api.py -->"


def readme_example() -> str:
    text = (REPO / "README.md").read_text()
    match = re.search(re.escape(MARKER) + r"\s*```python\n(.*?)```", text, re.S)
    assert match, "the README lost its Python API example"
    return match.group(1)


def test_readme_python_example_runs(tmp_path: Path) -> None:
    write_question_corpus(tmp_path / "corpus.jsonl")
    env = {**os.environ, "BIOCITE_HOME": str(tmp_path / "home"), "BIOCITE_PRESET": "test"}
    biocite = str(Path(sys.executable).with_name("biocite"))
    built = subprocess.run(
        [biocite, "index", "build", "--corpus", str(tmp_path / "corpus.jsonl")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    done = subprocess.run(
        [sys.executable, "-c", readme_example()], capture_output=True, text=True, env=env, timeout=900
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Loading weights" not in done.stderr  # the model-load bars are noise in a notebook
    first, hits, overall = done.stdout.strip().splitlines()[-3:]
    assert "10808977" in first  # the question's own source abstract is cited
    assert "10808977" in hits
    assert "citation" in overall or "support" in overall


def test_answer_renders_as_escaped_html() -> None:
    from biocite.records import Answer, AnswerSentence, Citation, Reference

    answer = Answer(
        question="Is <b>x</b> safe?",
        sentences=[AnswerSentence(text="X is <script>safe</script>.", citations=[Citation(pmid="123")])],
        references=[Reference(pmid="123", title="A & B")],
    )
    html = answer._repr_html_()
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert 'href="https://pubmed.ncbi.nlm.nih.gov/123/"' in html and "A &amp; B" in html
