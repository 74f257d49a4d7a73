"""The scale-path engines against the default ones: tantivy vs bm25s on real abstracts, IVF-PQ + exact
float16 re-scoring vs flat FAISS on clustered vectors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import faiss
import numpy as np
import pytest

from biocite.errors import BiociteError, IndexMismatchError
from biocite.index.bm25 import BM25Index
from biocite.index.distributed import worker_gpus
from biocite.index.ivfpq import IDS_FILE, IvfPqIndex, IvfPqParams, factory_string
from biocite.index.lexical import META_FILE, TantivyBM25
from biocite.tokenize import tokenize
from tests.conftest import DATA


@pytest.fixture(scope="module")
def abstracts() -> list[dict]:
    rows = []
    with (DATA / "corpus" / "abstracts.jsonl").open() as handle:
        for line in handle:
            row = json.loads(line)
            if row.get("abstract") and len(row.get("title", "")) > 40:
                rows.append(row)
            if len(rows) == 1500:
                break
    return rows


def test_tantivy_ranks_like_bm25s_on_real_abstracts(tmp_path: Path, abstracts: list[dict]) -> None:
    tokens = [tokenize(f"{r['title']}\n{r['abstract']}") for r in abstracts]
    ids = [str(r["pmid"]) for r in abstracts]
    exact = BM25Index.build(tokens, ids)
    TantivyBM25.build(zip(ids, tokens, strict=True), tmp_path / "tantivy")
    engine = TantivyBM25.load(tmp_path / "tantivy")
    assert len(engine) == len(ids)
    top1, overlap = 0, []
    queries = abstracts[::15]
    for row in queries:
        query = tokenize(row["title"])
        ours, theirs = engine.search(query, 10), exact.search(query, 10)
        top1 += ours[0][0] == str(row["pmid"])
        overlap.append(len({p for p, _ in ours} & {p for p, _ in theirs}) / 10)
        assert [s for _, s in ours] == sorted((s for _, s in ours), reverse=True)
    assert top1 / len(queries) >= 0.95  # the title finds its own abstract
    assert float(np.mean(overlap)) >= 0.8  # Lucene BM25 (k1 1.2) vs Okapi (k1 1.5): close, not equal
    df = Counter(t for doc in tokens for t in set(doc))
    for token in ["patient", "randomis", "zzznotaword", *tokenize(abstracts[0]["title"])]:
        assert engine.doc_freq(token) == df.get(token, 0)
    assert engine.search([], 10) == [] and engine.search(["zzznotaword"], 10) == []


def test_tantivy_incomplete_index_is_refused(tmp_path: Path) -> None:
    TantivyBM25.build([("1", ["aspirin", "stroke"])], tmp_path / "t")
    (tmp_path / "t" / META_FILE).unlink()
    with pytest.raises(IndexMismatchError, match="no complete tantivy index"):
        TantivyBM25.load(tmp_path / "t")


def clustered(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((64, dim))
    points = centers[rng.integers(0, 64, n)] + 0.8 * rng.standard_normal((n, dim))
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def test_ivfpq_with_rescoring_matches_flat_search(tmp_path: Path) -> None:
    n, dim = 8000, 384
    vectors = clustered(n, dim, seed=1)
    ids = [str(10_000_000 + i) for i in range(n)]
    params = IvfPqParams(nprobe=16, rescore_k=100)
    assert factory_string(params, n, dim) == "IVF205,PQ48x4fs"  # 4 sqrt(N) = 357, capped at N / 39
    chunks = ((ids[i : i + 3000], vectors[i : i + 3000]) for i in range(0, n, 3000))
    IvfPqIndex.build(chunks, n, dim, tmp_path, params)
    index = IvfPqIndex.load(tmp_path, params)
    assert np.load(tmp_path / IDS_FILE).dtype == np.int64
    flat = faiss.IndexFlatIP(dim)
    flat.add(vectors)
    queries = vectors[::80] + 0.3 * clustered(100, dim, seed=2)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    exact_scores, exact_rows = flat.search(queries, 10)
    found = index.search(queries, 10)
    recall = np.mean([len({ids[r] for r in row} & {p for p, _ in hits}) / 10
                      for row, hits in zip(exact_rows, found, strict=True)])  # fmt: skip
    assert recall >= 0.95
    for scores, hits in zip(exact_scores, found, strict=True):
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
        assert abs(hits[0][1] - scores[0]) < 2e-3  # float16 rows, exact inner product
    no_rescore = IvfPqIndex.load(tmp_path, params.model_copy(update={"rescore_k": 10}))
    rough = np.mean([len({ids[r] for r in row} & {p for p, _ in hits}) / 10
                     for row, hits in zip(exact_rows, no_rescore.search(queries, 10), strict=True)])  # fmt: skip
    assert recall > rough  # the exact re-scoring is what recovers flat's ranking


def test_ivfpq_small_corpus_is_exact_and_keeps_string_ids(tmp_path: Path) -> None:
    vectors = clustered(50, 32, seed=3)
    ids = [f"doc-{i}" for i in range(50)]
    index = IvfPqIndex.build([(ids, vectors)], 50, 32, tmp_path, IvfPqParams())
    hits = index.search(vectors[:3], 5)
    assert [h[0][0] for h in hits] == ids[:3]
    with pytest.raises(IndexMismatchError, match="expected 60 vectors"):
        IvfPqIndex.build([(ids, vectors)], 60, 32, tmp_path / "x", IvfPqParams())


@pytest.mark.parametrize(
    ("device", "cluster_gpus", "asked"),
    [("cpu", 0, 0), ("cpu", 4, 0), ("auto", 0, 0), ("auto", 2, 1), ("cuda", 2, 1), ("cuda:1", 1, 1)],
)
def test_ray_embedding_tasks_ask_for_a_gpu_only_for_a_gpu_device(
    device: str, cluster_gpus: int, asked: int
) -> None:
    assert worker_gpus(device, cluster_gpus) == asked


def test_a_gpu_device_on_a_ray_cluster_without_gpus_is_refused_not_queued_forever() -> None:
    with pytest.raises(BiociteError, match="index.embed_device is 'cuda' but the Ray cluster has no GPU"):
        worker_gpus("cuda", 0)
