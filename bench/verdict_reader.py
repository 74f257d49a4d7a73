"""Can a fine-tuned reader of the abstract lift the yes/no/maybe verdict (issue 12: accuracy >= 0.75, macro-F1
>= 0.60)? `bench/verdict_features.py` showed that surface features do not; this reads.

The reader is the installed support model (the shipped one by default: a MiniLM-L6 cross-encoder already
trained on claim/passage labels), fine-tuned further on PubMedQA TRAIN questions: the question turned into a
claim (leading auxiliary and "?" dropped) against the source abstract's top answer-bearing sentences (as the
agent ranks them), with its four labels reused: yes -> supports, no -> contradicts, maybe -> neutral. With
`--long-answers` each train question also gives a second pair: the claim against its gold long answer (the
abstract's conclusion).

Split: the shared PubMedQA split (seed 13, 60/40 by question: 300 train, 200 held out). The reader's
out-of-fold probabilities on train (5 folds by question) feed the shipped head recipe (`verdict.fit_with_cv`),
alone and stacked with the cues; its CV score on train is the rule (it must beat the cues' 0.565). The reader
is then fine-tuned on all of train and the held-out figures are printed once.

    python bench/verdict_reader.py [--epochs 4] [--lr 3e-5] [--long-answers]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402
from verdict_features import as_claim, report  # noqa: E402  (a sibling: bench/ is sys.path[0])

from biocite import pubmedqa  # noqa: E402
from biocite.agent import verdict as V  # noqa: E402
from biocite.agent.evidence import VectorCache  # noqa: E402
from biocite.agent.findings import load_findings  # noqa: E402
from biocite.heads import PairClassifier  # noqa: E402
from biocite.index.build import open_index  # noqa: E402
from biocite.pubmedqa import load_questions, split_questions  # noqa: E402
from biocite.settings import load_settings  # noqa: E402
from biocite.support import LABELS, support_dir  # noqa: E402

TO_SUPPORT = {"yes": "supports", "no": "contradicts", "mixed": "neutral"}


def pair(row: V.TrainingRow) -> tuple[str, str]:
    return as_claim(row.question), " ".join(row.texts)


def fine_tune(
    rows: Sequence[V.TrainingRow],
    long_answers: dict[str, str] | None,
    args: argparse.Namespace,
    backbone: str,
) -> PairClassifier:
    pairs = [pair(r) for r in rows]
    labels = [TO_SUPPORT[r.label] for r in rows]
    if long_answers is not None:
        pairs += [(as_claim(r.question), long_answers[r.pmid]) for r in rows]
        labels += [TO_SUPPORT[r.label] for r in rows]
    return PairClassifier.train(
        pairs,
        labels,
        label_set=list(LABELS),
        backbone=backbone,
        epochs=args.epochs,
        batch_size=16,
        lr=args.lr,
        max_length=args.max_length,
        seed=13,
        progress=False,
    )


def reader_features(head: PairClassifier, rows: Sequence[V.TrainingRow]) -> np.ndarray:
    return np.log(head.predict_proba([pair(r) for r in rows])[:, :3] + 1e-4)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--long-answers", action="store_true")
    parser.add_argument("--backbone", default=None, help="default: the installed support model")
    args = parser.parse_args()
    settings = load_settings(None, [])
    backbone = args.backbone or str(support_dir(settings) / "model")
    index = open_index(settings)
    cache = VectorCache(index.embedder, max_items=200_000)
    findings = load_findings(settings, index.embedder, cache, index.docs)
    train_q, held_q = split_questions(load_questions())
    rows = V.training_rows([q.pmid for q in train_q], cache, findings, index.docs)
    held = V.training_rows([q.pmid for q in held_q], cache, findings, index.docs)
    long_answers = {i.pmid: i.long_answer for i in pubmedqa.read_items()} if args.long_answers else None
    print(f"rows: {len(rows)} train / {len(held)} held-out; {vars(args)}", flush=True)
    (x_tr, y_tr), (x_he, y_he) = V.feature_matrix(rows), V.feature_matrix(held)
    oof = np.zeros((len(rows), 3))
    started = time.perf_counter()
    folds = StratifiedKFold(5, shuffle=True, random_state=13).split(x_tr, y_tr)
    for k, (fit_idx, out_idx) in enumerate(folds):
        head = fine_tune([rows[i] for i in fit_idx], long_answers, args, backbone)
        oof[out_idx] = reader_features(head, [rows[i] for i in out_idx])
        print(f"fold {k}: {time.perf_counter() - started:.0f} s", flush=True)
    head = fine_tune(rows, long_answers, args, backbone)
    r_he = reader_features(head, held)
    print(f"trained in {time.perf_counter() - started:.0f} s", flush=True)
    report("cues (shipped)", x_tr, x_he, y_tr, y_he)
    report("reader alone", oof, r_he, y_tr, y_he)
    report("cues + reader", np.hstack([x_tr, oof]), np.hstack([x_he, r_he]), y_tr, y_he)


if __name__ == "__main__":
    main()
