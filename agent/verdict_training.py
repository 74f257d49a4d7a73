"""`biocite train verdict`: the verdict heads (agent/verdict.py) fitted on the TRAIN PubMedQA questions of the
shared split (seed 13, 60/40 by question) and measured on its held-out questions, source abstract given.

Without `llm`: the cue head every answer uses (the agent also fits it on first use, in seconds).
With `llm`: also the head stacked on the configured LLM's answer-word mass, for generate mode. biocite ships
those masses for its default LLM only; any other model (another GGUF, an OpenAI-compatible endpoint that
returns logprobs) gets its own here: one 1-token call per train question, saved as it goes (an interrupted
run resumes), then a logistic fit in a second. The held-out figures tell the user whether their LLM helps.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel
from tqdm import tqdm

from biocite.agent import verdict as V
from biocite.agent.evidence import VectorCache
from biocite.agent.findings import agent_models_dir, load_findings
from biocite.errors import BiociteError
from biocite.heads import expected_calibration_error
from biocite.llm import answer_mass, make_chat_model
from biocite.pubmedqa import load_questions, split_questions
from biocite.retrieval import Encoder
from biocite.settings import Settings


class HeldOut(BaseModel):
    """Accuracy and macro-F1 over yes/no/maybe on held-out questions (their source abstracts given)."""

    questions: int
    accuracy: float
    macro_f1: float
    calibration_error: float | None = None  # top-label ECE of the head's probabilities (10 bins)


class VerdictTrainingReport(BaseModel):
    embedder: str
    llm: str | None = None
    train_questions: int
    llm_train_questions: int = 0
    llm_calls: int = 0  # made by this run (the others were reused from an interrupted or earlier run)
    # the head generate mode uses: "cues + LLM" or "LLM alone" only when it cross-validates better than the cues
    generate_head: str = "cues"
    choices: dict[str, dict[str, object]]  # head -> C, class weighting, cross-validated score on train
    held_out: dict[str, HeldOut]  # majority / cues / cues + llm / llm zero-shot
    saved: list[str]
    seconds: float

    def summary(self) -> str:
        lines = [f"verdict heads on {self.train_questions} train questions (embedder {self.embedder})"]
        if self.llm:
            lines.append(
                f"  LLM {self.llm}: {self.llm_train_questions} train questions, {self.llm_calls} LLM calls now"
            )
        for head, choice in self.choices.items():
            lines.append(
                f"  {head}: C={choice['C']}, {choice['class_weight']}, CV score {choice['cv']:.3f}, "
                f"temperature {choice['temperature']}"
            )
        if self.llm:
            lines.append(f"  generate mode uses: {self.generate_head}")
        for name, figure in self.held_out.items():
            ece = (
                ""
                if figure.calibration_error is None
                else f", calibration error {figure.calibration_error:.3f}"
            )
            lines.append(
                f"  held-out {name} ({figure.questions}): accuracy {figure.accuracy:.3f}, "
                f"macro-F1 {figure.macro_f1:.3f}{ece}"
            )
        lines += [f"  wrote {path}" for path in self.saved]
        lines.append(f"  {self.seconds:.0f} s")
        return "\n".join(lines)


def _figures(
    gold: np.ndarray, predicted: Sequence[int] | np.ndarray, probs: np.ndarray | None = None
) -> HeldOut:
    from sklearn.metrics import accuracy_score, f1_score

    return HeldOut(
        questions=len(gold),
        accuracy=round(float(accuracy_score(gold, predicted)), 4),
        macro_f1=round(float(f1_score(gold, predicted, average="macro")), 4),
        calibration_error=None if probs is None else round(expected_calibration_error(probs, gold), 4),
    )


def _head_figures(head: V.VerdictModel, gold: np.ndarray, x: np.ndarray) -> HeldOut:
    probs = head.probabilities(x)
    return _figures(gold, probs.argmax(axis=1), probs)


def _choice(model: V.VerdictModel) -> dict[str, object]:
    return {
        "C": model.meta["C"],
        "class_weight": model.meta["class_weight"],
        "cv": model.cv_score,
        "temperature": model.meta.get("temperature", 1.0),
    }


def check_limit(llm: bool, limit: int | None) -> None:
    """A `--limit` too small to fit the LLM head is refused before anything is opened."""
    if llm and limit is not None and limit < V.MIN_TRAIN_ROWS:
        raise BiociteError(
            f"--limit {limit}: the verdict head needs at least {V.MIN_TRAIN_ROWS} train questions"
        )


def train_verdict_heads(
    settings: Settings,
    store: Any,
    embedder: Encoder,
    *,
    llm: bool = False,
    limit: int | None = None,
    held_out: int | None = None,
    progress: bool = True,
) -> VerdictTrainingReport:
    """Fit and save the cue head (and with `llm` the configured LLM's stacked head, on the first `limit`
    train questions), and measure them on the first `held_out` held-out questions (default all 200).
    `store` and `embedder` are the index's (the source abstracts are read from it)."""
    check_limit(llm, limit)
    started = time.perf_counter()
    chat = _answering_llm(settings) if llm else None  # an unreachable endpoint fails now, not minutes in
    cache = VectorCache(embedder, max_items=200_000)
    findings = load_findings(settings, embedder, cache, store)
    if findings is None:
        raise BiociteError(
            f"no answer-bearing model for this index (embedder {embedder.name}; needs minilm or mpnet, "
            f"agent.answer_model on, and at least {V.MIN_TRAIN_ROWS} PubMedQA train abstracts indexed)"
        )
    train, held = split_questions(load_questions())
    rows = V.training_rows([q.pmid for q in train], cache, findings, store)
    held_rows = V.training_rows([q.pmid for q in held[:held_out]], cache, findings, store)
    if len(rows) < V.MIN_TRAIN_ROWS:
        raise BiociteError(
            f"the index holds {len(rows)} of the PubMedQA train abstracts; the verdict needs {V.MIN_TRAIN_ROWS}"
        )
    cues = V.fit_verdict_rows(rows, findings.embedder)
    cues.save(path := V.verdict_path(settings, findings.embedder))
    saved = [str(path)]
    gold = np.array([V.LABELS.index(r.label) for r in held_rows])
    figures: dict[str, HeldOut] = {}
    if len(held_rows):
        _, y_train = V.feature_matrix(rows)
        figures["majority class"] = _figures(gold, np.full_like(gold, np.bincount(y_train).argmax()))
        figures["cues (extractive)"] = _head_figures(cues, gold, V.feature_matrix(held_rows)[0])
    report = VerdictTrainingReport(
        embedder=findings.embedder, train_questions=len(rows), choices={"cues": _choice(cues)},
        held_out=figures, saved=saved, seconds=0.0,
    )  # fmt: skip
    if chat is not None:
        _train_llm_head(settings, report, rows, limit, held_rows, cues, chat, progress)
    report.seconds = round(time.perf_counter() - started, 1)
    return report


