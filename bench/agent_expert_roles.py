"""What the subject and setting checks (agent/coverage.py roles) do to the expert questions: K-QA patients'
questions and the BioGen 2024/2025 topics, which no PubMedQA bar was fitted on (issue 12, item 2).

A patient's question is written as spoken ("How many pills of ibuprofen can I take?"), and the first chunk
after its opening word is not always the entity asked about ("many pills"). When such a chunk is a required
concept and no evidence has its rarest word, the answer says "not covered: many pills" for a question the
evidence may well answer. No label says which entity a patient asked about, so this bench lists, for every
expert question with a subject or setting concept, the extractive answer with the roles on (as shipped) and
off (`agent.max_subject_df=0`, `agent.max_setting_df=0`), and counts the questions whose answer the roles
changed: from answered to "not covered" or abstained. Those are read: a role concept that is not an entity
("many pills", "in 2 days") is a defect; one the corpus does not cover ("Mounjaro") is the check working.

    python bench/agent_expert_roles.py
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).parent))

from agent_concepts import expert_questions  # noqa: E402

from biocite.agent.coverage import DocumentFrequencies, key_concepts  # noqa: E402
from biocite.agent.graph import Agent  # noqa: E402
from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.records import Answer  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

ROLES = ("subject", "setting")


def outcome(answer: Answer) -> str:
    """answered, not covered (with the concepts) or abstained (with a missing concept when that was why)."""
    if answer.abstained:
        missing = re.search(r"no indexed abstract mentions [^.;)]*", answer.abstain_reason or "")
        return f"abstained: {missing.group(0)}" if missing else "abstained: not enough evidence"
    if answer.not_covered:
        return f"not covered: {answer.not_covered}"
    return "answered"


def role_concepts(question: str, df: DocumentFrequencies, agent: Agent) -> list[str]:
    config = agent.config
    concepts = key_concepts(
        question,
        df,
        config.max_concept_df,
        config.max_outcome_df,
        config.max_setting_df,
        config.max_subject_df,
    )
    return [c.described() for c in concepts if c.role in ROLES]


def main() -> None:
    shipped = load_settings(None, [])
    off = load_settings(None, ["agent.max_subject_df=0", "agent.max_setting_df=0"])
    retriever = open_retriever(shipped)
    agent, agent_off = Agent(shipped, retriever=retriever), Agent(off, retriever=retriever)
    questions = expert_questions()
    df = agent.doc_freqs
    assert df is not None, "the index has no token store"
    with_roles = [(q, r) for q in questions if (r := role_concepts(q, df, agent))]
    print(f"expert questions: {len(questions)}; with a subject or setting concept: {len(with_roles)}")
    start = time.perf_counter()
    rows = []
    for question, roles in with_roles:
        on, before = agent.ask(question, mode="extractive"), agent_off.ask(question, mode="extractive")
        text = " ".join(question.split())[:90]
        print(f"  {text!r}: {roles}\n    off: {outcome(before)}\n    on:  {outcome(on)}")
        rows.append((text, roles, outcome(on), outcome(before)))
    changed = [row for row in rows if row[2] != row[3]]
    print(f"\n{len(with_roles)} questions asked twice in {time.perf_counter() - start:.0f} s")
    for label, column in (("off", 3), ("on", 2)):
        tally = Counter(row[column].split(":")[0] for row in rows)
        print(f"  roles {label}: {dict(sorted(tally.items()))}")
    print(f"the roles changed the outcome of {len(changed)} of {len(with_roles)} (to be read):")
    for text, roles, on, before in changed:
        print(f"  {text!r}: {roles}\n    off: {before}\n    on:  {on}")


if __name__ == "__main__":
    main()
