"""Unit tests for the shared tokenizer and BM25Index (both backends)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from biocite.errors import BiociteError, IndexMismatchError, InputError
from biocite.index.bm25 import META_FILE, BM25Index, okapi_idf
from biocite.tokenize import tokenize, tokenize_many

BACKENDS = ["bm25s", "rank_bm25"]

TEXTS = [
    "IL-6 and TNF-α levels rise in severe COVID-19.",
    "Interleukin 6 (IL6) blockade with tocilizumab in rheumatoid arthritis.",
    "Long-term outcomes of non-small-cell lung cancer after surgery.",
    "Vitamin D supplementation and the risk of type 2 diabetes.",
    "T cell responses to hepatitis B vaccination in dialysis patients.",
    "Statins lower LDL cholesterol; statins also reduce cardiovascular events.",
    "Aspirin for primary prevention of cardiovascular disease in older adults.",
    "Metformin and lactic acidosis in patients with kidney disease.",
]
IDS = [f"pmid{i}" for i in range(len(TEXTS))]


@pytest.fixture(scope="module")
def corpus() -> list[list[str]]:
    return tokenize_many(TEXTS)


@pytest.fixture(scope="module", params=BACKENDS)
def index(request: pytest.FixtureRequest, corpus: list[list[str]]) -> BM25Index:
    return BM25Index.build(corpus, IDS, backend=request.param)


# ---- tokenizer -------------------------------------------------------------------------------------


def test_tokenize_compounds_with_digits_join_and_match_unhyphenated() -> None:
    assert "il6" in tokenize("IL-6") and tokenize("IL-6") == tokenize("IL6")
    assert tokenize("COVID-19") == ["covid19"]


def test_tokenize_word_compounds_split() -> None:
    assert tokenize("long-term", stem=False) == ["long", "term"] == tokenize("long term", stem=False)
    assert tokenize("non-small-cell", stem=False) == ["non", "small", "cell"]


def test_tokenize_greek_letters_spelt_out() -> None:
    assert tokenize("TNF-α") == tokenize("TNF alpha") == ["tnf", "alpha"]


def test_tokenize_drops_stop_words_and_boilerplate_keeps_meaningful_letters() -> None:
    assert tokenize("What is the role of the drug?", stem=False) == ["role", "drug"]
    assert tokenize("BACKGROUND: Methods were used; results.", stem=False) == []
    assert tokenize("vitamin D and T cells", stem=False) == ["vitamin", "d", "t", "cells"]


def test_tokenize_stems_words_not_codes_and_keeps_decimals() -> None:
    assert tokenize("patients receiving treatments") == ["patient", "receiv", "treatment"]
    assert tokenize("patients receiving treatments", stem=False) == ["patients", "receiving", "treatments"]
    assert tokenize("HbA1c fell, p<0.05") == ["hba1c", "fell", "p", "0.05"]
    assert tokenize("the patient's response") == ["patient", "respons"]


def test_tokenize_keeps_a_word_whose_stem_is_a_short_stop_word() -> None:
    """ "ALS" stems to "al" (of "et al") and "AEDs" to "a": amyotrophic lateral sclerosis was never indexed, nor
    asked of ("Does riluzole prolong survival in ALS?" had no concept "ALS"). A longer stop-word stem still goes
    ("resulted" -> "result")."""
    assert tokenize("riluzole in ALS") == ["riluzol", "als"]
    assert tokenize("AEDs were stopped") == ["aeds", "stop"]
    assert tokenize("Jones et al. resulted in designs") == ["jone"]


def test_tokenize_deterministic_and_many_equals_single() -> None:
    assert tokenize_many(TEXTS) == [tokenize(t) for t in TEXTS] == tokenize_many(TEXTS)
    assert tokenize("") == [] and tokenize("  ... ;; ") == []


# ---- BM25 -----------------------------------------------------------------------------------------


def test_scores_equal_rank_bm25(index: BM25Index, corpus: list[list[str]]) -> None:
    reference = BM25Okapi(corpus, k1=1.5, b=0.75, epsilon=0.25)
    for text in ["statins cardiovascular", "IL-6 blockade tocilizumab", "patients disease disease"]:
        query = tokenize(text)
        np.testing.assert_allclose(index.scores(query), reference.get_scores(query), rtol=0, atol=1e-9)


def test_empty_query_gives_zero_scores_and_no_hits(index: BM25Index) -> None:
    assert index.search([], 5) == []
    assert np.array_equal(index.scores([]), np.zeros(len(TEXTS)))


def test_unknown_terms_ignored(index: BM25Index) -> None:
    assert index.search(["zzzunknown", "qqq"], 5) == []
    known = tokenize("metformin")
    assert index.search(known + ["zzzunknown"], 5) == index.search(known, 5)
    assert index.search(known, 5)[0][0] == "pmid7"


def test_repeated_terms_count_per_occurrence(index: BM25Index) -> None:
    once = index.scores(tokenize("statins"))
    twice = index.scores(tokenize("statins statins"))
    assert once.max() > 0
    np.testing.assert_allclose(twice, 2 * once, rtol=1e-12)


def test_k_larger_than_n_and_k_zero(index: BM25Index) -> None:
    query = tokenize("patients disease cardiovascular")
    hits = index.search(query, 1000)
    matching = {IDS[i] for i, toks in enumerate(tokenize_many(TEXTS)) if set(toks) & set(query)}
    assert {doc for doc, _ in hits} == matching and len(hits) < len(TEXTS)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert index.search(query, 0) == []
    with pytest.raises(BiociteError):
        index.search(query, -1)


def test_ties_broken_by_lower_position() -> None:
    corpus = [["x", "y"], ["a", "b"], ["a", "b"], ["c", "d"], ["a", "b"]]
    for backend in BACKENDS:
        idx = BM25Index.build(corpus, ["d0", "d1", "d2", "d3", "d4"], backend=backend)
        hits = idx.search(["a"], 2)
        assert [d for d, _ in hits] == ["d1", "d2"] and hits[0][1] == hits[1][1] > 0


def test_epsilon_floor_for_terms_in_most_documents() -> None:
    corpus = [["common", f"w{i}"] for i in range(9)] + [["rare", "common"]]
    idf = okapi_idf(np.array([10] + [1] * 10), 10, 0.25)
    expected_floor = 0.25 * (np.log(0.5 / 10.5) + 10 * np.log(9.5 / 1.5)) / 11
    assert idf[0] == pytest.approx(expected_floor) and idf[0] > 0
    for backend in BACKENDS:
        idx = BM25Index.build(corpus, [str(i) for i in range(10)], backend=backend)
        reference = BM25Okapi(corpus).get_scores(["common"])
        np.testing.assert_allclose(idx.scores(["common"]), reference, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_save_load_round_trip_exact(backend: str, corpus: list[list[str]], tmp_path: Path) -> None:
    built = BM25Index.build(corpus, IDS, k1=1.2, b=0.6, epsilon=0.3, backend=backend)  # type: ignore[arg-type]
    built.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25")
    assert loaded.ids == built.ids and len(loaded) == len(built) == len(TEXTS)
    assert loaded.meta == built.meta and loaded.backend == backend
    for text in ["statins cardiovascular", "IL-6", "vitamin d diabetes diabetes", "unknownterm"]:
        query = tokenize(text)
        assert np.array_equal(loaded.scores(query), built.scores(query))
        assert loaded.search(query, 3) == built.search(query, 3)


def test_load_refuses_incomplete_or_missing_index(corpus: list[list[str]], tmp_path: Path) -> None:
    with pytest.raises(IndexMismatchError):
        BM25Index.load(tmp_path / "nothing")
    BM25Index.build(corpus, IDS).save(tmp_path / "bm25")
    meta = json.loads((tmp_path / "bm25" / META_FILE).read_text())
    (tmp_path / "bm25" / META_FILE).write_text(json.dumps({**meta, "n_docs": 3}))
    with pytest.raises(IndexMismatchError):
        BM25Index.load(tmp_path / "bm25")
    (tmp_path / "bm25" / META_FILE).write_text(json.dumps(meta))
    assert len(BM25Index.load(tmp_path / "bm25")) == len(IDS)
    for part in (tmp_path / "bm25" / "bm25s").glob("data*.npy"):
        part.unlink()
    with pytest.raises(IndexMismatchError, match="damaged"):
        BM25Index.load(tmp_path / "bm25")


def test_build_rejects_bad_input(corpus: list[list[str]]) -> None:
    with pytest.raises(InputError, match="ids"):
        BM25Index.build(corpus, IDS[:-1])
    with pytest.raises(InputError, match="pmid0"):
        BM25Index.build(corpus, ["pmid0"] * len(corpus))
    with pytest.raises(InputError, match="empty"):
        BM25Index.build([], [])
    with pytest.raises(InputError, match="no document has any token"):
        BM25Index.build([[], []], ["a", "b"])
    with pytest.raises(BiociteError, match="backend"):
        BM25Index.build(corpus, IDS, backend="lucene")  # type: ignore[arg-type]


def test_empty_documents_allowed(corpus: list[list[str]]) -> None:
    for backend in BACKENDS:
        idx = BM25Index.build([[], *corpus], ["empty", *IDS], backend=backend)  # type: ignore[arg-type]
        assert idx.scores(tokenize("statins"))[0] == 0
        assert idx.search(tokenize("statins"), 3)[0][0] == "pmid5"
