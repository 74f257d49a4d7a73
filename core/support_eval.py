"""Held-out figures of the support model (issue 13); bench/support_model.py prints them.

    python -m biocite.support_eval [--train] [--device cuda] [--backbone PATH] [--out DIR] [--json FILE]

--train fine-tunes a fresh model first (into --out, default a temp folder) with the given backbone/device,
so a GPU machine can compare backbones (MiniLM vs MPNet); without it the installed model is scored.
Splits: Citation-Integrity DEV claims (never trained or calibrated on); generated hard cases from dev
SUPPORT claims with the HELD-OUT templates only; K-QA NLI rows of held-out questions (seeded hash, 40%).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from biocite.heads import PairClassifier
from biocite.kqa import load_nli_labels, split_of
from biocite.settings import load_settings
from biocite.support import LABELS, SupportModel, train_support
from biocite.support_data import NearMiss, citint_claims, hard_cases, overlap, sample_per_type

THREE = ["supports", "contradicts", "nei"]


def _three(label: str) -> str:
    return label if label in ("supports", "contradicts") else "nei"


def citint_figures(model: SupportModel, limit: int | None = None, other_limit: int = 200) -> dict[str, Any]:
    """3-class macro-F1, binary Supports F1 and evidence top-1/top-2 on Citation-Integrity dev, plus the
    Supports rate of dev claims against a random and a same-topic (BM25) other abstract."""
    from sklearn.metrics import f1_score

    claims, corpus = citint_claims("dev")
    claims = claims[:limit] if limit else claims
    rng = random.Random(13)
    near = NearMiss({str(k): v for k, v in corpus.items()})
    ids = sorted(corpus)

    gold, pred, top1, top2 = [], [], [], []
    ref: dict[str, list[bool]] = {
        "cross_encoder_only": [], "cosine_only": [], "word_overlap": [], "weighted_cosine": []
    }  # fmt: skip
    random_sup, near_sup = [], []
    for n, c in enumerate(claims):
        verdict, probs, cos = model.check_sentences(c.claim, c.sentences)
        gold.append(_three(c.label))
        pred.append(_three(verdict.label))
        if c.evidence and c.label in ("supports", "contradicts"):
            order = np.argsort(
                -model.aggregator.rank(c.claim, c.sentences, probs, cos), kind="stable"
            ).tolist()
            top1.append(order[0] in c.evidence)
            top2.append(bool(set(order[:2]) & set(c.evidence)))
            ref["cross_encoder_only"].append(int(np.argmax(probs[:, 0] + probs[:, 1])) in c.evidence)
            ref["cosine_only"].append(int(np.argmax(cos)) in c.evidence)
            ref["word_overlap"].append(
                int(np.argmax([overlap(c.claim, s) for s in c.sentences])) in c.evidence
            )
            w = model.aggregator.rank_weight
            ref["weighted_cosine"].append(int(np.argmax(probs[:, 0] + probs[:, 1] + w * cos)) in c.evidence)
        if n >= other_limit:  # the other-abstract controls use the first `other_limit` dev claims
            continue
        other = rng.choice(ids)
        while other == c.doc_id:
            other = rng.choice(ids)
        random_sup.append(model.check_sentences(c.claim, corpus[other])[0].label == "supports")
        same = near.other(c.claim, str(c.doc_id))
        if same is not None:
            near_sup.append(model.check_sentences(c.claim, corpus[int(same)])[0].label == "supports")
    per = f1_score(gold, pred, labels=THREE, average=None, zero_division=0)
    return {
        "split": "Citation-Integrity dev (claims never used in training or calibration)",
        "n": len(gold),
        "macro_f1_3class": round(float(np.mean(per)), 4),
        "per_class_f1": {k: round(float(v), 4) for k, v in zip(THREE, per, strict=True)},
        "supports_f1_binary": round(
            float(f1_score([g == "supports" for g in gold], [p == "supports" for p in pred])), 4
        ),
        "evidence_top1": round(float(np.mean(top1)), 4) if top1 else None,
        "evidence_top2": round(float(np.mean(top2)), 4) if top2 else None,
        "evidence_n": len(top1),
        "evidence_top1_references": {k: round(float(np.mean(v)), 4) for k, v in ref.items() if v},
        "random_other_abstract_supports_rate": round(float(np.mean(random_sup)), 4),
        "same_topic_other_abstract_supports_rate": round(float(np.mean(near_sup)), 4) if near_sup else None,
        "other_abstract_n": len(random_sup),
    }


def hard_case_figures(model: SupportModel, per_template: int = 60) -> dict[str, Any]:
    """Share judged NOT supports, per perturbation type, HELD-OUT templates, dev claims, cited abstract."""
    claims, _ = citint_claims("dev")
    by_id = {c.id: c for c in claims}
    cases = hard_cases(claims, held_out=True, seed=14)
    rng = random.Random(14)
    out: dict[str, Any] = {"split": "dev SUPPORT claims x held-out templates, vs the cited abstract"}
    for kind, items in sample_per_type(cases, per_template, rng).items():
        if not items:
            continue
        verdicts = [model.check_sentences(h.claim, by_id[h.group].sentences)[0] for h in items]
        out[kind] = {
            "templates": sorted({h.template for h in items}),
            "n": len(items),
            "not_supports": round(float(np.mean([v.label != "supports" for v in verdicts])), 4),
        }
    # the control: the unperturbed claims of the same sample must still be judged supports
    originals = {h.group for h in cases}
    sample = rng.sample(sorted(originals), min(per_template, len(originals)))
    kept = [model.check_sentences(by_id[g].claim, by_id[g].sentences)[0].label == "supports" for g in sample]
    out["control_unperturbed_supports"] = {"n": len(kept), "supports": round(float(np.mean(kept)), 4)}
    return out


def kqa_figures(model: SupportModel, seed: int = 13) -> dict[str, Any]:
    """K-QA physicians' NLI labels: does the LLM answer entail the must-have statement? Score =
    P(supports)(statement, answer); threshold fitted for F1 on the TRAIN questions, F1 on held-out ones."""
    from sklearn.metrics import f1_score

    rows = load_nli_labels()
    scores = [v.probs["supports"] for v in model.check_many([(r.claim, r.answer) for r in rows])]
    side = [split_of(r.question, seed) for r in rows]
    gold = [r.label == "Entailment" for r in rows]
    train = [i for i, s in enumerate(side) if s == "train"]
    test = [i for i, s in enumerate(side) if s == "test"]
    grid = np.linspace(0.01, 0.99, 99)
    best = max(grid, key=lambda t: f1_score([gold[i] for i in train], [scores[i] >= t for i in train]))
    calls = [[rows[i].annotators[a] == "Entailment" for i in test] for a in range(len(rows[0].annotators))]
    return {
        "split": "K-QA NLI rows, held-out questions (seeded sha256, 40%); threshold fitted on train questions",
        "n_test": len(test),
        "threshold": round(float(best), 3),
        "nugget_match_f1": round(
            float(f1_score([gold[i] for i in test], [scores[i] >= best for i in test])), 4
        ),
        # references on the same rows: calling every statement entailed, and physician vs physician
        "match_every_statement_f1": round(float(f1_score([gold[i] for i in test], [True] * len(test))), 4),
        "physicians_pairwise_f1": [
            round(float(f1_score(calls[b], calls[a])), 3)
            for a in range(len(calls))
            for b in range(a + 1, len(calls))
        ],
    }


def _pairs_per_s(model: SupportModel, groups: Sequence[list[tuple[str, str]]]) -> float:
    """(claim, sentence) pairs a second through `SupportModel.head_probs`, as checks run them."""
    started = time.perf_counter()
    model.head_probs([g[0][0] for g in groups], [[s for _, s in g] for g in groups])
    return sum(map(len, groups)) / (time.perf_counter() - started)


def _pairs_per_s_one_at_a_time(head: Any, groups: Sequence[list[tuple[str, str]]]) -> float:
    """The same pairs, one passage after another on all of torch's threads (before the thread pool)."""
    started = time.perf_counter()
    for pairs in groups:
        head.predict_proba(pairs, batch_size=len(pairs))
    return sum(map(len, groups)) / (time.perf_counter() - started)


