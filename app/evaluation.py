"""What `biocite evaluate` and `biocite calibrate` run: build judges, evaluate, write outputs."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biocite import jsonfile
from biocite.embedder import Embedder
from biocite.errors import InputError, ModelError
from biocite.evaluator.calibrate import calibrate_nuggets
from biocite.evaluator.completeness import JUDGE_FILE, is_current, load_judge_model, train_completeness
from biocite.evaluator.evaluate import ALL_METRICS, Evaluator, QuestionResult, compare, summarise
from biocite.evaluator.judges import (
    HeadJudge,
    JudgeCache,
    LLMJudge,
    NuggetJudge,
    ShippedNuggetAnswers,
    SupportJudge,
)
from biocite.evaluator.nuggets import LLM_SCORE, SCORE, MatchModel, clause_nuggets, parse_llm_nuggets
from biocite.evaluator.nuggets import is_current as is_current_matcher
from biocite.evaluator.report import write_report
from biocite.evaluator.runs import Run, RunEntry, load_run
from biocite.evaluator.sources import AbstractSource, StoreSource
from biocite.files import output_folder
from biocite.heads import PairClassifier
from biocite.index.build import open_index
from biocite.index.hybrid import open_retriever
from biocite.llm import make_chat_model
from biocite.models import REGISTRY
from biocite.records import Answer
from biocite.settings import DATA_DIR, Settings
from biocite.support import SupportModel

METRICS_FILE = "metrics.json"
REPORT_FILE = "report.html"
NUGGETIZER_PROMPT_VERSION = "nuggetizer-v1"
NUGGETIZER_PROMPT = """Split this answer into its atomic facts: short, self-contained statements,
one per line, each starting with "- ". Do not add facts that are not in the answer.