def _answering_llm(settings: Settings) -> Any:
    """The configured chat model, checked with one 1-token call: reachable and giving token logprobs."""
    chat = make_chat_model(settings)
    if answer_mass(chat, V.llm_messages("Is water wet?", ["Water is wet."]), V.LLM_WORDS) is None:
        raise BiociteError(
            f"llm {settings.llm.model} returned no token logprobs: the verdict head needs the answer-word mass"
        )
    return chat


def _train_llm_head(
    settings: Settings,
    report: VerdictTrainingReport,
    rows: list[V.TrainingRow],
    limit: int | None,
    held_rows: list[V.TrainingRow],
    cues: V.VerdictModel,
    chat: Any,
    progress: bool,
) -> None:
    identity = V.llm_identity(settings)
    folder = agent_models_dir(settings)
    total = len(rows[:limit]) + len(held_rows)
    with tqdm(total=total, desc=f"LLM answer-word mass ({identity.name})", unit="question",
              disable=not progress) as bar:  # fmt: skip
        masses_path = V.trained_features_path(settings, identity.name)
        known = V.load_llm_features(settings, identity)  # the shipped masses of the default LLM: reused
        features, calls = V.compute_llm_features(
            chat, identity, rows, masses_path, limit=limit, known=known.rows if known else None,
            on_row=bar.update,
        )  # fmt: skip
        held_path = folder / f"verdict_llm_{identity.name}_heldout.json"
        held_features, held_calls = V.compute_llm_features(
            chat, identity, held_rows, held_path, side="held-out", on_row=bar.update
        )
    stacked = V.fit_verdict_rows(rows, report.embedder, features)
    stacked.save(path := V.verdict_path(settings, report.embedder, identity))
    report.saved += [str(masses_path), str(path)]
    report.llm, report.llm_train_questions = identity.name, len(features.rows)
    report.llm_calls = calls + held_calls
    head = "cues + LLM" if stacked.uses_cues else "LLM alone"
    why = "" if stacked.uses_cues else " (cross-validated better than cues + LLM)"
    report.choices[head + why] = _choice(stacked)
    if stacked.beats(cues):
        report.generate_head = head
    else:
        report.generate_head = "cues (the LLM head did not cross-validate better on train)"
    if held_rows:
        gold = np.array([V.LABELS.index(r.label) for r in held_rows])
        x, _ = V.feature_matrix(held_rows, held_features.rows, cues=stacked.uses_cues)
        report.held_out[f"{head} (generate)"] = _head_figures(stacked, gold, x)
        zero_shot = [int(np.argmax(V.llm_features(held_features.rows[r.pmid]))) for r in held_rows]
        report.held_out["LLM alone (its most likely word)"] = _figures(gold, zero_shot)
