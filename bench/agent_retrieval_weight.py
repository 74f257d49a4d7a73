"""How `agent.retrieval_weight` was chosen: the weight of an abstract's retrieval score in the evidence order.

Evidence order (agent/evidence.py `ScoredSentence.rank`) = (1 - r) * [(1 - a) * relevance + a * P(answer-bearing)]
+ r * retrieval score of the sentence's abstract relative to its query's best hit (`relative_scores`: 1.0 for
the best), a = agent.answer_weight.
Without r the order reads one sentence at a time, so a finding of an abstract that shares one word with the
question (aspirin and melanoma) can lead an answer about another (aspirin and cardiovascular prevention) whose
abstract retrieval put first by a wide margin.

Questions: PubMedQA development questions of the TRAIN part of the shared split (seed 13, 60/40 by question;
`biocite.pubmedqa.split_questions`); the held-out part is measured by bench/agent_answers.py only. For each
question, one retrieval as the agent's first round (the question as the query, agent.docs_per_round hits),
then the evidence selected with each candidate r (no LLM). Printed per r, with r = 0 (the order before) as
the reference in the same run:
- top evidence from the source abstract: the first evidence sentence is of the question's own abstract;
- top evidence in its conclusions: ... and overlaps the PubMedQA long answer (the abstract's conclusions);
- verdict reads the source: the abstract the verdict reads is the source abstract, under the old rule (that of
  the most answer-bearing evidence sentence) and the current one (agent/graph.py `_verdict_evidence`: that of
  the first evidence sentence, so the same share as the first column).
The chosen r is the smallest with the best "top evidence in its conclusions" (ties within 0.005 -> smaller).

    python bench/agent_retrieval_weight.py [--n 300] [--set index.dir=...]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from biocite.agent.evidence import relative_scores  # noqa: E402
from biocite.agent.findings import overlaps_long_answer  # noqa: E402
from biocite.agent.graph import Agent  # noqa: E402
from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.pubmedqa import load_questions, long_answers, split_questions  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=300, help="train questions")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args()
    settings = load_settings(None, args.overrides)
    agent = Agent(settings, retriever=open_retriever(settings))
    train, _ = split_questions(load_questions())
    conclusions = long_answers()
    rows: dict[float, list[tuple[bool, bool, bool]]] = {w: [] for w in WEIGHTS}
    started = time.perf_counter()
    for q in train[: args.n]:
        hits = agent._with_documents(agent.retriever.search(q.question, k=agent.config.docs_per_round))
        for weight in WEIGHTS:
            evidence = agent.choose_evidence(q.question, hits, relative_scores(hits), retrieval_weight=weight)
            if not evidence:
                rows[weight].append((False, False, False))
                continue
            top = evidence[0]
            lead = evidence[
                int(np.argmax([e.answer if e.answer is not None else e.relevance for e in evidence]))
            ]
            rows[weight].append((
                top.pmid == q.pmid,
                top.pmid == q.pmid and overlaps_long_answer(top.span.text, conclusions[q.pmid]),
                lead.pmid == q.pmid,
            ))  # fmt: skip
    n = len(train[: args.n])
    print(f"# agent.retrieval_weight on {n} TRAIN questions (seed 13, 60/40 by question), "
          f"{time.perf_counter() - started:.0f} s, answer_weight {agent.config.answer_weight}")  # fmt: skip
    print(
        "r      top evidence from source   ... in its conclusions   verdict reads source (most answer-bearing / first)"
    )
    best: tuple[float, float] | None = None
    for weight in WEIGHTS:
        share = np.mean(np.array(rows[weight], dtype=float), axis=0)
        print(f"{weight:<6} {share[0]:.3f}                      {share[1]:.3f}                  "
              f"{share[2]:.3f} / {share[0]:.3f}")  # fmt: skip
        if best is None or share[1] > best[1] + 0.005:
            best = (weight, share[1])
    assert best is not None
    print(f"chosen: retrieval_weight {best[0]} (top evidence in the source's conclusions {best[1]:.3f})")


if __name__ == "__main__":
    main()
