"""`biocite calibrate nuggets`: fit the nugget matcher on the K-QA train questions, report on held-out ones.

Labelled (answer, gold nugget) pairs come from two K-QA sources, split by question (seeded hash):
- physician answers against their own must-have statements (positives: the physicians wrote those
  statements from that answer) plus the must-have statements of one other question (negatives);
- the 399 physician entailment labels of LLM answers (Entailment = match; Neutral / Contradiction = no match).
Each gold nugget is scored by its token recall against the whole answer (`nuggets.token_recall`, idf over the
shipped corpus's abstracts), or, for the LLM matcher, by a logistic stack of that recall and the logit of the
LLM's P(yes) that the answer states it, fitted on the train rows' physician labels; the LLM matcher is fitted
and reported on the physician-labelled rows only (one LLM call each: about eight minutes for the 399 rows on 2
cores), since matching physicians' own statements is what token recall already does at F1 0.99. The mixture
is fitted (unsupervised) on every score of the train items; the P(match) threshold is tuned by Optuna on three
objectives (F1 averaged over the sources, so the 259 human labels weigh as much as the ~1,000 physician pairs;
mean score of the matched nuggets; number matched).
Selection rule on the Pareto front: the highest F1; among trials within 0.005 F1 of it, the one with the
highest mean matched score (the more conservative threshold); then the lower threshold.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from tqdm import tqdm

from biocite.embedder import TokenVectors
from biocite.errors import ModelError
from biocite.evaluator.nuggets import (
    LLM_SCORE,
    SCORE,
    Idf,
    MatchModel,
    YesProbability,
    answer_text,
    clause_nuggets,
    fit_mixture,
    match_component_of,
    mixture_to_dict,
    stacked_score,
    token_recall,
    yes_logit,
)
from biocite.heads import data_fingerprint
from biocite.kqa import KQAQuestion, NLILabel, load_nli_labels, load_questions, split_of
from biocite.support_data import CORPUS_FILE, load_abstracts

F1_TOLERANCE = 0.005
SOURCES = ("physician", "nli")


@dataclass
class Item:
    """One answer against one set of gold nuggets; `labels` maps gold index -> should match."""

    source: str  # "physician" | "nli"
    answer_nuggets: list[str]
    gold: list[str]
    labels: dict[int, bool]
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0))  # each gold nugget's score
    recall: np.ndarray = field(default_factory=lambda: np.zeros(0))  # each gold nugget's token recall
    yes: list[float | None] = field(default_factory=list)  # the LLM's P(yes) for each (LLM matcher)
    undetermined: int = 0  # gold nuggets the LLM could not judge (scored as P(yes) 0)


class TokenEncoder(Protocol):
    """What the calibrator needs of `biocite.embedder.Embedder`."""

    name: str

    def encode_tokens(self, texts: Sequence[str]) -> list[TokenVectors]: ...

    def wordpieces(self, texts: Sequence[str]) -> list[list[int]]: ...


def physician_items(questions: Sequence[KQAQuestion], seed: int) -> list[Item]:
    rng = random.Random(seed)
    items = []
    for i, q in enumerate(questions):
        others = [j for j in range(len(questions)) if j != i and questions[j].must_have]
        if not q.must_have or not others:
            continue
        foreign = questions[rng.choice(others)].must_have
        gold = list(q.must_have) + list(foreign)
        labels = {k: k < len(q.must_have) for k in range(len(gold))}
        items.append(Item("physician", clause_nuggets(q.answer), gold, labels))
    return items


def nli_items(rows: Sequence[NLILabel]) -> list[Item]:
    grouped: dict[tuple[str, str], list[NLILabel]] = {}
    for row in rows:
        grouped.setdefault((row.question, row.answer), []).append(row)
    items = []
    for (_, answer), group in grouped.items():
        gold = list(dict.fromkeys(r.claim for r in group))
        labels = {gold.index(r.claim): r.label == "Entailment" for r in group}
        items.append(Item("nli", clause_nuggets(answer), gold, labels))
    return items


def corpus_idf(encoder: TokenEncoder) -> Idf:
    """Wordpiece idf over the shipped corpus's abstracts (a PubMed sample, not the questions scored)."""
    return Idf.of_documents(encoder.wordpieces(list(load_abstracts().values())), corpus=CORPUS_FILE.name)


