"""Shared fixtures. Tests never touch the user's ~/.cache/biocite: BIOCITE_HOME points into tmp."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from biocite.pubmedqa import read_items

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# The support model (core/support.py) is installed on first use from the artifact biocite ships
# (core/shipped.py), once per test session into a temporary folder. Tests that train one (`biocite train
# support`) get a TINY recipe (seconds, not minutes): its quality is not what they check.
_SUPPORT_DIR = Path(os.environ.get("PYTEST_SUPPORT_DIR", "/tmp")) / f"biocite-test-support-{os.getpid()}"
for _key, _value in {
    "BIOCITE_SUPPORT__PATH": str(_SUPPORT_DIR),
    "BIOCITE_SUPPORT__TRAIN_PAIRS": "96",
    "BIOCITE_SUPPORT__MAX_LENGTH": "48",
    "BIOCITE_SUPPORT__CALIBRATION_CLAIMS": "24",
    "BIOCITE_SUPPORT__CALIBRATION_HARD_PER_TYPE": "3",
}.items():
    os.environ.setdefault(_key, _value)

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"

MINI_CORPUS = [
    {
        "pmid": "1001",
        "title": "Aspirin for secondary prevention of stroke",
        "abstract": "We randomised 2,000 patients with a recent ischaemic stroke to aspirin or placebo. "
        "Aspirin reduced recurrent stroke by 22% over two years. Major bleeding was rare.",
    },
    {
        "pmid": "1002",
        "title": "Knee arthroscopy versus physiotherapy for degenerative meniscal tears",
        "abstract": "Arthroscopic partial meniscectomy was compared with exercise therapy. "
        "At 12 months, knee function did not differ between the groups.",
    },
    {
        "pmid": "1003",
        "title": "Metformin and gestational diabetes outcomes",
        "abstract": "Metformin lowered maternal weight gain compared with insulin. "
        "Neonatal hypoglycaemia was less frequent with metformin.",
    },
    {
        "pmid": "1004",
        "title": "Vitamin D supplementation and fracture risk in older adults",
        "abstract": "Daily vitamin D did not reduce hip fractures in community-dwelling adults over 70. "
        "Falls were similar in both arms.",
    },
]


# Three PubMedQA development questions whose source abstracts are in the embedded corpus.
QUESTION_PMIDS = ["10808977", "10340286", "10473855"]


def write_question_corpus(path: Path) -> dict[str, str]:
    """Write the three source abstracts and 37 unrelated ones to `path`; return {pmid: question}."""
    questions = {item.pmid: item.question for item in read_items()}
    rows, extra = [], 0
    with (DATA / "corpus/abstracts.jsonl").open() as handle:
        for line in handle:
            row = json.loads(line)
            if str(row["pmid"]) in QUESTION_PMIDS:
                rows.append(row)
            elif extra < 37 and str(row["pmid"]) not in questions:
                rows.append(row)
                extra += 1
    write_jsonl(path, rows)
    return {p: questions[p] for p in QUESTION_PMIDS}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def mini_corpus(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "mini.jsonl", MINI_CORPUS)


@pytest.fixture
def biocite_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("BIOCITE_HOME", str(home))
    return home


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    import shutil

    shutil.rmtree(_SUPPORT_DIR, ignore_errors=True)
