"""PairClassifier: learns a tiny separable toy set, round-trips through save/load, refuses bad artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from biocite.errors import ModelError
from biocite.heads import (
    PairClassifier,
    apply_temperature,
    data_fingerprint,
    expected_calibration_error,
    fit_temperature,
)

QUERY = "does aspirin prevent heart attacks"
POSITIVE = [
    "Aspirin reduced myocardial infarction in a randomised trial.",
    "Low-dose aspirin lowers the risk of heart attack.",
    "Daily aspirin prevented cardiac infarction in older adults.",
    "Aspirin therapy cut recurrent myocardial infarction.",
]
NEGATIVE = [
    "Soil bacteria were sampled from arctic lakes.",
    "The migratory routes of whales follow ocean currents.",
    "Wheat yields rose after nitrogen fertiliser.",
    "Volcanic ash changed the mineral content of rivers.",
]


def train_toy() -> PairClassifier:
    pairs = [(QUERY, t) for t in POSITIVE + NEGATIVE] * 2
    labels = (["yes"] * 4 + ["no"] * 4) * 2
    return PairClassifier.train(
        pairs, labels, label_set=["no", "yes"], epochs=4, batch_size=8, lr=1e-4, max_length=64, progress=False
    )


@pytest.fixture(scope="module")
def trained() -> PairClassifier:
    return train_toy()


@pytest.mark.slow
def test_retraining_is_deterministic(trained: PairClassifier) -> None:
    pairs = [(QUERY, t) for t in POSITIVE + NEGATIVE]
    np.testing.assert_allclose(train_toy().predict_proba(pairs), trained.predict_proba(pairs), atol=1e-6)


def test_learns_toy_set(trained: PairClassifier) -> None:
    proba = trained.predict_proba([(QUERY, t) for t in POSITIVE + NEGATIVE])
    assert proba.shape == (8, 2)
    assert np.allclose(proba.sum(axis=1), 1.0, atol=1e-5)
    assert (proba[:4, 1] > 0.5).all() and (proba[4:, 1] < 0.5).all()
    assert trained.predict([(QUERY, POSITIVE[0])]) == ["yes"]


def test_save_load_round_trip(trained: PairClassifier, tmp_path: Path) -> None:
    pairs = [(QUERY, POSITIVE[1]), (QUERY, NEGATIVE[2])]
    folder = tmp_path / "head"
    trained.save(folder, meta={"train_data_sha256": "abc", "metrics": {"acc": 1.0}})
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["labels"] == ["no", "yes"] and meta["artifact_version"] == 1
    assert meta["train_data_sha256"] == "abc" and "torch" in meta["library_versions"]
    loaded = PairClassifier.load(folder)
    assert loaded.labels == ["no", "yes"]
    np.testing.assert_allclose(loaded.predict_proba(pairs), trained.predict_proba(pairs), atol=1e-5)


def test_load_refuses_missing_and_incompatible(trained: PairClassifier, tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="no trained classifier"):
        PairClassifier.load(tmp_path / "nothing")
    folder = tmp_path / "old"
    trained.save(folder, meta={})
    meta = json.loads((folder / "meta.json").read_text())
    meta["artifact_version"] = 999
    (folder / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ModelError, match="artifact_version"):
        PairClassifier.load(folder)


def test_train_rejects_unknown_labels() -> None:
    with pytest.raises(ValueError, match="not in label_set"):
        PairClassifier.train([("a", "b")], ["maybe"], label_set=["no", "yes"], progress=False)


def test_data_fingerprint_is_canonical() -> None:
    assert data_fingerprint([{"a": 1, "b": 2}]) == data_fingerprint([{"b": 2, "a": 1}])
    assert data_fingerprint([{"a": 1}]) != data_fingerprint([{"a": 2}])


def test_choose_c_scores_every_candidate_by_cross_validation() -> None:
    from sklearn.metrics import accuracy_score

    from biocite.heads import LinearModel, choose_c

    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 3))
    y = (x[:, 0] + 0.3 * rng.normal(size=120) > 0).astype(int)

    def fit(a: np.ndarray, b: np.ndarray, c: float) -> LinearModel:
        return LinearModel.fit(a, b, kind="t", version=1, labels=["n", "p"], c=c)

    best, scores = choose_c(x, y, [1e-4, 1.0], fit, accuracy_score)
    assert set(scores) == {1e-4, 1.0} and best == max(scores, key=lambda c: scores[c])
    assert scores[1.0] > 0.8  # a learnable signal is found by the better-regularised candidate


def test_temperature_scaling_calibrates_overconfident_probabilities_without_changing_the_argmax() -> None:
    """Probabilities of 0.95 that are right 70 % of the time: the fitted temperature softens them to about
    0.7, the calibration error falls, and no prediction changes."""
    rng = np.random.default_rng(3)
    n = 2000
    predicted = rng.integers(0, 3, n)
    gold = np.where(rng.random(n) < 0.7, predicted, (predicted + rng.integers(1, 3, n)) % 3)
    probs = np.full((n, 3), 0.025)
    probs[np.arange(n), predicted] = 0.95
    t = fit_temperature(probs, gold)
    calibrated = apply_temperature(probs, t)
    assert t > 1.5 and abs(calibrated.max(axis=1).mean() - 0.7) < 0.03
    assert expected_calibration_error(probs, gold) > 0.2 > 0.03 > expected_calibration_error(calibrated, gold)
    assert (calibrated.argmax(axis=1) == predicted).all() and np.allclose(calibrated.sum(axis=1), 1.0)
    assert np.allclose(apply_temperature(probs, 1.0), probs)