def attach_scores(items: list[Item], encoder: TokenEncoder, idf: Idf) -> None:
    texts = sorted({t for it in items for t in [*it.answer_nuggets, *it.gold]})
    tokens = dict(zip(texts, encoder.encode_tokens(texts), strict=True))
    for it in items:
        clauses = [tokens[t] for t in it.answer_nuggets]
        it.scores = it.recall = np.array([token_recall(tokens[g], clauses, idf)[0] for g in it.gold])


def attach_llm_answers(items: list[Item], yes_probability: YesProbability, *, progress: bool = True) -> None:
    """The LLM's P(yes) that each item's answer states each of its gold nuggets."""
    with tqdm(
        total=sum(len(it.gold) for it in items), desc="LLM nugget judge", unit="pair", disable=not progress
    ) as bar:
        for it in items:
            text = answer_text(it.answer_nuggets)
            it.yes = []
            for g in it.gold:
                it.yes.append(yes_probability(text, g))
                bar.update()
            it.undetermined = sum(p is None for p in it.yes)


def fit_stack(items: Sequence[Item]) -> list[float]:
    """Logistic regression of the label on (token recall, P(yes) logit): the LLM matcher's score weights."""
    from sklearn.linear_model import LogisticRegression

    x = np.array([[r, yes_logit(p or 0.0)] for it in items for r, p in zip(it.recall, it.yes, strict=True)])
    y = np.array([it.labels[k] for it in items for k in range(len(it.gold))])
    model = LogisticRegression().fit(x, y)
    return [round(float(w), 6) for w in (*model.coef_[0], model.intercept_[0])]


def attach_stacked_scores(items: Sequence[Item], stack: Sequence[float]) -> None:
    for it in items:
        it.scores = np.array(
            [stacked_score(stack, r, p or 0.0) for r, p in zip(it.recall, it.yes, strict=True)]
        )


@dataclass
class Scores:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    matched_scores: list[float] = field(default_factory=list)

    def f1(self) -> float:
        denom = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / denom if denom else 0.0

    def summary(self) -> dict[str, Any]:
        n = self.tp + self.fp + self.fn + self.tn
        p_yes = ((self.tp + self.fp) / n) * ((self.tp + self.fn) / n) if n else 0.0
        p_no = ((self.tn + self.fn) / n) * ((self.tn + self.fp) / n) if n else 0.0
        acc = (self.tp + self.tn) / n if n else 0.0
        kappa = (acc - p_yes - p_no) / (1 - p_yes - p_no) if n and (p_yes + p_no) < 1 else 0.0
        return {
            "n": n,
            "accuracy": round(acc, 4),
            "f1": round(self.f1(), 4),
            "precision": round(self.tp / (self.tp + self.fp), 4) if self.tp + self.fp else None,
            "recall": round(self.tp / (self.tp + self.fn), 4) if self.tp + self.fn else None,
            "cohen_kappa": round(kappa, 4),
            "confusion": {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn},
        }


def evaluate_items(items: Sequence[Item], matcher: MatchModel) -> Scores:
    scores = Scores()
    for it in items:
        matched = matcher.p_match(it.scores) >= matcher.threshold
        scores.matched_scores.extend(float(x) for x in it.scores[matched])
        for k, want in it.labels.items():
            got = bool(matched[k])
            scores.tp += got and want
            scores.fp += got and not want
            scores.fn += want and not got
            scores.tn += not got and not want
    return scores


def choose_from_front(front: list[tuple[float, float, float, float]]) -> tuple[float, float, float, float]:
    """front: (threshold, f1, mean matched score, nuggets matched). See the module docstring for the rule."""
    best_f1 = max(t[1] for t in front)
    near = [t for t in front if t[1] >= best_f1 - F1_TOLERANCE]
    return sorted(near, key=lambda t: (-t[2], t[0]))[0]


