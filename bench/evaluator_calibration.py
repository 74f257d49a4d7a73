"""Calibration table of the evaluator's judges. Prints figures; asserts nothing.

- Nugget matching vs the K-QA physicians' entailment labels (held-out questions): the calibrated matcher
  (token recall, BGMM + Optuna threshold), and for reference matching every nugget.
- Completeness (K-QA held-out questions, proxy labels): head macro-F1; LLM judge macro-F1 on a fixed sample.
- Citation support (Citation-Integrity dev): head macro-F1; LLM judge macro-F1 on a fixed sample.

The LLM judge runs on a fixed, label-stratified sample (`--llm-sample` per label, seeded) because the 1.5B
model takes seconds per call on this CPU. Artifacts come from `biocite calibrate ...` (default paths), or are
fitted here when missing.

    python bench/evaluator_calibration.py [--llm-sample 8] [--no-llm] [--preset default] [--set k=v ...]
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Sequence

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from biocite.app.evaluation import cache_path, head_path, load_or_calibrate_matcher  # noqa: E402
from biocite.embedder import Embedder  # noqa: E402
from biocite.evaluator.calibrate import Scores, attach_scores, nli_items, physician_items  # noqa: E402
from biocite.evaluator.heads import (  # noqa: E402
    COMPLETENESS_HEAD_LABELS,
    citation_pairs,
    completeness_pairs,
    kqa_split,
    macro_report,
)
from biocite.evaluator.judges import (  # noqa: E402
    COMPLETENESS_LABELS,
    SUPPORT_LABELS,
    UNDETERMINED,
    JudgeCache,
    LLMJudge,
)
from biocite.kqa import load_nli_labels, load_questions, split_of  # noqa: E402
from biocite.settings import load_settings  # noqa: E402


def stratified(pairs: Sequence[tuple[str, str]], labels: Sequence[str], per_label: int, seed: int):
    rng = random.Random(seed)
    out = []
    for label in sorted(set(labels)):
        idx = [i for i, y in enumerate(labels) if y == label]
        out.extend(rng.sample(idx, min(per_label, len(idx))))
    return [pairs[i] for i in out], [labels[i] for i in out]


def nugget_rows(settings, seed: int) -> list[tuple[str, str, dict]]:
    from biocite.evaluator.calibrate import evaluate_items

    matcher = load_or_calibrate_matcher(settings)
    test_q = [q for q in load_questions() if split_of(q.question, seed) == "test"]
    nli = [r for r in load_nli_labels() if split_of(r.question, seed) == "test"]
    items = {"physician": physician_items(test_q, seed), "nli": nli_items(nli)}
    attach_scores(items["physician"] + items["nli"], Embedder(matcher.embedder, settings), matcher.idf)
    rows = []
    for source, its in items.items():
        rows.append(("token recall, BGMM+Optuna", source, evaluate_items(its, matcher).summary()))
        every = Scores()
        for it in its:
            every.tp += sum(it.labels.values())
            every.fp += sum(not want for want in it.labels.values())
        rows.append(("every nugget matched", source, every.summary()))
    print(f"matcher: {matcher.model_id}, P(match) threshold {matcher.threshold:.4f}")
    return rows


def head_report(settings, task: str, seed: int) -> dict:
    from biocite.evaluator.completeness import is_current, train_completeness
    from biocite.evaluator.heads import train_head

    folder = head_path(settings, task)
    if task == "completeness" and not is_current(folder):
        train_completeness(folder, seed=seed, embedder=settings.evaluator.nugget_model)
    elif not (folder / "meta.json").is_file():
        train_head(task, folder, seed=seed, epochs=1, progress=False)
    return dict(_head(settings, task).meta["metrics"])


def _head(settings, task: str):
    """The completeness judge or the citation head."""
    from biocite.evaluator.completeness import load_judge_model
    from biocite.heads import PairClassifier

    folder = head_path(settings, task)
    return load_judge_model(folder) if task == "completeness" else PairClassifier.load(folder)


def same_sample(settings, task: str, pairs, labels) -> tuple:
    """The head on the LLM's sample, for a like-for-like row."""
    head = _head(settings, task)
    space = COMPLETENESS_HEAD_LABELS if task == "completeness" else SUPPORT_LABELS
    m = macro_report(labels, head.predict(pairs), space)
    return m["n"], m["macro_f1"], m["accuracy"], 0, None, m["per_label_f1"]


