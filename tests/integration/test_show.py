"""`biocite show`: an indexed abstract sentence by sentence, through the installed executable, on a real
index of four abstracts. The numbers and offsets are those of an Answer's evidence."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from biocite.index.build import build_index
from biocite.settings import Settings, load_settings
from tests.conftest import MINI_CORPUS, REPO, write_jsonl


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("show")
    write_jsonl(root / "mini.jsonl", MINI_CORPUS)
    settings = load_settings("test", [f"home={root / 'home'}", f"index.dir={root / 'index'}"])
    build_index(settings, [root / "mini.jsonl"], progress=False)
    return settings


def biocite(settings: Settings, *args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("biocite") or str(Path(sys.executable).with_name("biocite"))
    overrides = ["--set", f"home={settings.home}", "--set", f"index.dir={settings.index_dir}"]
    return subprocess.run([exe, *args, *overrides], capture_output=True, text=True, timeout=120, cwd=REPO)


def test_show_prints_each_sentence_numbered_and_json_gives_offsets(settings) -> None:
    done = biocite(settings, "show", "1002", "1001")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == MINI_CORPUS[1]["title"]  # in the order asked
    assert "PMID 1002" in lines[1] and "https://pubmed.ncbi.nlm.nih.gov/1002/" in lines[1]
    assert lines[2].split() == [
        "0",
        *"Arthroscopic partial meniscectomy was compared with exercise therapy.".split(),
    ]
    assert any(line.split()[:2] == ["1", "Aspirin"] for line in lines)  # 1001's second sentence

    # a PMID as copied from a paper or the browser reads as the PMID
    copied = ["PMID: 1001", "https://pubmed.ncbi.nlm.nih.gov/1001/", "pmid1001"]
    docs = json.loads(biocite(settings, "show", *copied, "--json").stdout)
    assert [d["pmid"] for d in docs] == ["1001"]
    abstract = docs[0]["abstract"]
    assert abstract == MINI_CORPUS[0]["abstract"]
    assert [s["index"] for s in docs[0]["sentences"]] == [0, 1, 2]
    assert all(abstract[s["start"] : s["end"]] == s["text"] for s in docs[0]["sentences"])


@pytest.mark.parametrize(
    ("pmids", "message"),
    [
        (["1001", "424242"], "unknown PMID 424242 (not in the index)"),
        (["1e3"], "not a PMID (a positive integer): '1e3'"),
    ],
)
def test_show_names_a_pmid_it_cannot_show(settings, pmids, message) -> None:
    done = biocite(settings, "show", *pmids)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"error: {message}"]
