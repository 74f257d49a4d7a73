"""When is the evidence enough to answer? The agent's relevance bars against a head learned from labels.

Labels, from the PubMedQA development questions split BY QUESTION (`biocite.pubmedqa.split_questions`, seed 13:
300 train, 200 held out): a question asked of the default index as it is should be answered (its source
abstract is indexed); the same question with its source abstract withheld from retrieval should not be (the
other 5,000+ abstracts rarely answer a PubMedQA question, which is about one study; some do, so the label is a
proxy and no judge should reach 1.0 on "caught").

For each question, both ways, the first retrieval round's evidence (`Agent.choose_evidence` with the agent's
settings: ordered with the answer model, and on relevance alone) gives the bars' inputs and the head's
features (`sufficiency_features`). The bars (`agent.min_top_relevance`, `agent.min_evidence`,
`agent.min_relevance`, as `Agent.sufficient` applies them) are the shipped rule. The head is a logistic
regression fitted on TRAIN rows only (`biocite.heads.LinearModel`, C 1); its threshold is chosen on TRAIN
(out of fold) to withhold as many source-withheld train questions as the bars do, so the two are compared at
the same operating point. Held-out figures: false abstention (source indexed) and caught (source withheld);
ROC AUC of the head and of the best relevance alone. With `--end-to-end`, also the whole extractive agent
(coverage and a second round included) on the held-out questions with their source withheld: the share that
abstains or lists a concept as not covered.

    python bench/agent_sufficiency.py [--n-train 300] [--n-held 200] [--features /tmp/f.json] [--end-to-end]

Also a coverage rescue (`coverage_rescue`): the bars, or a lower top bar fitted on TRAIN where the evidence kept by
coverage covers every concept of the question.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from biocite.agent.evidence import relative_scores  # noqa: E402
from biocite.agent.graph import Agent  # noqa: E402
from biocite.heads import LinearModel, out_of_fold_probabilities  # noqa: E402
from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.pubmedqa import load_questions, split_questions  # noqa: E402
from biocite.records import Evidence  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

FEATURES = ["best_relevance", "second_relevance", "log1p_strong", "best_answer", "answer_of_best"]
KIND, VERSION, LABELS = "sufficiency", 1, ["abstain", "answer"]


def sufficiency_features(
    ranked: list[Evidence], by_relevance: list[Evidence], min_relevance: float
) -> list[float]:
    """The head's inputs. `ranked`: the evidence ordered with the answer model; `by_relevance`: the same
    hits' evidence chosen on relevance alone (both after the `min_relevance` floor)."""
    rel = sorted((e.relevance for e in [*ranked, *by_relevance]), reverse=True) + [0.0]
    second = sorted((e.relevance for e in by_relevance), reverse=True)[1:2] or [0.0]
    strong = [e for e in by_relevance if e.relevance >= min_relevance]
    best = max(ranked, key=lambda e: e.relevance) if ranked else None
    return [
        rel[0],
        second[0],
        float(np.log1p(len(strong))),
        max((e.answer or 0.0 for e in ranked if e.relevance >= min_relevance), default=0.0),
        (best.answer or 0.0) if best is not None else 0.0,
    ]


def bar_inputs(evidence: list[Evidence], min_relevance: float) -> list[float]:
    """What the bars read: the best relevance and how many sentences reach `min_relevance`."""
    return [
        max((e.relevance for e in evidence), default=0.0),
        float(sum(e.relevance >= min_relevance for e in evidence)),
    ]


def profile(agent: Agent, question: str, withheld: str | None) -> dict[str, list[float]]:
    """The bars' inputs on both evidence selections the agent judges (ordered with the answer model, and on
    relevance alone), and the head's features."""
    k = agent.config.docs_per_round
    hits = [h for h in agent.retriever.search(question, k=k + 1) if h.pmid != withheld][:k]
    hits = agent._with_documents(hits)
    scores = relative_scores(hits)
    ranked = agent.choose_evidence(question, hits, scores)
    by_relevance = agent.choose_evidence(question, hits, scores, answer_model=False)
    floor = agent.config.min_relevance
    return {
        "ranked": bar_inputs(ranked, floor),
        "relevance": bar_inputs(by_relevance, floor),
        "features": sufficiency_features(ranked, by_relevance, floor),
        "covered": covered_inputs(agent, question, ranked, hits),
    }