def calibrate_nuggets(
    encoder: TokenEncoder,
    *,
    seed: int = 13,
    n_trials: int = 80,
    questions: Sequence[KQAQuestion] | None = None,
    nli: Sequence[NLILabel] | None = None,
    yes_probability: YesProbability | None = None,
    llm: str | None = None,
    progress: bool = False,
) -> MatchModel:
    """The token-recall matcher; with `yes_probability` (the LLM named `llm`), the LLM matcher."""
    import optuna

    questions = list(questions if questions is not None else load_questions())
    nli = list(nli if nli is not None else load_nli_labels())
    train_q = [q for q in questions if split_of(q.question, seed) == "train"]
    test_q = [q for q in questions if split_of(q.question, seed) == "test"]
    # the LLM matcher is fitted on the physician-labelled rows alone
    with_physicians = yes_probability is None
    train = (physician_items(train_q, seed) if with_physicians else []) + nli_items(
        [r for r in nli if split_of(r.question, seed) == "train"]
    )
    test = (physician_items(test_q, seed) if with_physicians else []) + nli_items(
        [r for r in nli if split_of(r.question, seed) == "test"]
    )
    sources = [src for src in SOURCES if any(it.source == src for it in train)]
    idf = corpus_idf(encoder)
    attach_scores(train + test, encoder, idf)
    stack = None
    if yes_probability is not None:
        attach_llm_answers(train + test, yes_probability, progress=progress)
        stack = fit_stack(train)
        attach_stacked_scores(train + test, stack)

    covariance = "full" if stack is None else "tied"  # tied: P(match) monotone in the stacked score
    mixture = fit_mixture(np.concatenate([it.scores for it in train]), seed, covariance)
    fit_rows = [
        {
            "source": it.source,
            "answer": it.answer_nuggets,
            "gold": it.gold,
            "labels": sorted(it.labels.items()),
        }
        for it in train
    ]
    base = MatchModel(
        embedder=encoder.name,
        score=LLM_SCORE if yes_probability is not None else SCORE,
        llm=llm if yes_probability is not None else None,
        stack=stack,
        idf=idf,
        mixture=mixture_to_dict(mixture),
        match_component=match_component_of(mixture),
        threshold=0.5,
        fit_data_sha256=data_fingerprint(fit_rows),
    )

    def objective(trial: optuna.Trial) -> tuple[float, float, float]:
        base.threshold = trial.suggest_float("threshold", 0.01, 0.99)
        parts = [evaluate_items([it for it in train if it.source == src], base) for src in sources]
        matched = [x for s in parts for x in s.matched_scores]
        f1 = float(np.mean([s.f1() for s in parts]))
        return f1, float(np.mean(matched)) if matched else 0.0, float(len(matched))

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        directions=["maximize", "maximize", "maximize"], sampler=optuna.samplers.TPESampler(seed=seed)
    )
    study.optimize(objective, n_trials=n_trials)
    front = [(t.params["threshold"], *t.values) for t in study.best_trials]
    chosen = choose_from_front(front)
    base.threshold = round(float(chosen[0]), 6)

    comp = base.match_component
    means = np.asarray(mixture.means_).ravel()
    base.split = {
        "by": "question (seeded sha256)",
        "seed": seed,
        "test_fraction": 0.4,
        "train_questions": len(train_q),
        "test_questions": len(test_q),
    }
    base.selection = {
        "rule": "max F1; within 0.005 of it, max mean matched score; then lower threshold",
        "n_trials": n_trials,
        "pareto_front": [[round(x, 4) for x in t] for t in sorted(front)],
        "chosen": [round(x, 4) for x in chosen],
        "mixture_means": [round(float(m), 4) for m in means],
        "match_component": comp,
    }
    base.metrics = {
        "train": _by_source(train, base),
        "test": _by_source(test, base),
        "note": "test = held-out K-QA questions; 'nli' compares with the physicians' majority labels "
        "(Entailment = match)",
    }
    base.library_versions = _versions()
    flat = [source for source, m in base.metrics["train"].items() if m["f1"] == 0.0]
    if flat:  # never save a matcher that matches nothing it was fitted on
        raise ModelError(
            f"the nugget matcher fitted on K-QA (seed {seed}) matches no {flat[0]} nugget of its own train "
            "questions: its mixture did not separate matches; try another evaluator.seed"
        )
    return base


def _by_source(items: Sequence[Item], matcher: MatchModel) -> dict[str, Any]:
    out = {}
    for source in SOURCES:
        part = [it for it in items if it.source == source]
        if not part:
            continue  # the LLM matcher reads no physician answers
        want = [w for it in part for w in it.labels.values()]
        every = 2 * sum(want) / (len(want) + sum(want)) if want else 0.0  # F1 of matching every nugget
        out[source] = evaluate_items(part, matcher).summary() | {
            "items": len(part),
            "match_everything_f1": round(every, 4),
            "undetermined": sum(it.undetermined for it in part),
        }
    return out


def _versions() -> dict[str, str]:
    import optuna
    import sklearn

    return {"scikit-learn": sklearn.__version__, "optuna": optuna.__version__, "numpy": np.__version__}