def throughput(model: SupportModel, n: int = 256) -> dict[str, Any]:
    claims, corpus = citint_claims("dev")
    groups: list[list[tuple[str, str]]] = []
    for c in claims:
        if sum(map(len, groups)) >= n:
            break
        groups.append([(c.claim, s) for s in c.sentences[: model.max_sentences]])
    sps = _pairs_per_s(model, groups)
    serial = _pairs_per_s_one_at_a_time(model.head, groups)
    reference = {}
    if model.meta.get("int8") and model.folder is not None:  # the fp32 weights, timed in the same run
        fp32 = SupportModel(PairClassifier.load(model.folder), model.aggregator, model.meta)
        _pairs_per_s(fp32, groups[:4])  # warm-up, as the int8 head had
        reference = {"claim_sentence_pairs_per_s_fp32_reference": round(_pairs_per_s(fp32, groups), 1)}
    passages = [(c.claim, " ".join(c.sentences)) for c in claims[: max(8, n // 10)]]
    started = time.perf_counter()
    together = model.check_many(passages)
    aps = len(passages) / (time.perf_counter() - started)
    alone = [model.check(*p) for p in passages]
    import torch

    return {
        "torch_threads": torch.get_num_threads(),
        "int8": bool(model.meta.get("int8")),
        "claim_sentence_pairs_per_s": round(sps, 1),
        "claim_sentence_pairs_per_s_one_passage_at_a_time": round(serial, 1),
        **reference,
        "claim_abstract_pairs_per_s": round(aps, 2),
        "note": "abstract pairs score up to support.max_sentences sentences each",
        # a verdict must not depend on what else is checked in the same call
        "passages_checked_together_vs_alone": {
            "n": len(passages),
            "label_differs": sum(a.label != b.label for a, b in zip(together, alone, strict=True)),
            "max_abs_prob_diff": round(
                max(
                    abs(a.probs[k] - b.probs[k]) for a, b in zip(together, alone, strict=True) for k in LABELS
                ),
                5,
            ),
        },
    }


def all_figures(model: SupportModel, quick: bool = False) -> dict[str, Any]:
    started = time.perf_counter()
    out: dict[str, Any] = {
        "model": {k: model.meta.get(k) for k in ("backbone_name", "train_data_sha256", "train_pairs")},
        "citint_dev": citint_figures(model, limit=60 if quick else None),
        "hard_cases_held_out": hard_case_figures(model, per_template=15 if quick else 40),
        "kqa_nli": kqa_figures(model),
        "throughput": throughput(model, n=64 if quick else 256),
    }
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m biocite.support_eval", description=__doc__.split("\n")[0])
    ap.add_argument("--train", action="store_true", help="fine-tune a fresh model first")
    ap.add_argument("--device", default="auto", help="training device: auto, cpu, cuda")
    ap.add_argument("--backbone", default=None, help="minilm, mpnet or a sentence-transformers folder")
    ap.add_argument("--out", type=Path, default=None, help="artifact folder (with --train)")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here too")
    ap.add_argument("--quick", action="store_true", help="small samples (smoke run)")
    ap.add_argument("--set", action="append", default=[], help="settings override, e.g. support.epochs=2")
    args = ap.parse_args(argv)
    settings = load_settings(overrides=args.set)
    if args.train or args.backbone:
        folder = args.out or Path(tempfile.mkdtemp(prefix="support-"))
        train_support(settings, folder, backbone=args.backbone, device=args.device)
        model = SupportModel.from_folder(folder, settings)
    else:
        model = SupportModel.load(settings)
    if args.device == "cuda":
        model.head.model.to("cuda")
    figures = all_figures(model, quick=args.quick)
    figures["labels"] = LABELS
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
