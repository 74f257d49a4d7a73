"""`biocite index build --ray auto` on a local Ray with 2 workers equals the single-process build."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from biocite.index.build import open_index
from biocite.index.hybrid import HybridRetriever
from biocite.index.store import DocStore
from biocite.settings import load_settings
from tests.conftest import DATA, write_jsonl

pytestmark = pytest.mark.slow  # starts Ray and two MiniLM workers: ~1 min on 2 busy cores

BIOCITE = shutil.which("biocite") or str(Path(sys.executable).with_name("biocite"))


def corpus(folder: Path) -> Path:
    """Two shards: 150 shipped abstracts as JSONL, then the update fixtures (a replacement, deletions)."""
    rows = []
    with (DATA / "corpus" / "abstracts.jsonl").open() as handle:
        for line in handle:
            rows.append(json.loads(line))
            if len(rows) == 150:
                break
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "a_abstracts.jsonl", rows)
    shutil.copytree(DATA.parent / "tests/fixtures/corpus/updates", folder / "b_updates")
    return folder


def build(tmp_path: Path, corpus_dir: Path, name: str, *extra: str) -> Path:
    index = tmp_path / name
    args = ["--preset", "test", "--set", f"home={tmp_path / 'home'}", "--set", f"index.dir={index}"]
    done = subprocess.run([BIOCITE, "index", "build", "--corpus", str(corpus_dir), *args, *extra],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return index


def save_changed_shard(corpus_dir: Path, index: Path) -> str:
    """A parse shard of the first file, as a killed build leaves it, whose first record's journal differs from
    the file (a field that is neither embedded nor tokenised): the build must read it back, not parse again."""
    import pickle

    from biocite.index.build import prepare
    from biocite.index.distributed import SHARD_DIR
    from biocite.index.readers import ReadStats, iter_records
    from biocite.models import file_sha256

    first = corpus_dir / "a_abstracts.jsonl"
    records = [prepare(d, True, split=True) for d in iter_records([first])]
    records[0].doc.journal = "FROM THE SAVED SHARD"
    stats = ReadStats(files=1, records=len(records))
    name = f"{first.name}.{file_sha256(first)[:16]}.stem1.pkl"
    (index / SHARD_DIR).mkdir(parents=True)
    (index / SHARD_DIR / name).write_bytes(pickle.dumps((records, stats)))
    (index / "manifest.json").write_text(json.dumps({"status": "building"}))
    return records[0].doc.pmid


def test_ray_build_resumes_and_equals_single_process_build(tmp_path: Path) -> None:
    """One Ray build (Ray and its workers start once) checks both: a saved parse shard is reused, and
    everything else equals the single-process build row for row, vector for vector, hit for hit."""
    corpus_dir = corpus(tmp_path / "corpus")
    single = build(tmp_path, corpus_dir, "single")
    marked = save_changed_shard(corpus_dir, tmp_path / "ray")
    # embed_device=auto: the workers ask Ray for a GPU only when the cluster has one (this one has none)
    ray = build(tmp_path, corpus_dir, "ray", "--ray", "auto", "--set", "index.ray_workers=2",
                "--set", "index.embed_device=auto")  # fmt: skip
    assert not (ray / "ray_shards").exists()
    a, b = DocStore(single / "docs.sqlite", readonly=True), DocStore(ray / "docs.sqlite", readonly=True)
    assert b.get(marked).journal == "FROM THE SAVED SHARD"  # type: ignore[union-attr]
    assert a.get(marked).journal != "FROM THE SAVED SHARD"  # type: ignore[union-attr]
    assert a.pmids() == b.pmids() and len(a) > 100
    rows = "SELECT pmid, content_hash, doc, sentences, tokens FROM docs WHERE pmid != ? ORDER BY pmid"
    assert a.conn.execute(rows, (marked,)).fetchall() == b.conn.execute(rows, (marked,)).fetchall()
    ids_a, vec_a = a.all_embeddings("minilm", 384)
    ids_b, vec_b = b.all_embeddings("minilm", 384)
    assert ids_a == ids_b
    assert np.abs(vec_a - vec_b).max() < 1e-4
    results = []
    for index in (single, ray):
        settings = load_settings("test", [f"index.dir={index}", f"home={tmp_path / 'home'}"])
        retriever = HybridRetriever(open_index(settings), settings)
        results.append([[h.pmid for h in retriever.search(q, k=10)] for q in
                        ["stroke prevention with aspirin", "cancer screening", "diabetes in pregnancy"]])  # fmt: skip
    assert results[0] == results[1]