def llm_report(settings, task: str, pairs, labels, label_space) -> tuple[dict, int, float]:
    from biocite.llm import make_chat_model

    judge = LLMJudge(
        make_chat_model(settings),
        settings.llm.model,
        "support" if task == "citation" else task,
        JudgeCache(cache_path(settings)),
    )
    started = time.perf_counter()
    verdicts = judge.judge(pairs)
    seconds = time.perf_counter() - started
    pred = [v.label for v in verdicts]
    undetermined = pred.count(UNDETERMINED)
    return macro_report(labels, pred, label_space), undetermined, seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llm-sample", type=int, default=8, help="pairs per gold label for the LLM judge")
    ap.add_argument("--no-llm", action="store_true")
    ap.add_argument("--preset", default=None)
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args()
    settings = load_settings(args.preset, args.set)
    seed = settings.evaluator.seed

    print("== nugget matching vs K-QA physician labels (held-out questions) ==")
    print(f"{'matcher':<16}{'source':<11}{'n':>5}{'acc':>8}{'F1':>8}{'P':>8}{'R':>8}{'kappa':>8}")
    for name, source, s in nugget_rows(settings, seed):
        print(
            f"{name:<16}{source:<11}{s['n']:>5}{s['accuracy']:>8.3f}{s['f1']:>8.3f}"
            f"{(s['precision'] or 0):>8.3f}{(s['recall'] or 0):>8.3f}{s['cohen_kappa']:>8.3f}"
        )

    print("\n== completeness (K-QA held-out, proxy labels) and citation support (CitInt dev) ==")
    rows = []
    for task in ("completeness", "citation"):
        m = head_report(settings, task, seed)
        rows.append((task, "head", m["n"], m["macro_f1"], m["accuracy"], 0, None, m["per_label_f1"]))
    if not args.no_llm:
        _, test_q = kqa_split(seed)
        cx, cy = completeness_pairs(test_q, seed + 1)
        cx, cy = stratified(cx, cy, args.llm_sample, seed)
        rows.append(("completeness", "head (sample)", *same_sample(settings, "completeness", cx, cy)))
        m, und, sec = llm_report(settings, "completeness", cx, cy, COMPLETENESS_LABELS)
        rows.append(
            (
                "completeness",
                f"llm:{settings.llm.model}",
                m["n"],
                m["macro_f1"],
                m["accuracy"],
                und,
                sec,
                m["per_label_f1"],
            )
        )
        sx, sy = citation_pairs("dev", seed + 1)
        sx, sy = stratified(sx, sy, args.llm_sample, seed)
        rows.append(("citation", "head (sample)", *same_sample(settings, "citation", sx, sy)))
        m, und, sec = llm_report(settings, "citation", sx, sy, SUPPORT_LABELS)
        rows.append(
            (
                "citation",
                f"llm:{settings.llm.model}",
                m["n"],
                m["macro_f1"],
                m["accuracy"],
                und,
                sec,
                m["per_label_f1"],
            )
        )
    print(f"{'task':<14}{'judge':<16}{'n':>5}{'macroF1':>9}{'acc':>7}{'undet':>7}{'s/call':>8}  per-label F1")
    for task, judge, n, f1, acc, und, sec, per in rows:
        per_call = f"{sec / n:.2f}" if sec else "-"
        print(f"{task:<14}{judge:<16}{n:>5}{f1:>9.3f}{acc:>7.3f}{und:>7}{per_call:>8}  {per}")
    print(
        f"\nhead label sets: completeness {COMPLETENESS_HEAD_LABELS} (no Inappropriate examples in K-QA); "
        f"citation {SUPPORT_LABELS}. LLM sample: {args.llm_sample} per gold label, seed {seed}."
    )
    print("chance macro-F1 (uniform guessing): completeness ~0.33 (3 labels), citation ~0.25 (4 labels)")


if __name__ == "__main__":
    main()
