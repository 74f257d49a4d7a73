"""Train the issue-12 models (answer-bearing sentences, verdict) and measure them on the held-out questions.

Split: the PubMedQA development questions by question, seed 13, 60 % train / 40 % held out
(`biocite.pubmedqa.split_questions`, the reranker's split). Training uses the train part (plus the
index's structured abstracts for the findings model); the figures printed are on the held-out part, with
the source abstract given (no retrieval), against simple references measured in the same run:
- findings model: share of held-out questions whose top-scored sentence of the source abstract is in the
  long answer (the conclusions), vs. the top sentence by question cosine (the old signal) and vs. the
  abstract's last sentence;
- verdict model: accuracy and macro-F1 over yes/no/maybe on the held-out source abstracts, vs. the
  majority class; C of each logistic regression chosen by 5-fold cross-validation on the TRAIN part.

Saves both artifacts where the agent reads them (agent.models_dir, default <home>/models/agent/).

    python bench/agent_train_answers.py [--set agent.models_dir=/tmp/agent-models]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from biocite.agent import findings as F  # noqa: E402
from biocite.agent import verdict as V  # noqa: E402
from biocite.agent.evidence import VectorCache  # noqa: E402
from biocite.index.build import open_index  # noqa: E402
from biocite.pubmedqa import load_questions, split_questions  # noqa: E402
from biocite.settings import load_settings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args()
    from sklearn.metrics import accuracy_score, f1_score

    settings = load_settings(None, args.overrides)
    index = open_index(settings)
    cache = VectorCache(index.embedder, max_items=200_000)
    out_dir = F.agent_models_dir(settings)
    started = time.perf_counter()
    train, held_out = split_questions(load_questions())
    print(f"split: {len(train)} train / {len(held_out)} held-out questions (seed 13, 60/40)")

    # --- answer-bearing sentences
    items = F.training_abstracts({q.pmid for q in train}, index.docs)
    x, y = F.abstract_features(items, cache)
    print(f"findings training: {len(items)} abstracts, {len(y)} sentences, {int(y.sum())} positive "
          f"({time.perf_counter() - started:.0f} s)", flush=True)  # fmt: skip
    model = F.train_findings(cache, index.embedder.name, index.docs)  # C by 5-fold CV on train, as on first use
    print(f"findings C by 5-fold CV on train (balanced accuracy): {model.meta['C_cv_scores']} -> {model.meta['C']}",
          flush=True)  # fmt: skip
    model.save(out_dir / f"findings-{index.embedder.name}.json")
    held = F.pubmedqa_training({q.pmid for q in held_out}, index.docs)
    cosine_col = len(F.CUE_NAMES) - 1
    top_model, top_cosine, top_last = [], [], []
    for item in held:
        xs, ys = F.abstract_features([item], cache)
        top_model.append(ys[int(np.argmax(model.probabilities(xs)))])
        top_cosine.append(ys[int(np.argmax(xs[:, cosine_col]))])
        top_last.append(ys[-1])
    print(
        f"held-out ({len(held)} source abstracts): top sentence in the long answer: model "
        f"{np.mean(top_model):.3f}, question cosine {np.mean(top_cosine):.3f}, last sentence {np.mean(top_last):.3f}",
        flush=True,
    )

    # --- verdict
    xv, yv, _ = V.training_rows([q.pmid for q in train], cache, model, index.docs)

    def macro(a: np.ndarray, b: np.ndarray) -> float:
        return float(f1_score(a, b, average="macro"))

    verdict = V.train_verdict(cache, index.embedder.name, model, index.docs)  # C by 5-fold CV, as on first use
    print(f"verdict C by 5-fold CV on train (macro-F1): {verdict.meta['C_cv_scores']} -> {verdict.meta['C']}",
          flush=True)  # fmt: skip
    verdict.save(out_dir / f"verdict-{index.embedder.name}.json")
    xh, yh, _ = V.training_rows([q.pmid for q in held_out], cache, model, index.docs)
    predicted = verdict.probabilities(xh).argmax(axis=1)
    majority = np.full_like(yh, np.bincount(yv).argmax())
    print(
        f"verdict on held-out source abstracts ({len(yh)}): accuracy {accuracy_score(yh, predicted):.3f}, "
        f"macro-F1 {macro(yh, predicted):.3f}; majority class {accuracy_score(yh, majority):.3f} / "
        f"{macro(yh, majority):.3f}"
    )
    print(f"saved to {out_dir}; {time.perf_counter() - started:.0f} s in all")
    print(json.dumps({"findings_meta": model.meta, "verdict_meta": verdict.meta}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