def covered_inputs(agent: Agent, question: str, ranked: list[Evidence], hits: list) -> list[float]:
    """[1 if the evidence kept by coverage covers every concept, there are >= 2 and one is a key concept or
    the subject; its best relevance; its sentences at `min_relevance` or above]."""
    docs, sentences = agent._documents(hits)
    kept, cov, unknown, _ = agent._cover(question, ranked, docs, sentences, [])
    full = (
        cov is not None
        and len(cov.concepts) >= 2
        and any(c.role in ("", "subject") for c in cov.concepts)
        and not unknown
        and not cov.missing(kept, [])
    )
    strong = sum(e.relevance >= agent.config.min_relevance for e in kept)
    return [float(full), max((e.relevance for e in kept), default=0.0), float(strong)]


def coverage_rescue(agent: Agent, data: dict, n: int, answer_w: np.ndarray, answer_o: np.ndarray) -> None:
    """The bars, or: the kept evidence covers every concept (`covered_inputs`) and its best sentence reaches a
    lower bar, fitted on TRAIN (fewest false abstentions + withheld questions answered)."""
    cov_w, cov_o = (np.asarray([r["covered"] for r in data[w]]) for w in ("with", "without"))

    def rescued(cov: np.ndarray, bar: float) -> np.ndarray:
        return (cov[:, 0] == 1) & (cov[:, 1] >= bar) & (cov[:, 2] >= agent.config.min_evidence)

    print("COVERAGE RESCUE: TRAIN, lower top bar -> false abstentions + source-withheld questions answered")
    errors = {}
    for bar in np.round(np.arange(0.40, agent.config.min_top_relevance + 0.001, 0.02), 2):
        fa = int(np.sum(~(answer_w[:n] | rescued(cov_w[:n], bar))))
        missed = int(np.sum(answer_o[:n] | rescued(cov_o[:n], bar)))
        errors[float(bar)] = fa + missed
        print(f"  {bar:.2f}  {fa} + {missed} = {fa + missed}")
    bar = min(errors, key=lambda b: (errors[b], -b))
    print(f"chosen on TRAIN: {bar:.2f}; HELD OUT, bars -> bars or rescue:")
    for name, w, o in [("bars", answer_w[n:], answer_o[n:]),
                       ("rescue", answer_w[n:] | rescued(cov_w[n:], bar), answer_o[n:] | rescued(cov_o[n:], bar))]:  # fmt: skip
        print(
            f"  {name:8} false abstention {int(np.sum(~w))}/{len(w)}   withheld answered {int(np.sum(o))}/{len(o)}"
        )


def bars(rows: np.ndarray, agent: Agent) -> np.ndarray:
    """The shipped rule (`Agent.sufficient` on the answer-model selection, then on the relevance-only one)."""
    cfg = agent.config

    def ok(best: np.ndarray, strong: np.ndarray) -> np.ndarray:
        return (best >= cfg.min_top_relevance) & (strong >= cfg.min_evidence)

    return ok(rows[:, 0, 0], rows[:, 0, 1]) | ok(rows[:, 1, 0], rows[:, 1, 1])


def collect(agent: Agent, questions: list, path: Path | None) -> dict:
    if path and path.exists():
        return json.loads(path.read_text())
    rows: dict = {"with": [], "without": []}
    for i, q in enumerate(questions, 1):
        rows["with"].append(profile(agent, q.question, None))
        rows["without"].append(profile(agent, q.question, q.pmid))
        if i % 50 == 0:
            print(f"  {i}/{len(questions)}", file=sys.stderr, flush=True)
    if path:
        path.write_text(json.dumps(rows))
    return rows


