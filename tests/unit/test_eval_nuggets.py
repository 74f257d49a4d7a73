"""Nugget matching: clause nuggetizer, mixture artifact round trip, idf-weighted token recall."""

from __future__ import annotations

import json

import numpy as np
import pytest

from biocite.embedder import TokenVectors
from biocite.errors import ModelError
from biocite.evaluator.calibrate import Scores, choose_from_front
from biocite.evaluator.nuggets import (
    LLM_SCORE,
    Idf,
    MatchModel,
    clause_nuggets,
    fit_mixture,
    match_component_of,
    mixture_to_dict,
    parse_llm_nuggets,
    score_nuggets,
    strip_citations,
    token_recall,
    yes_logit,
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


# A toy vocabulary: wordpiece id -> a unit vector; id 0 is a common word, the others rare.
VOCAB = {0: [1, 0, 0, 0], 1: [0, 1, 0, 0], 2: [0, 0, 1, 0], 3: [0, 0, 0, 1]}
IDF = Idf.of_documents([[0, 1], [0, 2], [0, 3], [0]], corpus="toy")


def _tokens(text: str) -> TokenVectors:
    ids = [int(c) for c in text.split()]
    return TokenVectors(np.array(ids, dtype=np.int64), np.array([VOCAB[i] for i in ids], dtype=np.float32))


def _matcher(threshold: float = 0.5) -> MatchModel:
    rng = np.random.default_rng(0)
    scores = np.concatenate([rng.normal(0.2, 0.05, 300), rng.normal(0.85, 0.05, 100)])
    mixture = fit_mixture(scores, seed=0)
    return MatchModel(
        idf=IDF,
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
    assert back.idf.weights(np.array([1]))[0] > back.idf.weights(np.array([0]))[0]


def test_an_earlier_matcher_version_is_refused_with_the_command_to_run(tmp_path) -> None:
    data = json.loads(_matcher().model_dump_json()) | {"version": 1}
    (tmp_path / "old.json").write_text(json.dumps(data))
    with pytest.raises(ModelError, match="re-run `biocite calibrate nuggets`"):
        MatchModel.load(tmp_path / "old.json")
    damaged = json.loads(_matcher().model_dump_json()) | {"threshold": "high"}  # current version, a bad field
    (tmp_path / "damaged.json").write_text(json.dumps(damaged))
    with pytest.raises(ModelError, match="a damaged nugget matcher .*re-run `biocite calibrate nuggets`"):
        MatchModel.load(tmp_path / "damaged.json")


def test_token_recall_weighs_rare_words_and_reads_across_clauses() -> None:
    whole, per_clause = token_recall(_tokens("0 1 2"), [_tokens("0 1"), _tokens("2")], IDF)
    assert whole == pytest.approx(1.0)  # every wordpiece is found, in one clause or the other
    assert per_clause == pytest.approx([0.5, 0.5])  # word 0 is in every document: it weighs nothing
    missing_rare, _ = token_recall(_tokens("0 1"), [_tokens("0")], IDF)
    missing_common, _ = token_recall(_tokens("0 1"), [_tokens("1")], IDF)
    assert missing_common > missing_rare  # losing the rare word costs more
    assert token_recall(_tokens("1"), [], IDF)[0] == 0.0


def test_score_nuggets_precision_counts_clauses_that_carry_a_matched_nugget() -> None:
    def encode(texts):
        return [_tokens(t) for t in texts]

    r = score_nuggets(["1", "2", "0"], ["1", "3", "2"], encode, _matcher())
    assert [(a[0], a[1]) for a in r.alignments] == [(0, 0), (1, 2)]
    assert r.recall == pytest.approx(2 / 3) and r.precision == pytest.approx(2 / 3)  # clause "0" carries none
    assert score_nuggets([], ["1"], encode, _matcher()).precision is None


def _llm_matcher() -> MatchModel:
    """A matcher over P(yes) logits: 'no' answers near P 0.05, 'yes' answers near P 0.95."""
    rng = np.random.default_rng(0)
    p = np.concatenate([rng.uniform(0.01, 0.1, 300), rng.uniform(0.9, 0.99, 100)])
    mixture = fit_mixture(np.array([yes_logit(x) for x in p]), seed=0, covariance="tied")
    return _matcher().model_copy(
        update={
            "score": LLM_SCORE,
            "llm": "llm:toy",
            "stack": [0.0, 1.0, 0.0],  # the logit alone
            "mixture": mixture_to_dict(mixture),
            "match_component": match_component_of(mixture),
        }
    )


def test_the_llm_matchers_tied_mixture_round_trips_and_rises_with_the_score(tmp_path) -> None:
    m = _llm_matcher()
    m.save(tmp_path / "m.json")
    back = MatchModel.load(tmp_path / "m.json")
    x = np.linspace(-9, 9, 37)
    assert np.allclose(m.p_match(x), back.p_match(x)) and np.all(np.diff(back.p_match(x)) >= 0)
    assert back.stacked(0.3, 0.9) == pytest.approx(yes_logit(0.9))


def test_the_tied_mixture_keeps_both_components_of_a_skewed_score() -> None:
    # shaped like the stacked LLM scores of the K-QA splits where sklearn's default (Dirichlet-process) prior
    # gave one component 0.999 of the weight and a flat P(match): most "no", fewer "yes", a far negative tail
    rng = np.random.default_rng(0)
    x = np.r_[rng.normal(-1.5, 0.6, 150), rng.normal(0.8, 0.6, 100), rng.normal(-5, 1.0, 10)]
    mixture = fit_mixture(x, seed=0, covariance="tied")
    p = mixture.predict_proba(x.reshape(-1, 1))[:, match_component_of(mixture)]
    assert min(mixture.weights_) > 0.3
    assert p[x > 1.5].min() > 0.5 > p[(x > -2.5) & (x < -1.5)].max()


def test_the_llm_matcher_matches_what_the_llm_says_the_answer_states() -> None:
    def encode(texts):
        return [_tokens(t) for t in texts]

    asked: list[tuple[str, str]] = []

    def yes(answer: str, nugget: str) -> float | None:
        asked.append((answer, nugget))
        return {"1": 0.97, "3": 0.02}.get(nugget)  # "2": the LLM gave neither word

    r = score_nuggets(["1", "2", "0"], ["1", "3", "2"], encode, _llm_matcher(), yes_probability=yes)
    assert asked == [("1 2 0", "1"), ("1 2 0", "3"), ("1 2 0", "2")]  # the whole answer, each nugget
    assert [(a[0], a[1], a[2]) for a in r.alignments] == [(0, 0, 0.97)]  # its clause by token recall
    assert r.recall == pytest.approx(1 / 3) and r.undetermined == 1  # undetermined: counted, never matched
    with pytest.raises(ModelError, match="needs its LLM"):
        score_nuggets(["1"], ["1"], encode, _llm_matcher())
    assert yes_logit(1.0) == pytest.approx(9.0) and yes_logit(0.0) == pytest.approx(-9.0)


def test_pareto_choice_rule() -> None:
    front = [(0.2, 0.80, 0.60, 90), (0.5, 0.803, 0.70, 70), (0.7, 0.79, 0.75, 50)]
    assert choose_from_front(front)[0] == 0.5


def test_scores_summary_kappa() -> None:
    s = Scores(tp=10, fp=0, fn=0, tn=10)
    assert s.summary()["cohen_kappa"] == 1.0 and s.summary()["f1"] == 1.0


def test_a_default_matcher_of_another_version_or_embedder_is_refitted_a_named_one_never(tmp_path) -> None:
    from biocite.app.evaluation import _needs_matcher_fit, matcher_path
    from biocite.settings import load_settings

    settings = load_settings("test", [f"home={tmp_path}"])
    default = matcher_path(settings)
    assert _needs_matcher_fit(settings, default)  # none yet
    default.parent.mkdir(parents=True)
    current = json.loads(_matcher().model_dump_json()) | {"embedder": settings.evaluator.nugget_model}
    for data, refit in (
        (current, False),
        (current | {"version": 1}, True),
        (current | {"embedder": "x"}, True),
        (current | {"score": LLM_SCORE, "llm": "llm:smollm2"}, True),  # the setting asks for token recall
    ):
        default.write_text(json.dumps(data))
        assert _needs_matcher_fit(settings, default) is refit
    default.write_text("{not json")
    assert _needs_matcher_fit(settings, default)
    named = tmp_path / "mine.json"
    named.write_text(json.dumps(current | {"version": 1}))
    ev = settings.evaluator.model_copy(update={"nugget_matcher": named})
    assert not _needs_matcher_fit(settings.model_copy(update={"evaluator": ev}), named)


def test_the_llm_matcher_at_the_default_path_is_refitted_for_another_llm(tmp_path) -> None:
    from biocite.app.evaluation import _needs_matcher_fit, matcher_path
    from biocite.settings import load_settings

    settings = load_settings("test", [f"home={tmp_path}", "evaluator.nugget_score=llm", "llm.model=smollm2"])
    default = matcher_path(settings)
    default.parent.mkdir(parents=True)
    fitted = json.loads(_llm_matcher().model_dump_json()) | {"embedder": settings.evaluator.nugget_model}
    for llm, refit in (("llm:smollm2", False), ("llm:qwen1.5b", True)):
        default.write_text(json.dumps(fitted | {"llm": llm}))
        assert _needs_matcher_fit(settings, default) is refit
    default.write_text(json.dumps(json.loads(_matcher().model_dump_json()) | {"embedder": "minilm"}))
    assert _needs_matcher_fit(settings, default)  # a token-recall matcher, the LLM one asked for


class _WordEncoder:
    """A stand-in for the MiniLM token encoder: one wordpiece per word, a fixed random unit vector per word."""

    name = "words"
    _table = np.random.default_rng(0).normal(size=(4096, 16))

    def wordpieces(self, texts):
        return [[sum(map(ord, w)) % 4096 for w in t.lower().split()] for t in texts]

    def encode_tokens(self, texts):
        out = []
        for ids in self.wordpieces(texts):
            v = self._table[ids] if ids else np.zeros((0, 16))
            out.append(TokenVectors(np.array(ids, np.int64), v / np.linalg.norm(v, axis=1, keepdims=True)))
        return out


def test_calibration_refuses_a_matcher_that_matches_nothing_it_was_fitted_on(monkeypatch) -> None:
    from biocite.evaluator import calibrate

    fit = calibrate.fit_mixture
    # a mixture that lies far above every real score: P(match) ~0 on all of them, as a collapsed fit gave
    monkeypatch.setattr(calibrate, "fit_mixture", lambda s, seed, cov: fit(np.asarray(s) + 1e3, seed, cov))
    with pytest.raises(ModelError, match="matches no nli nugget of its own train questions"):
        calibrate.calibrate_nuggets(
            _WordEncoder(), n_trials=5, yes_probability=lambda a, n: 0.5, llm="llm:toy"
        )
