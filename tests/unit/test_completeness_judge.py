"""The completeness judge's fit is seeded: the same K-QA rows give the same C, the same weights and the same
held-out figures (the installed `biocite calibrate completeness` with the real embedder: tests/integration)."""

from __future__ import annotations

import json

import pytest

from biocite.evaluator import completeness
from tests.unit.agent_fakes import HashEmbedder


def test_training_twice_gives_the_same_judge_and_figures(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(completeness, "Embedder", lambda name: HashEmbedder())  # the fit, not the encoder
    first = completeness.train_completeness(tmp_path / "a", seed=13)
    again = completeness.train_completeness(tmp_path / "b", seed=13)
    assert first["metrics"] == again["metrics"] and first["c"] == again["c"]
    a, b = (json.loads((tmp_path / f / completeness.JUDGE_FILE).read_text()) for f in "ab")
    assert all(a[key] == b[key] for key in ("coef", "intercept", "mean", "scale"))
    other = completeness.train_completeness(tmp_path / "c", seed=14)  # another split of the questions
    assert other["train_data_sha256"] != first["train_data_sha256"]
