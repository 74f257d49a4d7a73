"""Training data, training and held-out scores of the evaluator's two MiniLM heads.

Completeness pairs (a PROXY for MedAESQA's sentence labels, which are not available here), from K-QA train
questions: (question, must-have statement) -> Required, (question, nice-to-have) -> Borderline,
(question, a statement of another question) and (question, generic advice) -> Unnecessary. K-QA has no
example of Inappropriate, so no trained judge can output it (the LLM judge can). The shipped completeness
judge is `completeness.py`'s (cosine + length); a fine-tuned head on these pairs (`train_head`) is the old
judge, kept as the benchmark's reference and for a user who names one (`evaluator.completeness_head`).

Citation-support head, from Citation-Integrity (train split; scored on its dev split): (claim, 3-sentence
window of the cited abstract around the annotated evidence sentence) -> Supports for SUPPORT, Contradicts for
REFUTE; a claim without evidence (NEI) paired with a window of its cited abstract -> Neutral; a claim paired
with a window of another claim's abstract -> Not relevant.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biocite.evaluator.judges import SUPPORT_LABELS
from biocite.heads import PairClassifier, data_fingerprint, macro_report
from biocite.kqa import KQAQuestion, load_questions, split_of
from biocite.settings import DATA_DIR

CITINT_DIR = DATA_DIR / "citint"
COMPLETENESS_HEAD_LABELS = ["Required", "Unnecessary", "Borderline"]

# Written for this head: the kind of boilerplate that LLM answers add and that never answers a question.
GENERIC_ADVICE = [
    "It is important to consult a healthcare professional for personalized advice.",
    "Always talk to your doctor before starting or stopping any medication.",
    "If you have any further questions, please reach out to your healthcare provider.",
    "Every person is different, so results may vary.",
    "This information is not a substitute for professional medical advice.",
    "Maintaining a healthy lifestyle with a balanced diet and regular exercise is always beneficial.",
    "Please seek medical attention if your symptoms worsen.",
    "I hope this information helps you.",
    "Your doctor can help you decide what is best for you.",
    "It is always a good idea to stay informed about your health.",
    "There are many factors to consider when making health decisions.",
    "Make sure to follow the instructions given by your pharmacist.",
]


def completeness_pairs(
    questions: Sequence[KQAQuestion], seed: int
) -> tuple[list[tuple[str, str]], list[str]]:
    rng = random.Random(seed)
    pairs: list[tuple[str, str]] = []
    labels: list[str] = []
    for i, q in enumerate(questions):
        for s in q.must_have:
            pairs.append((q.question, s))
            labels.append("Required")
        for s in q.nice_to_have:
            pairs.append((q.question, s))
            labels.append("Borderline")
        others = [j for j in range(len(questions)) if j != i]
        for _ in range(max(1, len(q.must_have))):
            other = questions[rng.choice(others)]
            pool = other.must_have + other.nice_to_have
            if pool:
                pairs.append((q.question, rng.choice(pool)))
                labels.append("Unnecessary")
        for s in rng.sample(GENERIC_ADVICE, 2):
            pairs.append((q.question, s))
            labels.append("Unnecessary")
    return pairs, labels


def kqa_split(seed: int) -> tuple[list[KQAQuestion], list[KQAQuestion]]:
    qs = load_questions()
    return [q for q in qs if split_of(q.question, seed) == "train"], [
        q for q in qs if split_of(q.question, seed) == "test"
    ]


# --- Citation-Integrity -------------------------------------------------------------------------------

_MARKER = re.compile(r"\s*[\[(]?\s*<\|(?:multi_)?cit\|>\s*(?:,\s*[\w\s–-]*)?[\])]?")


def clean_claim(text: str) -> str:
    return " ".join(_MARKER.sub("", text).split())


def window(sentences: Sequence[str], center: int) -> str:
    lo = max(0, min(center - 1, len(sentences) - 3))
    return " ".join(sentences[lo : lo + 3])


def load_citint(split: str) -> tuple[list[dict[str, Any]], dict[int, list[str]]]:
    claims = [
        json.loads(x) for x in (CITINT_DIR / f"claims_{split}.jsonl").read_text().splitlines() if x.strip()
    ]
    corpus = {}
    for line in (CITINT_DIR / "corpus.jsonl").read_text().splitlines():
        if line.strip():
            d = json.loads(line)
            corpus[int(d["doc_id"])] = [s for s in d["abstract"] if s.strip()]
    return claims, corpus


def citation_pairs(
    split: str, seed: int, irrelevant_share: float = 0.35
) -> tuple[list[tuple[str, str]], list[str]]:
    claims, corpus = load_citint(split)
    rng = random.Random(seed)
    doc_ids = sorted(d for d, s in corpus.items() if s)
    pairs: list[tuple[str, str]] = []
    labels: list[str] = []
    for c in claims:
        claim = clean_claim(c["claim"])
        cited = int(c["cited_doc_ids"][0])
        sentences = corpus.get(cited)
        if not sentences:
            continue
        if c["evidence"]:
            for doc, evs in c["evidence"].items():
                for ev in evs:
                    sents = corpus.get(int(doc), sentences)
                    pairs.append((claim, window(sents, ev["sentences"][0])))
                    labels.append({"SUPPORT": "Supports", "REFUTE": "Contradicts"}[ev["label"]])
        else:
            pairs.append((claim, window(sentences, rng.randrange(len(sentences)))))
            labels.append("Neutral")
        if rng.random() < irrelevant_share:
            other = rng.choice(doc_ids)
            while other == cited:
                other = rng.choice(doc_ids)
            pairs.append((claim, window(corpus[other], rng.randrange(len(corpus[other])))))
            labels.append("Not relevant")
    return pairs, labels


# --- training and scoring -----------------------------------------------------------------------------


# Measured here (CitInt dev macro-F1): 1 epoch, lr 3e-5, no resampling -> 0.152 (always "Supports");
# 1 epoch, lr 8e-5, 160 tokens, 450 per label -> 0.274. Completeness: 2 epochs, lr 3e-5 -> 0.511 (it never
# says Borderline; the shipped judge is `completeness.py`'s, bench/completeness_judge.py).
RECIPES: dict[str, dict[str, Any]] = {
    "completeness": {"epochs": 2, "lr": 3e-5, "max_length": 128, "per_label": None},
    "citation": {"epochs": 1, "lr": 8e-5, "max_length": 160, "per_label": 450},
}


def balance(
    pairs: list[tuple[str, str]], labels: list[str], target: int, seed: int
) -> tuple[list[tuple[str, str]], list[str]]:
    """Resample every label to about `target` examples (down-sample the large, repeat the small), so a
    short training run cannot settle on the majority label."""
    rng = random.Random(seed)
    out: list[int] = []
    for label in sorted(set(labels)):
        idx = [i for i, y in enumerate(labels) if y == label]
        out.extend(
            rng.sample(idx, target)
            if len(idx) >= target
            else idx * (target // len(idx)) + idx[: target % len(idx)]
        )
    rng.shuffle(out)
    return [pairs[i] for i in out], [labels[i] for i in out]


def train_head(
    task: str,
    folder: Path,
    *,
    seed: int = 13,
    epochs: int | None = None,
    batch_size: int = 16,
    lr: float | None = None,
    max_length: int | None = None,
    per_label: int | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Train, score on the held-out split, save with metrics. Returns the saved meta. Unset options come
    from `RECIPES`; `per_label` resamples the training pairs to that many per label (see `balance`)."""
    recipe = RECIPES[task] if task in RECIPES else {}
    epochs = epochs or recipe.get("epochs", 1)
    lr = lr or recipe.get("lr", 3e-5)
    max_length = max_length or recipe.get("max_length")
    per_label = per_label or recipe.get("per_label")

    if task == "completeness":
        train_q, test_q = kqa_split(seed)
        train_x, train_y = completeness_pairs(train_q, seed)
        test_x, test_y = completeness_pairs(test_q, seed + 1)
        label_set, length, held_out = COMPLETENESS_HEAD_LABELS, 128, "K-QA held-out questions (proxy labels)"
    elif task == "citation":
        train_x, train_y = citation_pairs("train", seed)
        test_x, test_y = citation_pairs("dev", seed + 1)
        label_set, length, held_out = SUPPORT_LABELS, 256, "Citation-Integrity dev split"
    else:
        raise ValueError(f"unknown head task {task!r}")
    if per_label:
        train_x, train_y = balance(train_x, train_y, per_label, seed)
    head = PairClassifier.train(
        train_x,
        train_y,
        label_set=label_set,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        max_length=max_length or length,
        seed=seed,
        progress=progress,
    )
    pred = head.predict(test_x)
    report = macro_report(test_y, pred, label_set)
    meta = {
        "task": task,
        "train_data_sha256": data_fingerprint(zip(train_x, train_y, strict=True)),
        "metrics": {"held_out": held_out, **report},
        "label_counts_train": {label: train_y.count(label) for label in label_set},
        "resampled_per_label": per_label,
    }
    head.save(folder, meta=meta)
    return head.meta
