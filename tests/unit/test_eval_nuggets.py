"""Nugget matching: clause nuggetizer, mixture artifact round trip, greedy one-to-one matching."""

from __future__ import annotations

import numpy as np

from biocite.evaluator.calibrate import Scores, choose_from_front
from biocite.evaluator.nuggets import (
    MatchModel,
    clause_nuggets,
    fit_mixture,
    greedy_match,
    match_component_of,
    mixture_to_dict,
    parse_llm_nuggets,
    score_nuggets,
    strip_citations,
)


def test_clause_nuggets_split_and_merge() -> None:
    text = (
        "Aspirin lowers fever quickly, and it also reduces pain [123]. Take it; with food. "
        "Ibuprofen works too [1, 2]."
    )
    out = clause_nuggets(text)
    assert out == [
        "Aspirin lowers fever quickly",
        "and it also reduces pain.",
        "Take it, with food.",
        "Ibuprofen works too.",
    ]


def test_strip_citations_keeps_other_brackets() -> None:
    assert strip_citations("Dose [5 mg] works [PMID: 123, 456].") == "Dose [5 mg] works."


def test_parse_llm_nuggets() -> None:
    raw = "Here are the facts:\n- Aspirin lowers fever.\n2. It reduces pain in adults\n- ok"
    assert parse_llm_nuggets(raw) == ["Aspirin lowers fever.", "It reduces pain in adults"]


def _matcher(threshold: float = 0.5) -> MatchModel:
    rng = np.random.default_rng(0)
    sims = np.concatenate([rng.normal(0.2, 0.05, 300), rng.normal(0.85, 0.05, 100)])
    mixture = fit_mixture(sims, seed=0)
    return MatchModel(
        mixture=mixture_to_dict(mixture),
        match_component=match_component_of(mixture),
        threshold=threshold,
        fit_data_sha256="x" * 64,
    )


def test_mixture_round_trip_is_exact(tmp_path) -> None:
    m = _matcher()
    m.save(tmp_path / "m.json")
    back = MatchModel.load(tmp_path / "m.json")
    x = np.linspace(0, 1, 21)
    assert np.allclose(m.p_match(x), back.p_match(x))
    assert back.p_match(np.array([0.9]))[0] > 0.9 > back.p_match(np.array([0.2]))[0]


def test_greedy_match_is_one_to_one() -> None:
    sim = np.array([[0.9, 0.8], [0.85, 0.3], [0.1, 0.2]])
    p = (sim > 0.5).astype(float)
    out = greedy_match(sim, p, 0.5)
    assert [(a.answer_index, a.gold_index) for a in out] == [(0, 0)]  # row 1's only good column is taken
    sim2 = np.array([[0.9, 0.8], [0.3, 0.85]])
    assert {(a.answer_index, a.gold_index) for a in greedy_match(sim2, sim2, 0.5)} == {(0, 0), (1, 1)}


def test_score_nuggets_precision_recall() -> None:
    vocab = {"a": [1, 0, 0], "b": [0, 1, 0], "c": [0, 0, 1]}

    def embed(texts):
        return np.array([vocab[t] for t in texts], dtype=np.float32)

    r = score_nuggets(["a", "b"], ["a", "c", "b"], embed, _matcher())
    assert r.precision == 1.0 and abs(r.recall - 2 / 3) < 1e-9
    assert score_nuggets([], ["a"], embed, _matcher()).precision is None


def test_pareto_choice_rule() -> None:
    front = [(0.2, 0.80, 0.60, 90), (0.5, 0.803, 0.70, 70), (0.7, 0.79, 0.75, 50)]
    assert choose_from_front(front)[0] == 0.5


def test_scores_summary_kappa() -> None:
    s = Scores(tp=10, fp=0, fn=0, tn=10)
    assert s.summary()["cohen_kappa"] == 1.0 and s.summary()["f1"] == 1.0
