"""Would a token-level soft recall match K-QA nuggets better than the clause cosine (issue 13: F1 >= 0.75)?

A measurement for the nugget matcher's next version; nothing in the evaluator changes with it.

Items: those `biocite calibrate nuggets` fits and reports on (`biocite.evaluator.calibrate`): physician answers
against their own must-have statements and one other question's (the "physician" source), and the 399
physicians' entailment labels of LLM answers ("nli"), split by question with the evaluator's seeded sha256 rule
(seed 13, 40 % held out).

Score: BERTScore's recall (Zhang et al., 2020) of a gold nugget against the whole answer. Every wordpiece of the
nugget takes its best cosine to any wordpiece of the answer's clauses (MiniLM token embeddings, each clause
encoded alone), and the mean is weighted by the wordpiece's idf over the shipped corpus's 5,136 abstracts. A gold
nugget is matched when the mixture's P(match) of that score clears the threshold. As in the calibrator, a 1-D
Bayesian Gaussian mixture is fitted on the train scores; the threshold maximises the mean of the two sources'
F1 on train (a grid of 99 values, where the calibrator runs Optuna over the same range).

References, same run and items:
- the shipped matcher (clause cosine, greedy 1:1 matching), fitted by `calibrate_nuggets` itself;
- matching every nugget;
- on the nli rows, each physician against the other two (the human agreement the 0.75 target sits under).

    python bench/kqa_token_recall.py
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import csv  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Sequence  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.metrics import f1_score  # noqa: E402

from biocite.embedder import Embedder  # noqa: E402
from biocite.evaluator.calibrate import SOURCES, Item, calibrate_nuggets, nli_items, physician_items  # noqa: E402
from biocite.evaluator.nuggets import fit_mixture, match_component_of  # noqa: E402
from biocite.kqa import load_nli_labels, load_questions, split_of  # noqa: E402
from biocite.settings import DATA_DIR  # noqa: E402

SEED = 13


class TokenRecall:
    """idf-weighted soft recall of a text's wordpieces against other texts' wordpieces (MiniLM)."""

    def __init__(self, embedder: Embedder) -> None:
        self.model = embedder.model
        self.tok = self.model.tokenizer
        self.special = set(self.tok.all_special_ids)
        self.cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        texts = []
        with (DATA_DIR / "corpus" / "abstracts.jsonl").open() as f:
            for line in f:
                d = json.loads(line)
                texts.append(f"{d.get('title') or ''} {d.get('abstract') or ''}")
        df: Counter[int] = Counter()
        for ids in self.tok(texts, add_special_tokens=False)["input_ids"]:
            df.update(set(ids))
        self.df, self.n_docs = df, len(texts)

    def idf(self, ids: np.ndarray) -> np.ndarray:
        return np.array([math.log((self.n_docs + 1) / (self.df.get(int(i), 0) + 1)) for i in ids])

    def tokens(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        if text not in self.cache:
            vectors = self.model.encode([text], output_value="token_embeddings", convert_to_tensor=True)[0]
            v = vectors.float().cpu().numpy()
            ids = self.tok(text, truncation=True, max_length=self.model.max_seq_length)["input_ids"][: len(v)]
            keep = [k for k, x in enumerate(ids) if x not in self.special]
            v = v[keep] / np.linalg.norm(v[keep], axis=1, keepdims=True)
            self.cache[text] = (np.array([ids[k] for k in keep]), v)
        return self.cache[text]

    def recall(self, nugget: str, answer_parts: Sequence[str]) -> float:
        ids, v = self.tokens(nugget)
        if not answer_parts or len(ids) == 0:
            return 0.0
        answer = np.concatenate([self.tokens(p)[1] for p in answer_parts])
        w = self.idf(ids)
        return float(((v @ answer.T).max(axis=1) * w).sum() / max(w.sum(), 1e-9))


def scored(items: Sequence[Item], scorer: TokenRecall) -> list[tuple[str, float, bool]]:
    return [
        (it.source, scorer.recall(it.gold[k], it.answer_nuggets), want)
        for it in items
        for k, want in sorted(it.labels.items())
    ]


def f1_by_source(
    rows: Sequence[tuple[str, float, bool]], p: np.ndarray, threshold: float
) -> dict[str, float]:
    out = {}
    for src in SOURCES:
        pairs = [(r[2], q >= threshold) for r, q in zip(rows, p, strict=True) if r[0] == src]
        out[src] = round(float(f1_score([g for g, _ in pairs], [c for _, c in pairs])), 4)
    return out


def human_agreement(seed: int) -> list[float]:
    """F1 of each physician's Entailment calls against each other physician's, nli rows of held-out questions."""
    with (DATA_DIR / "kqa" / "NLI_medical_annotator.csv").open() as f:
        rows = [r for r in csv.DictReader(f) if split_of(r["Question"], seed) == "test"]
    calls = [[r[f"label_{a}"] == "Entailment" for r in rows] for a in range(3)]
    return [round(float(f1_score(calls[b], calls[a])), 3) for a in range(3) for b in range(3) if a < b]


def main() -> None:
    started = time.perf_counter()
    questions, nli = load_questions(), load_nli_labels()
    split = {side: [q for q in questions if split_of(q.question, SEED) == side] for side in ("train", "test")}
    items = {
        side: physician_items(split[side], SEED)
        + nli_items([r for r in nli if split_of(r.question, SEED) == side])
        for side in ("train", "test")
    }
    embedder = Embedder("minilm")
    shipped = calibrate_nuggets(lambda texts: embedder.encode(list(texts)), embedder_name="minilm", seed=SEED)
    scorer = TokenRecall(embedder)
    rows = {side: scored(items[side], scorer) for side in ("train", "test")}
    mixture = fit_mixture(np.array([r[1] for r in rows["train"]]), SEED)
    comp = match_component_of(mixture)
    p = {side: mixture.predict_proba(np.array([[r[1]] for r in rows[side]]))[:, comp] for side in rows}
    grid = np.linspace(0.01, 0.99, 99)
    threshold = max(
        grid, key=lambda t: (np.mean(list(f1_by_source(rows["train"], p["train"], t).values())), -t)
    )
    every = {src: round(float(f1_score([r[2] for r in rows["test"] if r[0] == src],
                                        [True for r in rows["test"] if r[0] == src])), 4) for src in SOURCES}  # fmt: skip
    print(f"items: {len(rows['train'])} train / {len(rows['test'])} held-out (gold nugget, answer) rows")
    for side in ("train", "test"):
        cosine = {src: shipped.metrics[side][src]["f1"] for src in SOURCES}
        token = f1_by_source(rows[side], p[side], threshold)
        print(f"{side:5} shipped clause cosine F1 {cosine}   token recall F1 {token}")
    print(
        f"token recall threshold on P(match) {threshold:.2f}; shipped matcher threshold {shipped.threshold:.3f}"
    )
    print(f"held-out, matching every nugget F1 {every}")
    print(f"held-out nli rows, physician vs physician F1 {human_agreement(SEED)}")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
