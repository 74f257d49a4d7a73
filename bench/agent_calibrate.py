"""How the agent's sufficiency thresholds were chosen (no LLM; prints, asserts nothing).

Answerable side: PubMedQA questions of the reranker's TRAIN split (the benchmark uses validation questions).
Unanswerable side: the calibration questions below, on topics absent from the corpus; they are deliberately
different from bench/agent_unanswerable.json, which stays held out for the benchmark.
For each question: the best evidence relevance and how many evidence sentences clear agent.min_relevance;
then, for candidate (min_top_relevance, min_evidence), the share answered on each side.

    python bench/agent_calibrate.py [--n 60] [--set index.dir=...]
"""

from __future__ import annotations

import argparse
import os
import statistics

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from biocite.agent.evidence import select_evidence  # noqa: E402
from biocite.agent.graph import Agent  # noqa: E402
from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

# Absent from the default corpus (0 case-insensitive occurrences of the key term in titles and abstracts).
CALIBRATION_NEGATIVES = [
    "Does ribavirin improve survival in hantavirus pulmonary syndrome?",
    "Is tick-borne encephalitis vaccination effective in adults over 60?",
    "What is the best cooling method for exertional heat stroke in athletes?",
    "Can bovine spongiform encephalopathy be transmitted to humans through beef?",
    "How quickly does vitamin C supplementation resolve the symptoms of scurvy?",
    "Does melatonin reduce jet lag after eastward flights?",
    "Does acetazolamide prevent acute mountain sickness during rapid ascent?",
    "Is esketamine nasal spray effective for treatment-resistant depression?",
]


def profile(agent: Agent, question: str) -> tuple[float, int, bool]:
    hits = agent.retriever.search(question, k=agent.config.docs_per_round)
    docs, sentences = agent._documents(hits)
    evidence = select_evidence(
        question,
        docs,
        sentences,
        agent.cache,
        per_doc=agent.config.evidence_per_doc,
        min_relevance=0.0,
        weights=agent.weights,
    )
    best = evidence[0].relevance if evidence else 0.0
    strong = sum(e.relevance >= agent.config.min_relevance for e in evidence)
    return best, strong, bool(evidence)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--preset", default=None)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args()
    settings = load_settings(args.preset, args.overrides)
    agent = Agent(settings, retriever=open_retriever(settings))
    from biocite.index.rerank import train_questions

    positives = [profile(agent, q.question) for q in train_questions(settings)[: args.n]]
    negatives = [profile(agent, q) for q in CALIBRATION_NEGATIVES]
    for name, rows in (("answerable (train split)", positives), ("unanswerable (calibration)", negatives)):
        best = sorted(r[0] for r in rows)
        print(f"{name}: n={len(rows)} best relevance min {best[0]:.3f} median {statistics.median(best):.3f} "
              f"max {best[-1]:.3f}; strong counts {sorted(r[1] for r in rows)}")  # fmt: skip
        print(f"  best relevance values: {[round(b, 3) for b in best]}")
    print(f"\nmin_relevance {agent.config.min_relevance}: share answered (answerable / unanswerable)")
    for top in (0.40, 0.45, 0.50, 0.55, 0.60, 0.65):
        for min_ev in (1, 2, 3):
            pos = sum(b >= top and s >= min_ev for b, s, _ in positives) / len(positives)
            neg = sum(b >= top and s >= min_ev for b, s, _ in negatives) / len(negatives)
            print(f"  min_top_relevance {top:.2f} min_evidence {min_ev}: {pos:.2f} / {neg:.2f}")


if __name__ == "__main__":
    main()
