"""Can stacking the judges' scores match K-QA nuggets better (issue 13: F1 >= 0.75)? A negative result, kept
so that it is not tried again blind.

Rows: the 399 physician NLI labels of K-QA (`biocite.kqa.load_nli_labels`: a must-have statement against an
LLM's answer, Entailment or not), split by question with the evaluator's seeded sha256 rule (`split_of`,
seed 13, 40 % held out). Features per row: the best and second-best MiniLM cosine of the statement to the
answer's clause nuggets, the support model's four probabilities for (statement, answer), and the share of
the statement's stems in the answer. Each single score gets an F1-best threshold on the train questions; a
logistic regression over several is fitted on the train questions (C 0.1 and 1). F1 on held-out questions,
against matching every statement.

    python bench/kqa_match_stacking.py
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import f1_score  # noqa: E402

from biocite.app.evaluation import _embedder  # noqa: E402
from biocite.evaluator.nuggets import clause_nuggets  # noqa: E402
from biocite.kqa import load_nli_labels, split_of  # noqa: E402
from biocite.settings import load_settings  # noqa: E402
from biocite.support import SupportModel  # noqa: E402
from biocite.tokenize import tokenize  # noqa: E402

COLUMNS = [
    "cosine max",
    "cosine 2nd",
    "P(supports)",
    "P(contradicts)",
    "P(neutral)",
    "P(not relevant)",
    "recall",
]


def features() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    settings = load_settings(None, [])
    rows = load_nli_labels()
    embed = _embedder(settings)
    verdicts = SupportModel.load(settings).check_many([(r.claim, r.answer) for r in rows])
    out = []
    for row, verdict in zip(rows, verdicts, strict=True):
        vectors = embed([row.claim, *(clause_nuggets(row.answer) or [row.answer])])
        cos = np.sort(vectors[1:] @ vectors[0])
        claim, answer = set(tokenize(row.claim, stem=True)), set(tokenize(row.answer, stem=True))
        p = verdict.probs
        out.append([cos[-1], cos[-2] if len(cos) > 1 else cos[-1], p["supports"], p["contradicts"],
                    p["neutral"], p["not_relevant"], len(claim & answer) / max(len(claim), 1)])  # fmt: skip
    gold = np.array([r.label == "Entailment" for r in rows])
    test = np.array([split_of(r.question, 13) == "test" for r in rows])
    return np.array(out), gold, test


def held_out_f1(
    train_scores: np.ndarray, test_scores: np.ndarray, y_train: np.ndarray, y_test: np.ndarray
) -> float:
    grid = np.quantile(train_scores, np.linspace(0.01, 0.99, 99))
    threshold = max(grid, key=lambda t: f1_score(y_train, train_scores >= t))
    return float(f1_score(y_test, test_scores >= threshold))


def main() -> None:
    x, y, test = features()
    train = ~test
    print(
        f"rows: {train.sum()} train / {test.sum()} held-out; entailed {y[train].mean():.3f} / {y[test].mean():.3f}"
    )
    print(f"match every statement: F1 {f1_score(y[test], np.ones(test.sum(), bool)):.3f}")
    for i, name in enumerate(COLUMNS):
        print(f"{name:16} F1 {held_out_f1(x[train, i], x[test, i], y[train], y[test]):.3f}")
    for name, cols in [("all seven", list(range(7))), ("cosine+P(supports)+recall", [0, 2, 6])]:
        for c in (0.1, 1.0):
            model = LogisticRegression(C=c, max_iter=1000).fit(x[train][:, cols], y[train])
            scores = [model.predict_proba(x[mask][:, cols])[:, 1] for mask in (train, test)]
            print(f"logistic {name}, C {c}: F1 {held_out_f1(*scores, y[train], y[test]):.3f}")


if __name__ == "__main__":
    main()
