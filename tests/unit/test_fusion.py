"""Fusion math (RRF, weighted min-max), best-sentence choice and rank metrics on hand-made lists."""

from __future__ import annotations

from collections import Counter

import pytest

from biocite.index.hybrid import IdfTable, best_sentence, minmax, rrf_fuse, weighted_fuse
from biocite.index.rerank import RankMetrics
from biocite.pubmedqa import Question, split_questions
from biocite.records import Sentence


def test_rrf_scores_by_hand() -> None:
    fused = dict(rrf_fuse([["a", "b", "c"], ["c", "a", "d"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert fused["d"] == pytest.approx(1 / 63)


def test_rrf_order_rewards_agreement() -> None:
    order = [p for p, _ in rrf_fuse([["a", "b", "c"], ["c", "a", "d"]], k=60)]
    assert order == ["a", "c", "b", "d"]  # a: 1st+2nd beats c: 3rd+1st


def test_rrf_k_zero_and_single_list() -> None:
    assert rrf_fuse([["x", "y"]], k=0) == [("x", 1.0), ("y", 0.5)]
    assert rrf_fuse([], k=60) == []
    with pytest.raises(ValueError):
        rrf_fuse([["x"]], k=-1)


def test_minmax() -> None:
    assert minmax([("a", 10.0), ("b", 5.0), ("c", 0.0)]) == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert minmax([("a", 3.0), ("b", 3.0)]) == {"a": 1.0, "b": 1.0}
    assert minmax([]) == {}


def test_weighted_fusion_by_hand() -> None:
    bm25 = [("a", 12.0), ("b", 8.0), ("c", 4.0)]  # -> a 1, b .5, c 0
    dense = [("c", 0.9), ("d", 0.7), ("a", 0.5)]  # -> c 1, d .5, a 0
    fused = dict(weighted_fuse(bm25, dense, dense_weight=0.25))
    assert fused["a"] == pytest.approx(0.75)
    assert fused["b"] == pytest.approx(0.375)
    assert fused["c"] == pytest.approx(0.25)
    assert fused["d"] == pytest.approx(0.125)
    assert [p for p, _ in weighted_fuse(bm25, dense, dense_weight=1.0)][:2] == ["c", "d"]
    with pytest.raises(ValueError):
        weighted_fuse(bm25, dense, dense_weight=1.5)


def _sentences(texts: list[str]) -> list[Sentence]:
    out, start = [], 0
    for i, text in enumerate(texts):
        out.append(Sentence(pmid="1", index=i, start=start, end=start + len(text), text=text))
        start += len(text) + 1
    return out


def test_best_sentence_prefers_rare_query_terms() -> None:
    idf = IdfTable(Counter({"patient": 90, "metformin": 2, "lactat": 3}), n_docs=100)
    sentences = _sentences(
        [
            "Patients were enrolled from patient registries of patients.",
            "Metformin raised lactate levels.",
            "Follow-up lasted two years.",
        ]
    )
    chosen = best_sentence(["metformin", "lactat", "patient"], sentences, idf)
    assert chosen is not None and chosen.index == 1
    assert best_sentence(["x"], [], idf) is None


def test_rank_metrics() -> None:
    """Source at rank 1, 2, missing, 11: computed by ir_measures through biocite.index.trec."""
    questions = [Question(pmid=p, question="q") for p in ("a", "b", "c", "d")]
    filler = [f"x{i}" for i in range(10)]
    orders = [["a", "z"], ["z", "b"], ["z"], [*filler, "d"]]
    metrics = RankMetrics.of(questions, orders)
    assert metrics.recall_at_1 == 0.25
    assert metrics.recall_at_10 == 0.5
    assert metrics.mrr == pytest.approx((1 + 0.5 + 1 / 11) / 4)


def test_split_is_by_question_seeded_and_order_free() -> None:
    questions = [Question(pmid=str(i), question=f"q{i}") for i in range(50)]
    train, validation = split_questions(questions, seed=13)
    again, _ = split_questions(list(reversed(questions)), seed=13)
    assert [q.pmid for q in train] == [q.pmid for q in again]
    assert len(train) == 30 and len(validation) == 20
    assert not {q.pmid for q in train} & {q.pmid for q in validation}
