"""The Python API, one façade over the agent, the index and the evaluator:

    import biocite
    answer = biocite.ask("Does as-needed budesonide-formoterol reduce severe exacerbations in mild asthma?",
                         mode="extractive")
    hits = biocite.search("budesonide formoterol mild asthma", k=5)
    report = biocite.evaluate([answer])

Each call takes `settings` (a Settings object), or `preset` and `overrides` ({"index.k1": 1.2}). Models and
indexes load once per process and settings, as in the server.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from biocite.agent.graph import Agent
from biocite.app.check import check_requests, index_fetch, new_request
from biocite.app.evaluation import evaluate_answers
from biocite.errors import InputError
from biocite.index.hybrid import open_retriever
from biocite.records import Answer, SearchHit
from biocite.settings import Settings, load_settings
from biocite.support import SupportModel

if TYPE_CHECKING:
    from biocite.agent.graph import Agent

Overrides = Mapping[str, Any] | None


def settings_for(
    settings: Settings | None = None, preset: str | None = None, overrides: Overrides = None
) -> Settings:
    """`settings` as given, else the preset with dotted overrides applied (the CLI's `-p` and `-s`)."""
    if settings is not None:
        if preset or overrides:
            raise ValueError("pass either settings or preset/overrides, not both")
        return settings
    pairs = [f"{key}={_setting_value(value)}" for key, value in (overrides or {}).items()]
    return load_settings(preset, pairs)


def _setting_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@lru_cache(maxsize=4)
def _agent(settings_json: str) -> Agent:
    settings = Settings.model_validate_json(settings_json)
    return Agent(settings, retriever=open_retriever(settings))


def ask(
    question: str,
    *,
    mode: str | None = None,
    settings: Settings | None = None,
    preset: str | None = None,
    overrides: Overrides = None,
) -> Answer:
    """Answer one question: sentences citing PMIDs with their evidence, or an abstention saying why."""
    chosen = settings_for(settings, preset, overrides)
    return _agent(chosen.model_dump_json()).ask(question, mode=mode)


def search(
    query: str,
    *,
    k: int = 10,
    settings: Settings | None = None,
    preset: str | None = None,
    overrides: Overrides = None,
) -> list[SearchHit]:
    """Hybrid search of the index: hits with their title, score and best-matching sentence."""

    return open_retriever(settings_for(settings, preset, overrides)).search(query, k=k)


def evaluate(
    answers: Answer | Sequence[Answer],
    *,
    gold: Sequence[Sequence[str]] | None = None,
    metrics: Sequence[str] | None = None,
    settings: Settings | None = None,
    preset: str | None = None,
    overrides: Overrides = None,
) -> dict[str, Any]:
    """Score answers held in memory: the same metrics document `biocite evaluate` writes (overall means
    with 95% CIs, per-question results). `gold[i]` are the nuggets of `answers[i]`, if any."""

    items = [answers] if isinstance(answers, Answer) else list(answers)
    if gold is not None and len(gold) != len(items):
        raise InputError(f"gold has {len(gold)} entries for {len(items)} answers")
    return evaluate_answers(settings_for(settings, preset, overrides), items, gold=gold, metrics=metrics)


@lru_cache(maxsize=2)
def _support_model(settings_json: str) -> Any:
    return SupportModel.load(Settings.model_validate_json(settings_json))


def check(
    claim: str,
    *,
    pmids: Sequence[str] = (),
    text: str | None = None,
    settings: Settings | None = None,
    preset: str | None = None,
    overrides: Overrides = None,
) -> Any:
    """Does the evidence (indexed PMIDs and/or given text) support the claim? The `CheckResult` of
    `biocite check`: label, calibrated probabilities, evidence sentences and phrases with offsets."""

    chosen = settings_for(settings, preset, overrides)
    request = new_request(claim, pmids, text, {"claim": "claim", "pmids": "pmids", "text": "text"})
    fetch = index_fetch(chosen) if request.pmids else None
    return check_requests(_support_model(chosen.model_dump_json()), [request], fetch, ["pmids"])[0]
