"""The verdict head for any LLM (`biocite train verdict --llm`): whose masses are whose, where they are looked
up, how an interrupted run resumes, and when generate mode keeps the cue head."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.messages import AIMessage

from biocite.agent import verdict as V
from biocite.errors import ModelError
from biocite.models import REGISTRY
from biocite.settings import load_settings


def _settings(tmp_path: Path, *overrides: str) -> Any:
    return load_settings("test", [f"home={tmp_path / 'home'}", *overrides])


def test_identity_names_the_registry_model_a_gguf_file_and_an_endpoint(tmp_path: Path) -> None:
    registry = V.llm_identity(_settings(tmp_path, "llm.model=qwen1.5b"))
    assert registry == V.LLMIdentity(name="qwen1.5b", fingerprint=REGISTRY["qwen1.5b"].sha256)
    gguf = tmp_path / "My Model.Q4.gguf"
    gguf.write_bytes(b"GGUF" + bytes(3 << 20))
    first = V.llm_identity(_settings(tmp_path, f"llm.model={gguf}"))
    assert first.name == "My_Model.Q4" and first.fingerprint.startswith("gguf:")
    gguf.write_bytes(b"GGUF" + bytes(3 << 20) + b"x")  # other weights: another fingerprint
    assert V.llm_identity(_settings(tmp_path, f"llm.model={gguf}")).fingerprint != first.fingerprint
    endpoint = ["llm.backend=openai", "llm.model=llama-3-70b", "llm.base_url=http://a:8000/v1"]
    one = V.llm_identity(_settings(tmp_path, *endpoint))
    other = V.llm_identity(_settings(tmp_path, *endpoint[:2], "llm.base_url=http://b:8000/v1"))
    assert one.name == "openai-llama-3-70b" and one.fingerprint != other.fingerprint


def _features(identity: V.LLMIdentity, yes: float) -> V.LLMFeatures:
    return V.LLMFeatures(
        llm=identity.name, llm_fingerprint=identity.fingerprint, prompt_sha256=V.prompt_sha256(),
        split={}, rows={"1": {"yes": yes, "no": 0.1, "maybe": 0.0}},
    )  # fmt: skip


def test_masses_made_here_join_the_shipped_ones_and_must_match_llm_and_prompt(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "llm.model=qwen1.5b")
    identity = V.llm_identity(settings)
    shipped = V.load_llm_features(settings, identity)
    assert shipped is not None and len(shipped.rows) == 300  # data/pubmedqa/verdict_llm_qwen1.5b.json
    path = V.trained_features_path(settings, identity.name)
    path.parent.mkdir(parents=True)
    path.write_text(_features(identity, 0.7).model_dump_json())
    merged = V.load_llm_features(settings, identity)
    assert merged is not None and merged.rows["1"]["yes"] == 0.7 and len(merged.rows) == 301
    assert merged.rows.items() > shipped.rows.items()  # a quick --limit run never hides the shipped rows
    stale = _features(identity, 0.7).model_copy(update={"prompt_sha256": "0" * 64})
    path.write_text(stale.model_dump_json())  # made with another verdict prompt: the shipped ones again
    assert V.load_llm_features(settings, identity) == shipped
    other = V.LLMIdentity(name="qwen1.5b", fingerprint="gguf:other")
    assert V.load_llm_features(settings, other) is None


class _Chat:
    """A chat model whose first answer token puts `yes` mass on row i; raises at call `stop_at`."""

    def __init__(self, stop_at: int | None = None, logprobs: bool = True) -> None:
        self.calls, self.stop_at, self.logprobs = 0, stop_at, logprobs

    def invoke(self, messages: Any, **_: Any) -> AIMessage:
        self.calls += 1
        if self.calls == self.stop_at:
            raise KeyboardInterrupt
        top = [{"token": "yes", "logprob": -0.1}, {"token": "no", "logprob": -2.5}]
        meta = {"logprobs": {"content": [{"token": "yes", "logprob": -0.1, "top_logprobs": top}]}}
        return AIMessage(content="yes", response_metadata=meta if self.logprobs else {})


def _rows(n: int) -> list[V.TrainingRow]:
    return [
        V.TrainingRow(pmid=str(i), question=f"Does drug {i} work?", texts=["It worked."], weights=[1.0],
                      reading_order=["It worked."], label="yes")
        for i in range(n)
    ]  # fmt: skip


def test_an_interrupted_run_keeps_what_it_computed_and_resumes(tmp_path: Path) -> None:
    identity, path = V.LLMIdentity(name="m", fingerprint="f"), tmp_path / "masses.json"
    with pytest.raises(KeyboardInterrupt):
        V.compute_llm_features(_Chat(stop_at=15), identity, _rows(25), path)
    assert len(V.LLMFeatures.model_validate_json(path.read_text()).rows) == 10  # saved every 10 rows
    chat = _Chat()
    features, computed = V.compute_llm_features(chat, identity, _rows(25), path)
    assert computed == chat.calls == 15 and len(features.rows) == 25
    assert features.rows["3"]["yes"] == pytest.approx(np.exp(-0.1))
    limited, none = V.compute_llm_features(_Chat(), identity, _rows(25), path, limit=5)
    assert none == 0 and len(limited.rows) == 25  # --limit bounds new calls, never drops masses made before
    _, again = V.compute_llm_features(_Chat(), V.LLMIdentity(name="m", fingerprint="g"), _rows(25), path)
    assert again == 25  # another model's masses are not reused


def test_an_llm_without_logprobs_is_a_clear_error(tmp_path: Path) -> None:
    identity = V.LLMIdentity(name="m", fingerprint="f")
    with pytest.raises(ModelError, match="no token logprobs"):
        V.compute_llm_features(_Chat(logprobs=False), identity, _rows(3), tmp_path / "m.json")


def test_generate_mode_keeps_the_cue_head_unless_the_stacked_one_cross_validates_better() -> None:
    y = np.repeat(np.arange(3), 30)
    linear = V.fit_verdict(np.eye(3)[y].astype(np.float32), y, c=1.0)
    cues = V.VerdictModel(linear.model_copy(update={"meta": {"cv_scores": {"a": 0.50, "b": 0.56}}}))
    weak = V.VerdictModel(linear.model_copy(update={"meta": {"cv_scores": {"a": 0.55}}}))
    strong = V.VerdictModel(linear.model_copy(update={"meta": {"cv_scores": {"a": 0.61}}}))
    assert strong.beats(cues) and not weak.beats(cues) and cues.cv_score == 0.56


def test_the_llm_head_drops_the_cues_when_the_mass_alone_cross_validates_better(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    labels: list[V.Verdict] = ["yes", "no", "mixed"]
    rows = [
        V.TrainingRow(pmid=str(i), question="Does it work?", texts=["It worked."], weights=[1.0],
                      reading_order=["It worked."], label=labels[i % 3])
        for i in range(90)
    ]  # fmt: skip
    masses = {str(i): {w: 0.9 if w == V.LLM_WORDS[i % 3] else 0.05 for w in V.LLM_WORDS} for i in range(90)}
    features = V.LLMFeatures(llm="m", llm_fingerprint="f", prompt_sha256="p", split={}, rows=masses)
    fit = V.fit_with_cv

    def scored(alone: float) -> Any:
        def fit_with_cv(x: np.ndarray, y: np.ndarray) -> Any:
            model, choice = fit(x, y)  # the LLM's 3 columns alone score `alone`; with the cues 0.6
            return model, {**choice, "cv_scores": {"x": alone if x.shape[1] == 3 else 0.6}}

        return fit_with_cv

    monkeypatch.setattr(V, "fit_with_cv", scored(0.7))
    model = V.fit_verdict_rows(rows, "minilm", features)
    assert model.llm == "m" and not model.uses_cues and model.cv_score == 0.7
    verdict, p, _ = model.predict(
        "Does it work?", ["It worked."], [1.0], {"yes": 0.05, "no": 0.9, "maybe": 0.05}
    )
    assert verdict == "no" and p > 0.5  # read from the mass alone
    monkeypatch.setattr(V, "fit_with_cv", scored(0.6))  # a tie keeps the cues
    assert V.fit_verdict_rows(rows, "minilm", features).uses_cues
    assert V.fit_verdict_rows(rows, "minilm").uses_cues  # the extractive head is the cues'