class Withholding:
    """A retriever that never returns the PMIDs in `withheld` (as if they were not indexed)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.withheld = inner, set[str]()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def search(self, query: str, k: int = 10, *, stage: str | None = None) -> list:
        hits = self.inner.search(query, k=k + len(self.withheld), stage=stage)
        return [h for h in hits if h.pmid not in self.withheld][:k]


def end_to_end(settings: Any, questions: list) -> None:
    retriever = Withholding(open_retriever(settings))
    agent = Agent(settings, retriever=retriever)
    abstained = flagged = 0
    for q in questions:
        retriever.withheld = {q.pmid}
        answer = agent.ask(q.question, mode="extractive")
        abstained += answer.abstained
        flagged += answer.abstained or bool(answer.not_covered)
    n = len(questions)
    print(f"END TO END, extractive, {n} held-out questions with their source withheld: abstained "
          f"{abstained / n:.3f} ({abstained}/{n}), abstained or not_covered {flagged / n:.3f} ({flagged}/{n})")  # fmt: skip


def fit(x: np.ndarray, y: np.ndarray) -> LinearModel:
    return LinearModel.fit(x, y, kind=KIND, version=VERSION, labels=LABELS, c=1.0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n-train", type=int, default=300)
    parser.add_argument("--n-held", type=int, default=200)
    parser.add_argument("--features", type=Path, default=None, help="cache of the features (JSON)")
    parser.add_argument("--end-to-end", action="store_true", help="also the whole agent, sources withheld")
    args = parser.parse_args()
    settings = load_settings()
    agent = Agent(settings, retriever=open_retriever(settings))
    train, held = split_questions(load_questions())
    data = collect(agent, train[: args.n_train] + held[: args.n_held], args.features)
    n = min(args.n_train, len(train))
    ways = {w: (np.asarray([[r["ranked"], r["relevance"]] for r in data[w]]),
                np.asarray([r["features"] for r in data[w]])) for w in ("with", "without")}  # fmt: skip
    (bars_w, xw), (bars_o, xo) = ways["with"], ways["without"]
    x_train, y_train = np.vstack([xw[:n], xo[:n]]), np.r_[np.ones(n, dtype=int), np.zeros(n, dtype=int)]

    oof = out_of_fold_probabilities(x_train, y_train, fit)[:, 1]
    # the threshold: withhold (on train, out of fold) as many source-withheld questions as the bars do
    caught_by_bars = int(np.sum(~bars(bars_o[:n], agent)))
    threshold = float(np.sort(oof[n:])[min(caught_by_bars, n - 1)])
    head = fit(x_train, y_train)

    def report(name: str, answer_w: np.ndarray, answer_o: np.ndarray) -> None:
        print(f"  {name:12} false abstention {np.mean(~answer_w):.3f} ({int(np.sum(~answer_w))}/{len(answer_w)})"
              f"   caught {np.mean(~answer_o):.3f} ({int(np.sum(~answer_o))}/{len(answer_o)})")  # fmt: skip

    print(f"features: {FEATURES}")
    print(f"train: {n} questions x 2; held out: {len(xw) - n} x 2; split by question (seed 13)")
    print(
        f"head (standardised coefficients): {np.round(head.coef[0], 3).tolist()}, threshold {threshold:.3f}"
    )
    print("TRAIN (head out of fold):")
    report("bars", bars(bars_w[:n], agent), bars(bars_o[:n], agent))
    report("head", oof[:n] >= threshold, oof[n:] >= threshold)
    print("HELD OUT (the first retrieval round's evidence; coverage and a second round not applied):")
    report("bars", bars(bars_w[n:], agent), bars(bars_o[n:], agent))
    p_w, p_o = head.predict_proba(xw[n:])[:, 1], head.predict_proba(xo[n:])[:, 1]
    report("head", p_w >= threshold, p_o >= threshold)
    for t in (0.3, 0.4, 0.5, 0.6):
        report(f"head at {t}", p_w >= t, p_o >= t)
    from sklearn.metrics import roc_auc_score

    y_held = np.r_[np.ones(len(p_w)), np.zeros(len(p_o))]
    print(f"ROC AUC, held out: head {roc_auc_score(y_held, np.r_[p_w, p_o]):.3f}, best relevance alone "
          f"{roc_auc_score(y_held, np.r_[xw[n:, 0], xo[n:, 0]]):.3f} (train, out of fold: head "
          f"{roc_auc_score(y_train, oof):.3f})")  # fmt: skip
    coverage_rescue(agent, data, n, bars(bars_w, agent), bars(bars_o, agent))
    if args.end_to_end:
        end_to_end(settings, held[: args.n_held])


if __name__ == "__main__":
    main()
