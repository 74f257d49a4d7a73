"""The Milvus engine at API level on milvus-lite (embedded): BM25 full text, dense and Milvus's own hybrid."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from biocite.errors import IndexMismatchError
from biocite.index.milvus import MilvusIndex
from biocite.tokenize import tokenize
from tests.conftest import MINI_CORPUS


def test_lexical_dense_and_hybrid_search_on_milvus_lite(tmp_path: Path) -> None:
    pmids = [d["pmid"] for d in MINI_CORPUS]
    tokens = [tokenize(f"{d['title']}\n{d['abstract']}") for d in MINI_CORPUS]
    vectors = np.eye(len(pmids), 8, dtype=np.float32)
    uri = str(tmp_path / "milvus.db")
    MilvusIndex.build(uri, "t", [(pmids, tokens, vectors)], 8, k1=1.5, b=0.75)
    index = MilvusIndex.open(uri, "t")
    assert len(index) == 4
    lexical = index.lexical.search(tokenize("metformin gestational diabetes"), 3)
    assert lexical[0][0] == "1003" and lexical[0][1] > 0
    assert [s for _, s in lexical] == sorted((s for _, s in lexical), reverse=True)
    assert index.lexical.search([], 3) == [] and index.lexical.search(["zzznotaword"], 3) == []
    dense = index.dense.search(vectors[[1, 3]], 2)
    assert [row[0][0] for row in dense] == ["1002", "1004"]
    assert dense[0][0][1] == pytest.approx(1.0)
    fused = index.hybrid(tokenize("knee arthroscopy"), vectors[3], 4, dense_weight=0.5)
    assert {p for p, _ in fused[:2]} == {"1002", "1004"}  # one from each side
    with pytest.raises(IndexMismatchError, match="no collection 'other'"):
        MilvusIndex.open(uri, "other")


def test_a_closed_build_can_be_moved_and_opened_in_the_same_process(tmp_path: Path) -> None:
    """A staged build renames the folder holding milvus-lite's database; the build must release its embedded
    server (and its lock) or opening the renamed index in the same process fails (bench/milvus_pubmedqa)."""
    pmids = [d["pmid"] for d in MINI_CORPUS]
    tokens = [tokenize(d["abstract"]) for d in MINI_CORPUS]
    staging, final = tmp_path / "index.staging", tmp_path / "index"
    staging.mkdir()
    vectors = np.eye(len(pmids), 8, dtype=np.float32)
    MilvusIndex.build(str(staging / "milvus.db"), "t", [(pmids, tokens, vectors)], 8, k1=1.5, b=0.75).close()
    staging.rename(final)
    index = MilvusIndex.open(str(final / "milvus.db"), "t")
    assert len(index) == 4
    index.close()
