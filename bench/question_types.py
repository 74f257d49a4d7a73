"""Question types (issue 12): how `agent.verdict.question_type` reads PubMedQA titles and patients' questions.

The type decides whether an answer opens with a yes/no bottom line. Figures:
- PubMedQA development questions (500; every one is answered yes / no / maybe, so every one is a yes/no
  question): the share typed yes/no. This is the only labelled figure here.
- the expert questions (K-QA's patients' questions and the BioGen 2024/2025 topics; no type labels exist):
  the count per type and each question with its type, to be read. A patient's question opens with fillers
  ("Also what is ...", "Ok, how often?"), a context sentence ("I am 33 with abdominal pain, what could it
  be?") or a request ("Can you suggest something for ...?"); before the clause rule (2026-11-27) 31 of them
  were typed yes/no or otherwise wrongly and got a yes/no bottom line.

    python bench/question_types.py
"""

from __future__ import annotations

import os
from collections import Counter

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from agent_concepts import expert_questions  # noqa: E402

from biocite.agent.verdict import question_type  # noqa: E402
from biocite.pubmedqa import load_questions  # noqa: E402


def main() -> None:
    pubmedqa = [q.question for q in load_questions()]
    yes_no = sum(question_type(q) == "yes/no" for q in pubmedqa)
    print(
        f"PubMedQA development questions typed yes/no: {yes_no} of {len(pubmedqa)} ({yes_no / len(pubmedqa):.3f})"
    )
    experts = expert_questions()
    types = [question_type(q) for q in experts]
    print(f"expert questions (K-QA, BioGen 2024/2025): {len(experts)}; {dict(Counter(types).most_common())}")
    for kind, question in sorted(zip(types, experts, strict=True)):
        print(f"  {kind:8s} {question[:110]}")


if __name__ == "__main__":
    main()
