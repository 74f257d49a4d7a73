"""BM25Index (bm25s backend) against the reference rank-bm25 BM25Okapi: same top-10 ids, scores within 1e-6.

Two corpora: the shipped default abstracts with 30 real PubMedQA questions, and a seeded synthetic corpus
with a Zipfian vocabulary whose commonest terms occur in more than half the documents (so rank-bm25's
epsilon floor for negative IDF is exercised).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from biocite.index.bm25 import BM25Index
from biocite.pubmedqa import read_items
from biocite.settings import DATA_DIR
from biocite.tokenize import tokenize, tokenize_many

K = 10
TOL = 1e-6
N_QUESTIONS = 30


def reference_top(scores: np.ndarray, ids: list[str], k: int) -> list[str]:
    """rank-bm25's ranking with the same contract as BM25Index.search: score > 0, ties by position."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    return [ids[i] for i in order[:k] if scores[i] > 0]


def assert_same_as_reference(index: BM25Index, reference: BM25Okapi, queries: list[list[str]]) -> None:
    assert any(queries), "no query has a token"
    for query in queries:
        ours, ref = index.scores(query), reference.get_scores(query)
        np.testing.assert_allclose(ours, ref, rtol=0, atol=TOL, err_msg=f"query {query}")
        hits = index.search(query, K)
        assert [doc for doc, _ in hits] == reference_top(ref, index.ids, K), f"query {query}"
        np.testing.assert_allclose([s for _, s in hits], np.sort(ref)[::-1][: len(hits)], atol=TOL)


@pytest.fixture(scope="module")
def shipped() -> tuple[list[list[str]], list[str]]:
    with (DATA_DIR / "corpus" / "abstracts.jsonl").open(encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    texts = [f"{r['title']}\n{r['abstract']}" for r in records]
    return tokenize_many(texts), [str(r["pmid"]) for r in records]


def test_shipped_corpus_pubmedqa_questions(shipped: tuple[list[list[str]], list[str]]) -> None:
    tokens, ids = shipped
    queries = [tokenize(item.question) for item in read_items()[:N_QUESTIONS]]
    index = BM25Index.build(tokens, ids, k1=1.5, b=0.75, epsilon=0.25, backend="bm25s")
    reference = BM25Okapi(tokens, k1=1.5, b=0.75, epsilon=0.25)
    assert len(queries) == N_QUESTIONS
    assert_same_as_reference(index, reference, queries)
    # and the rank_bm25 backend is the reference itself
    ref_backend = BM25Index.build(tokens, ids, backend="rank_bm25")
    assert ref_backend.search(queries[0], K) == [
        (d, pytest.approx(s, abs=TOL)) for d, s in index.search(queries[0], K)
    ]


def synthetic_corpus(n_docs: int, vocab: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, vocab + 1) ** 1.05
    lengths = rng.integers(20, 200, size=n_docs)
    draws = rng.choice(vocab, size=int(lengths.sum()), p=weights / weights.sum())
    words = [f"w{i}" for i in range(vocab)]
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    return [[words[t] for t in draws[a:b]] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def test_synthetic_zipf_corpus_with_epsilon_floor() -> None:
    tokens = synthetic_corpus(n_docs=3000, vocab=20000, seed=7)
    ids = [f"doc{i}" for i in range(len(tokens))]
    reference = BM25Okapi(tokens)
    floored = [w for w, idf in reference.idf.items() if idf == reference.epsilon * reference.average_idf]
    assert len(floored) >= 5, "the synthetic corpus must have terms in more than half the documents"
    rng = np.random.default_rng(11)
    vocab = sorted(reference.idf)
    queries = [[vocab[i] for i in rng.choice(len(vocab), size=8)] for _ in range(20)]
    queries += [floored[:3] + [vocab[i] for i in rng.choice(len(vocab), size=3)] for _ in range(5)]
    queries += [floored[:2], [floored[0], floored[0], "w17", "w17", "w17"], ["w3", "not-a-term"]]
    index = BM25Index.build(tokens, ids)
    assert_same_as_reference(index, reference, queries)
