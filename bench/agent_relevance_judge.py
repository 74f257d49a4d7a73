"""Does the LLM relevance veto of generate mode (`agent.judge_top`, `agent.judge_veto`) remove the right
sentences? It costs one LLM call per judged sentence (~1.7 s each, 3 per answer on 2 cores).

For each TRAIN question of the PubMedQA split by question (seed 13, 60/40, `split_questions`), the agent's
evidence up to the veto (the same in both modes) is taken, and its first `judge_top` sentences are judged
as generate mode judges them. A sentence is labelled by where it comes from: the question's own abstract
(the abstract the PubMedQA question was written from) or another one; and, in the own abstract, whether it
overlaps the PubMedQA long answer (its conclusions: the sentence answers the question). A veto that helps
removes other abstracts' sentences; one that hurts removes the own abstract's conclusions. Printed: the veto
rate per kind and the AUC of P(relevant) between the own conclusions and other abstracts' sentences. Other
abstracts can be relevant too, so the AUC is a lower bound on the judge's skill, but a veto that removes the
own conclusions as often as other sentences does not separate them.

    python bench/agent_relevance_judge.py [--n 60] [--top 3]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from sklearn.metrics import roc_auc_score  # noqa: E402

from biocite.agent.findings import overlaps_long_answer  # noqa: E402
from biocite.agent.graph import Agent  # noqa: E402
from biocite.agent.prompting import load_prompt  # noqa: E402
from biocite.agent.state import AgentState  # noqa: E402
from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.pubmedqa import load_questions, long_answers, split_questions  # noqa: E402
from biocite.records import Evidence  # noqa: E402
from biocite.settings import load_settings  # noqa: E402


def evidence_before_veto(agent: Agent, question: str) -> list[Evidence]:
    """The agent's evidence after the coverage and relevance filters, before any LLM judgement."""
    state: AgentState = {"question": question, "mode": "extractive", "history": [], "notes": []}
    for node in (agent.contextualize, agent.plan, agent.retrieve, agent.attribute):
        state = {**state, **node(state)}  # type: ignore[typeddict-item]
    return list(state.get("evidence", []))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=60, help="TRAIN questions")
    parser.add_argument("--top", type=int, default=3, help="sentences judged per question (agent.judge_top)")
    args = parser.parse_args()
    settings = load_settings(None, [f"agent.judge_top={args.top}"])
    agent = Agent(settings, retriever=open_retriever(settings))
    prompt = load_prompt("relevance")
    conclusions = long_answers()
    train, _ = split_questions(load_questions())
    judged: dict[str, list[float]] = {"own conclusions": [], "own other": [], "other abstract": []}
    start = time.perf_counter()
    for question in train[: args.n]:
        for item in evidence_before_veto(agent, question.question)[: agent.config.judge_top]:
            p = agent.judge(prompt.messages(question=question.question, sentence=item.span.text))
            if item.pmid != question.pmid:
                kind = "other abstract"
            elif overlaps_long_answer(item.span.text, conclusions[question.pmid]):
                kind = "own conclusions"
            else:
                kind = "own other"
            judged[kind].append(-1.0 if p is None else p)
    seconds = time.perf_counter() - start
    print(f"{args.n} TRAIN questions, top {agent.config.judge_top} evidence sentences each, {seconds:.0f} s")
    print(f"veto below P(relevant) {agent.config.judge_veto}; undetermined judgements count as kept")
    for kind, ps in judged.items():
        vetoed = sum(0 <= p < agent.config.judge_veto for p in ps)
        mean = sum(p for p in ps if p >= 0) / max(sum(p >= 0 for p in ps), 1)
        print(
            f"  {kind:16} {len(ps):4} sentences, vetoed {vetoed:3} ({vetoed / max(len(ps), 1):.3f}), mean P {mean:.2f}"
        )
    own = [p for p in judged["own conclusions"] if p >= 0]
    other = [p for p in judged["other abstract"] if p >= 0]
    if own and other:
        auc = roc_auc_score([1] * len(own) + [0] * len(other), own + other)
        print(f"AUC of P(relevant), own conclusions vs other abstracts: {auc:.3f} (0.5 = chance)")


if __name__ == "__main__":
    main()