Answer: {text}"""


def evaluator_dir(settings: Settings) -> Path:
    return settings.models_dir / "evaluator"


def matcher_path(settings: Settings) -> Path:
    return settings.evaluator.nugget_matcher or evaluator_dir(settings) / "nugget_matcher.json"


def head_path(settings: Settings, task: str) -> Path:
    ev = settings.evaluator
    given = ev.completeness_head if task == "completeness" else ev.citation_head
    return given or evaluator_dir(settings) / f"{task}_head"


def cache_path(settings: Settings) -> Path:
    return (settings.evaluator.cache_dir or settings.home / "cache" / "evaluator") / "judge_cache.jsonl"


def load_gold(path: Path) -> dict[str, list[str]]:
    """Gold nuggets: JSON `{topic_id: [nugget, ...]}` or JSONL lines `{"topic_id", "nuggets": [...]}`."""
    if str(path) != "-" and not path.is_file():
        raise InputError(f"{path}: gold nuggets file not found")
    data, lines = jsonfile.load_json_or_jsonl(path)
    if lines is not None:
        rows: Any = [row for _, row in lines]
    elif isinstance(data, dict) and "topic_id" in data:  # a one-line JSONL file
        rows = [data]
    elif isinstance(data, dict):
        rows = [{"topic_id": k, "nuggets": v} for k, v in data.items()]
    elif isinstance(data, list):
        rows = data
    else:
        raise InputError(f"{path}: expected {{topic_id: [nuggets]}} or JSONL rows, got {type(data).__name__}")
    gold: dict[str, list[str]] = {}
    for i, row in enumerate(rows):
        topic = row.get("topic_id") if isinstance(row, dict) else None
        nuggets = row.get("nuggets") if isinstance(row, dict) else None
        if topic is None:
            raise InputError(f"{path}: entry {i}: field 'topic_id': missing")
        if not isinstance(nuggets, list) or not all(isinstance(x, str) for x in nuggets):
            raise InputError(f"{path}: topic {topic}: field 'nuggets': expected a list of strings")
        gold[str(topic)] = nuggets
    return gold


def _embedder(settings: Settings) -> Any:
    embedder = Embedder(settings.evaluator.nugget_model, settings)
    return lambda texts: embedder.encode(list(texts))


def _judge(settings: Settings, task: str, cache: JudgeCache, kind: str) -> Any:
    if kind == "support" and task == "citation":
        return SupportJudge(SupportModel.load(settings), cache)
    if kind == "support":  # completeness: the trained judge, trained once on first use
        kind = "head"
        folder = head_path(settings, task)
        if _needs_completeness_training(settings, folder):
            print(f"biocite: fitting the {task} judge once into {folder} (seconds)", file=sys.stderr)
            ev = settings.evaluator
            train_completeness(
                folder, seed=ev.seed, embedder=ev.nugget_model, owned=ev.completeness_head is None
            )
    if kind == "llm":
        return LLMJudge(make_chat_model(settings), settings.llm.model, task, cache)

    folder = head_path(settings, task)
    if not _holds_judge(folder):
        raise ModelError(f"no {task} head at {folder}; run `biocite calibrate {task}` first")
    model = load_judge_model(folder) if task == "completeness" else PairClassifier.load(folder)
    return HeadJudge(model, task, cache)


def _needs_completeness_training(settings: Settings, folder: Path) -> bool:
    """No judge yet; or, at the default path, one of an earlier biocite (a fine-tuned head: it never said
    Borderline). A head the user names in `evaluator.completeness_head` is used as it is."""
    if settings.evaluator.completeness_head is None:
        return not is_current(folder)
    return not _holds_judge(folder)


def _holds_judge(folder: Path) -> bool:
    """A trained head (`meta.json`) or a completeness judge (`judge.json`) is in `folder`."""
    return (folder / "meta.json").is_file() or (folder / JUDGE_FILE).is_file()


def load_or_calibrate_matcher(settings: Settings, cache: JudgeCache | None = None) -> MatchModel:
    """The nugget matcher; fitted once on first use (K-QA train questions: about 30 s; the LLM matcher about
    five minutes of LLM calls, cached). At the default path one of another version, another
    `evaluator.nugget_model`, another `evaluator.nugget_score` or another LLM is refitted; one the user names
    is used as it is (with the embedder it was fitted with)."""
    path = matcher_path(settings)
    if _needs_matcher_fit(settings, path):
        print(f"biocite: calibrating the nugget matcher once into {path}", file=sys.stderr)
        calibrate_matcher(settings, cache=cache).save(path)
    return MatchModel.load(path)


def calibrate_matcher(
    settings: Settings, n_trials: int = 80, cache: JudgeCache | None = None, progress: bool = True
) -> MatchModel:
    ev = settings.evaluator
    embedder = Embedder(ev.nugget_model, settings)
    if ev.nugget_score == "token-recall":
        return calibrate_nuggets(embedder, seed=ev.seed, n_trials=n_trials)
    judge = nugget_judge(settings, cache or JudgeCache(cache_path(settings)))
    return calibrate_nuggets(
        embedder, seed=ev.seed, n_trials=n_trials, yes_probability=judge, llm=judge.name, progress=progress
    )


def nugget_judge(settings: Settings, cache: JudgeCache) -> NuggetJudge:
    """The configured LLM as the nugget matcher's judge (`evaluator.nugget_score=llm`), loaded on its first
    call; for a pinned model whose K-QA answers ship in data/kqa/, those answers come from the file."""
    judge = NuggetJudge(lambda: make_chat_model(settings), settings.llm.model, cache)
    shipped = shipped_nugget_answers_path(settings.llm.model)
    if settings.llm.backend == "llamacpp" and settings.llm.model in REGISTRY and shipped.is_file():
        answers = ShippedNuggetAnswers.model_validate_json(shipped.read_text())
        judge.preload(answers, REGISTRY[settings.llm.model].sha256)
    return judge


def shipped_nugget_answers_path(model: str) -> Path:
    return DATA_DIR / "kqa" / f"nugget_llm_{model}.json"


def _needs_matcher_fit(settings: Settings, path: Path) -> bool:
    if not path.is_file():
        return True
    if settings.evaluator.nugget_matcher is not None:
        return False
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return True  # biocite's own file, unreadable: fitted again
    ev = settings.evaluator
    llm = f"llm:{settings.llm.model}" if ev.nugget_score == "llm" else None
    score = LLM_SCORE if llm else SCORE
    return (
        not is_current_matcher(data)
        or data.get("embedder") != ev.nugget_model
        or data.get("score", SCORE) != score
        or data.get("llm") != llm
    )


def matcher_agreement(matcher: MatchModel) -> str:
    """How far the matcher agrees with K-QA's physicians on held-out questions, beside matching every nugget,
    so a report's nugget scores are read with the judge's own quality."""
    test = matcher.metrics.get("test", {})
    parts = []
    for source, what in (("nli", "LLM answers"), ("physician", "physician answers")):
        row = test.get(source, {})
        if row.get("items"):
            every = row.get("match_everything_f1")
            parts.append(
                f"{what} F1 {row['f1']:.3f}" + (f" (matching every nugget {every:.3f})" if every else "")
            )
    return "K-QA held-out questions: " + "; ".join(parts) if parts else "not measured"


def judge_agreement(judge: Any) -> str | None:
    """A trained judge's own held-out figure, from its artifact (None for an LLM judge: not measured here)."""
    meta = getattr(getattr(judge, "head", None) or getattr(judge, "model", None), "meta", None) or {}
    metrics = meta.get("metrics", {})
    if "macro_f1" in metrics:  # the completeness judge
        return f"K-QA held-out questions (proxy labels): macro-F1 {metrics['macro_f1']:.3f}"
    cited = metrics.get("calibration_slice_half_shaped", {}).get("cited_3class_macro_f1")
    if cited is not None:  # the support model
        return f"Citation-Integrity held-back train claims: 3-class macro-F1 {cited:.3f}"
    return None


