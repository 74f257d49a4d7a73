"""The built wheel works outside the repository: build it, install it into a fresh venv in a temporary
folder (the heavy dependencies, torch and friends, are borrowed from this environment through a .pth
line rather than downloaded again), then build an index, search and answer there with the console script."""

from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, write_question_corpus

pytestmark = pytest.mark.slow  # builds a wheel and a 40-abstract index (~1 min)


def sh(*cmd: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{cmd}: {done.stderr[-2000:]}"
    return done


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheel")
    sh(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-w",
        root,
        REPO,
        cwd=root,
    )
    wheel = next(root.glob("biocite-*.whl"))
    sh(sys.executable, "-m", "venv", root / "venv", cwd=root)
    python = root / "venv" / "bin" / "python"
    purelib = sh(
        python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=root
    ).stdout.strip()
    # Dependencies from this environment; only plain path lines, so its editable biocite stays out.
    Path(purelib, "borrowed-deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    sh(python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel, cwd=root)
    return root


def test_installed_wheel_searches_and_answers(venv: Path) -> None:
    bin_dir = venv / "venv" / "bin"
    where = sh(bin_dir / "python", "-c", "import biocite; print(biocite.__file__)", cwd=venv).stdout
    assert str(venv) in where and str(REPO) not in where  # the installed package, not the checkout
    env = {**os.environ, "BIOCITE_HOME": str(venv / "home"), "BIOCITE_PRESET": "test"}
    env.pop("BIOCITE_DATA_DIR", None)
    corpus = venv / "corpus.jsonl"
    questions = write_question_corpus(corpus)
    sh(bin_dir / "biocite", "index", "build", "--corpus", corpus, cwd=venv, env=env)
    hits = sh(
        bin_dir / "biocite",
        "search",
        "tailored print telephone counseling mammography",
        "--json",
        cwd=venv,
        env=env,
    )
    assert "10808977" in hits.stdout
    answer = sh(
        bin_dir / "biocite", "ask", questions["10808977"], "--mode", "extractive", "--json", cwd=venv, env=env
    )
    assert '"10808977"' in answer.stdout
    # the presets and shipped data come from inside the wheel
    shipped = sh(
        bin_dir / "python",
        "-c",
        "from biocite.settings import DATA_DIR, CONFIGS_DIR; print(DATA_DIR, CONFIGS_DIR)",
        cwd=venv,
        env=env,
    )
    assert str(REPO) not in shipped.stdout and "site-packages" in shipped.stdout
