"""Open the HTML report in headless Chromium: it must parse, lay out and paint. The screenshot is kept in
build/test-artifacts/ (or $BIOCITE_TEST_ARTIFACTS). Skipped when no Chromium is installed
(Debian: `apt-get install chromium-headless-shell`)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from biocite.evaluator.evaluate import CitationResult, QuestionResult, SentenceResult, summarise
from biocite.evaluator.report import write_report
from tests.conftest import REPO

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")


def _browser() -> str | None:
    return next((b for b in map(shutil.which, BROWSERS) if b), None)


def _doc() -> dict:
    sentences = [
        SentenceResult(
            text="Aspirin reduces fever in adults.",
            completeness="Required",
            correct=True,
            correct_via="12",
            citations=[
                CitationResult(pmid="12", label="Supports", evidence="Aspirin lowered fever in adults.")
            ],
        ),
        SentenceResult(
            text="It cures <all> colds.",
            completeness="Inappropriate",
            correct=False,
            citations=[CitationResult(pmid="13", label="Contradicts", evidence="It did not cure colds.")],
        ),
        SentenceResult(text="Ask your doctor.", completeness="undetermined", correct=False),
    ]
    qs = [
        QuestionResult(
            topic_id=str(i),
            question=f"Question {i}?",
            outcome="answered",
            sentences=sentences,
            scores={"completeness": i / 10, "support_rate": 0.5, "correctness": 1 - i / 10},
        )
        for i in range(1, 9)
    ]
    qs.append(
        QuestionResult(topic_id="99", question="Q?", outcome="abstained", abstain_reason="thin evidence")
    )
    return {
        "run": {"name": "render-test", "path": "-", "format": "biocite"},
        "judges": {"judge": "head"},
        "overall": summarise(qs, 200, 1),
        "questions": [q.model_dump() for q in qs],
        "timing": {"seconds": 0.1},
        "notes": ["completeness labels are a proxy"],
    }


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])


@pytest.mark.skipif(_browser() is None, reason="no headless Chromium installed")
def test_report_renders_in_headless_chromium(tmp_path) -> None:
    browser = _browser()
    html = tmp_path / "report.html"
    write_report(html, _doc())
    artifacts = Path(os.environ.get("BIOCITE_TEST_ARTIFACTS", REPO / "build" / "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "evaluator_report.png"
    shot.unlink(missing_ok=True)
    common = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--allow-file-access-from-files",
    ]
    dom = subprocess.run([*common, "--dump-dom", html.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-500:]
    # the browser's DOM (after parsing and layout) has the summary table, the plots and the drill-down
    assert "<table>" in dom.stdout and dom.stdout.count("<svg") >= 3 and dom.stdout.count("<details") == 9
    assert "&lt;all&gt;" in dom.stdout
    run = subprocess.run(
        [*common, f"--screenshot={shot}", "--window-size=1200,1600", html.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and shot.is_file(), run.stderr[-500:]
    width, height = _png_size(shot)
    assert (width, height) == (1200, 1600) and shot.stat().st_size > 20_000  # painted, not a blank page