def _llm_nuggetizer(settings: Settings, cache: JudgeCache) -> Any:
    from langchain_core.messages import HumanMessage

    chat = make_chat_model(settings)
    name = f"llm:{settings.llm.model}"

    def nuggetize(text: str) -> tuple[list[str], str]:
        key = JudgeCache.key(name, NUGGETIZER_PROMPT_VERSION, "nuggetize", [text])
        hit = cache.get(key)
        raw = (
            hit["raw"]
            if hit
            else str(chat.invoke([HumanMessage(NUGGETIZER_PROMPT.format(text=text))], max_tokens=300).content)
        )
        nuggets = parse_llm_nuggets(raw)
        if not hit:
            cache.put(
                key,
                {
                    "model": name,
                    "prompt_version": NUGGETIZER_PROMPT_VERSION,
                    "task": "nuggetize",
                    "input": [text],
                    "raw": raw,
                    "label": "ok" if nuggets else "undetermined",
                },
            )
        if nuggets:
            return nuggets, "llm"
        return clause_nuggets(text), "clause (LLM answer unparseable)"

    return nuggetize


def build_evaluator(
    settings: Settings,
    metrics: list[str],
    *,
    gold: dict[str, list[str]] | None = None,
    source: AbstractSource | None = None,
    judge: str | None = None,
    cache: JudgeCache | None = None,
) -> tuple[Evaluator, dict[str, Any]]:
    ev = settings.evaluator
    kind = judge or ev.judge
    cache = cache or JudgeCache(cache_path(settings))
    info: dict[str, Any] = {"judge": kind, "cache": str(cache.path), "metrics": metrics}
    needs_docs = "citation" in metrics or "correctness" in metrics
    retrieve = None
    if needs_docs and source is None:
        source = StoreSource(open_index(settings).docs)
    if "correctness" in metrics and ev.retrieved_k > 0:
        retriever = open_retriever(settings)
        k = ev.retrieved_k
        retrieve = lambda q: [h.pmid for h in retriever.search(q, k=k, stage="bm25")]  # noqa: E731
    embed = _embedder(settings) if ("correctness" in metrics or kind == "llm") else None
    matcher = encode_tokens = None
    yes_probability = None
    if "nuggets" in metrics and gold:
        matcher = load_or_calibrate_matcher(settings, cache)
        encode_tokens = Embedder(matcher.embedder, settings).encode_tokens  # its idf's wordpieces
        if matcher.score == LLM_SCORE:  # fitted on one LLM's P(yes): read with that LLM only
            if matcher.llm != f"llm:{settings.llm.model}":
                raise ModelError(
                    f"{matcher_path(settings)}: the nugget matcher was fitted on {matcher.llm}'s P(yes), the "
                    f"configured LLM is llm:{settings.llm.model}; set llm.model accordingly or run "
                    "`biocite calibrate nuggets`"
                )
            yes_probability = nugget_judge(settings, cache)
        info["nugget_matcher"] = matcher.model_id
        info["nugget_score"] = matcher.score  # what a matched nugget's number is (the report says it)
        info["nugget_matcher_agreement"] = matcher_agreement(matcher)
    completeness = _judge(settings, "completeness", cache, kind) if "completeness" in metrics else None
    support = (
        _judge(settings, "support" if kind == "llm" else "citation", cache, kind) if needs_docs else None
    )
    for name, j in (("completeness_judge", completeness), ("support_judge", support)):
        if j is not None:
            info[name] = j.name
            if agreement := judge_agreement(j):
                info[f"{name}_agreement"] = agreement
    nuggetize = _llm_nuggetizer(settings, cache) if ev.nuggetizer == "llm" and "nuggets" in metrics else None
    evaluator = Evaluator(
        metrics=metrics,
        source=source,
        completeness_judge=completeness,
        support_judge=support,
        embed=embed,
        encode_tokens=encode_tokens,
        matcher=matcher,
        gold=gold,
        nuggetize=nuggetize,
        yes_probability=yes_probability,
        retrieve=retrieve,
        max_windows=ev.llm_windows if kind == "llm" else None,
        cache=cache,
        embed_name=ev.nugget_model,
    )
    return evaluator, info


def parse_metrics(spec: str | None) -> list[str]:
    if not spec:
        return list(ALL_METRICS)
    names = [m.strip() for m in spec.split(",") if m.strip()]
    bad = [m for m in names if m not in ALL_METRICS]
    if bad:
        raise InputError(f"unknown metric(s) {', '.join(bad)}; known: {', '.join(ALL_METRICS)}")
    return names


