"""How often the in-passing rule fires, and what it drops (issue 12, item 2: never substitute another entity).

An abstract that has a title and names a key concept or the subject only in passing (not in its title or MeSH
headings, in at most one sentence) gives only its evidence sentences that name it (`agent/coverage.py` `in_passing`): a
raloxifene trial "compared with tamoxifen" once no longer answers a tamoxifen question with raloxifene
results. No label says which dropped sentence was on the asked entity, so this bench asks, in extractive
mode, the expert questions (K-QA, BioGen 2024/2025; no bar was fitted on them), the held-out PubMedQA
questions and a few clinicians' questions, prints every sentence the rule dropped, to be read, and re-asks
the questions it fired on with the rule off to count the answers it changed (answered -> not covered or
abstained is a possible false drop; a changed citation list is the rule working or a false drop, read).

    python bench/in_passing.py [--pubmedqa-n 200]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from unittest import mock

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).parent))

from agent_concepts import expert_questions  # noqa: E402
from agent_expert_roles import outcome  # noqa: E402

from biocite.agent.graph import Agent  # noqa: E402
from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.pubmedqa import load_questions, split_questions  # noqa: E402
from biocite.records import Evidence  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

CLINICIANS = [
    "Does tamoxifen increase the risk of endometrial cancer?",
    "Does raloxifene increase the risk of venous thromboembolism?",
    "Do statins cause muscle pain?",
    "Is metformin associated with lactic acidosis?",
    "Does aspirin prevent myocardial infarction in women?",
    "Does warfarin prevent stroke in atrial fibrillation?",
    "Do beta blockers reduce mortality after myocardial infarction?",
    "Does exercise improve depression symptoms?",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pubmedqa-n", type=int, default=200, help="held-out PubMedQA questions asked")
    args = parser.parse_args()
    settings = load_settings(None, [])
    agent = Agent(settings, retriever=open_retriever(settings))
    _, held_out = split_questions(load_questions())
    questions = CLINICIANS + expert_questions() + [q.question for q in held_out[: args.pubmedqa_n]]
    fired: dict[str, list[str]] = {}
    rule = Agent._naming_in_passing
    current: list[str] = [""]

    def watched(evidence: list[Evidence], *rest: object) -> tuple[list[Evidence], dict[str, list[str]]]:
        kept, by_pmid = rule(evidence, *rest)  # type: ignore[arg-type]
        dropped = [e for e in evidence if e not in kept]
        if dropped:
            fired.setdefault(current[0], []).extend(f"{e.pmid}: {e.span.text[:110]}" for e in dropped)
        return kept, by_pmid

    start = time.perf_counter()
    answers = {}
    with mock.patch.object(Agent, "_naming_in_passing", staticmethod(watched)):
        for question in questions:
            current[0] = question
            answers[question] = agent.ask(question, mode="extractive")
    print(f"{len(questions)} questions ({len(CLINICIANS)} clinicians', {len(expert_questions())} expert, "
          f"{min(args.pubmedqa_n, len(held_out))} held-out PubMedQA) in {time.perf_counter() - start:.0f} s; "
          f"the rule dropped evidence for {len(fired)}")  # fmt: skip
    changed = 0
    with mock.patch.object(Agent, "_naming_in_passing", staticmethod(lambda evidence, *_: (evidence, {}))):
        for question, dropped in fired.items():
            on, off = answers[question], agent.ask(question, mode="extractive")
            cited_on, cited_off = on.cited_pmids, off.cited_pmids
            changed += outcome(on) != outcome(off)
            print(f"\n{' '.join(question.split())[:100]!r}\n  on:  {outcome(on)}, cites {cited_on}")
            print(f"  off: {outcome(off)}, cites {cited_off}")
            for line in dropped:
                print(f"  dropped {line}")
    print(f"\nthe rule changed the outcome (answered / not covered / abstained) of {changed} of {len(fired)}")


if __name__ == "__main__":
    main()