def evaluate_run_file(
    settings: Settings,
    run_path: Path,
    out_dir: Path,
    *,
    metrics: list[str],
    gold_path: Path | None = None,
    source: AbstractSource | None = None,
    judge: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Evaluate a run file and write metrics.json + report.html into out_dir. Returns the metrics document."""

    output_folder(out_dir)  # before minutes of judging, not after
    return evaluate_run(
        settings, load_run(run_path), out_dir, metrics=metrics, gold_path=gold_path, source=source,
        judge=judge, progress=progress,
    )  # fmt: skip


def evaluate_run(
    settings: Settings,
    run: Run,
    out_dir: Path,
    *,
    metrics: list[str],
    gold_path: Path | None = None,
    source: AbstractSource | None = None,
    judge: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """`evaluate_run_file` of a run already loaded (a comparison reads each run once, standard input too)."""

    started = time.perf_counter()
    gold = load_gold(gold_path) if gold_path else None
    if "nuggets" in metrics and not gold:
        metrics = [m for m in metrics if m != "nuggets"]
    evaluator, info = build_evaluator(settings, metrics, gold=gold, source=source, judge=judge)
    results = evaluator.evaluate_run(run, progress=progress)
    doc = metrics_document(settings, run, results, info, evaluator, time.perf_counter() - started)
    if gold_path is None:
        doc["notes"].append("no --gold nuggets given: nugget precision/recall not computed")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / METRICS_FILE).write_text(json.dumps(doc, indent=2, ensure_ascii=False))
    write_report(out_dir / REPORT_FILE, doc)
    return doc


def evaluate_answers(
    settings: Settings,
    answers: Sequence[Answer],
    *,
    gold: Sequence[Sequence[str]] | None = None,
    metrics: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Evaluate answers held in memory (the Python API): the metrics document, nothing written."""
    started = time.perf_counter()
    entries = [RunEntry(topic_id=str(i), question=a.question, answer=a) for i, a in enumerate(answers, 1)]
    run = Run(run_name="in-memory", path="", format="biocite", entries=entries)
    by_topic = {str(i): list(nuggets) for i, nuggets in enumerate(gold or [], 1)}
    chosen = [m for m in (metrics or ALL_METRICS) if m != "nuggets" or by_topic]
    evaluator, info = build_evaluator(settings, chosen, gold=by_topic or None)
    results = evaluator.evaluate_run(run)
    return metrics_document(settings, run, results, info, evaluator, time.perf_counter() - started)


def metrics_document(
    settings: Settings,
    run: Run,
    results: list[QuestionResult],
    info: dict[str, Any],
    evaluator: Evaluator,
    seconds: float,
) -> dict[str, Any]:
    ev = settings.evaluator
    cache = evaluator.cache
    return {
        "run": {"name": run.run_name, "path": run.path, "format": run.format},
        "settings": {
            "judge": info["judge"],
            "bootstrap_samples": ev.bootstrap_samples,
            "seed": ev.seed,
            "nuggetizer": ev.nuggetizer,
            "retrieved_k": ev.retrieved_k,
        },
        "judges": info,
        "overall": summarise(results, ev.bootstrap_samples, ev.seed),
        "questions": [r.model_dump() for r in results],
        "timing": {
            "seconds": round(seconds, 2),
            **{k: round(v, 2) for k, v in evaluator.timings.items()},
            "cache_hits": getattr(cache, "hits", None),
            "cache_misses": getattr(cache, "misses", None),
        },
        "notes": [
            "completeness labels are a proxy: heads trained on K-QA must-have/nice-to-have statements, "
            "not MedAESQA's human labels",
        ],
    }


def compare_runs(
    settings: Settings,
    a: Path,
    b: Path,
    out_dir: Path,
    *,
    metrics: list[str],
    gold_path: Path | None = None,
    source: AbstractSource | None = None,
    judge: str | None = None,
) -> dict[str, Any]:
    output_folder(out_dir)
    runs = {"a": load_run(a), "b": load_run(b)}
    if not {e.topic_id for e in runs["a"].entries} & {e.topic_id for e in runs["b"].entries}:
        # said before minutes of judging: every paired difference would be null
        raise InputError(f"{a} and {b} share no topic id: nothing to compare")
    docs = [
        evaluate_run(
            settings, run, out_dir / name, metrics=metrics, gold_path=gold_path, source=source, judge=judge
        )
        for name, run in runs.items()
    ]
    ra = [QuestionResult.model_validate(q) for q in docs[0]["questions"]]
    rb = [QuestionResult.model_validate(q) for q in docs[1]["questions"]]
    ev = settings.evaluator
    result = {"a": docs[0]["run"], "b": docs[1]["run"], **compare(ra, rb, ev.bootstrap_samples, ev.seed)}
    (out_dir / "compare.json").write_text(json.dumps(result, indent=2))
    return result
