"""How `agent.max_topic_df` was chosen: other abstracts that an answer quotes beside its lead abstract.

The coverage check keeps the abstracts covering the most key concepts, but a PubMedQA title's population or
condition ("breast lesions", "palliative lung cancer patients") is often too common a term to be a key concept,
so a held-out answer on breast-lesion biopsy quoted prostate-biopsy abstracts. The topic check
(agent/graph.py `_on_the_lead_topic`, agent/coverage.py `off_topic`) drops an evidence abstract other than the
lead one (that of the first evidence sentence) when it lacks a concept of the question at the looser bar
`agent.max_topic_df` (every role) that the lead abstract names, unless it covers a key or topic concept the
lead lacks that is as rare in the index as the rarest it lacks (`coverage.specificity`).

Labels: bench/agent_topic_labels.json, the other abstracts of 300 TRAIN extractive answers (45) and of the
200 held-out generate answers of bench/agent_answers_generate_run_1_200.json before the check (commit 9374706;
36), each read by hand as on or off the question (split by question: the PubMedQA seed-13 split). For each bar
of the grid, the share of off-topic abstracts dropped and of on-topic ones dropped; the bar is the grid value with the most off-topic
minus twice the on-topic dropped on TRAIN (ties: the stricter, smaller bar), then read on the held-out labels.
0 is the check off.

With --expert, the K-QA and BioGen questions are answered in extractive mode with the configured bar, and the
other abstracts dropped are printed for reading: these questions have no labels, so this is the check's cost
where many abstracts may answer, not a figure.

    python bench/agent_topic.py [--expert] [--set agent.max_topic_df=...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from agent_concepts import expert_questions  # noqa: E402

from biocite.agent.coverage import DocumentTerms, key_concepts, off_topic  # noqa: E402
from biocite.agent.graph import Agent  # noqa: E402
from biocite.index.build import open_index  # noqa: E402
from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

LABELS = Path(__file__).with_name("agent_topic_labels.json")
GRID = (0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2)
ON_TOPIC_COST = 2  # an on-topic abstract dropped counts twice an off-topic one kept


def dropped(agent: Agent, rows: list[dict], terms: dict[str, DocumentTerms], bar: float) -> list[bool]:
    """For each labelled abstract, whether the topic check at this bar drops it beside its lead abstract."""
    out = []
    for row in rows:
        topics = key_concepts(row["question"], agent.doc_freqs, bar, bar, bar, bar) if bar > 0 else []
        keys = agent.question_concepts(row["question"])
        out.append(bool(off_topic(topics, keys, terms[row["lead"]], terms[row["pmid"]], agent.doc_freqs)))
    return out


def counts(rows: list[dict], drops: list[bool]) -> tuple[int, int, int, int]:
    """(off-topic dropped, off-topic, on-topic dropped, on-topic)."""
    off = [d for r, d in zip(rows, drops, strict=True) if not r["on_topic"]]
    on = [d for r, d in zip(rows, drops, strict=True) if r["on_topic"]]
    return sum(off), len(off), sum(on), len(on)


def expert_cost(agent: Agent) -> None:
    """The other abstracts that extractive answers to the expert questions cite, and those the check dropped."""
    kept = dropped_notes = answered = 0
    for question in expert_questions():
        answer = agent.ask(question, mode="extractive")
        if answer.abstained:
            continue
        answered += 1
        cited = list(dict.fromkeys(c.pmid for s in answer.sentences for c in s.citations))
        kept += max(len(cited) - 1, 0)
        for note in answer.trace.notes:
            if "which the lead evidence" in note:
                dropped_notes += 1
                print(f"  {question[:70]}\n    {note}")
    print(f"expert questions answered: {answered}; other abstracts cited {kept}, dropped {dropped_notes}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--expert", action="store_true", help="also answer the expert questions")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args()
    settings = load_settings(None, args.overrides)
    agent = Agent(settings, retriever=open_retriever(settings))
    labels = json.loads(LABELS.read_text())
    pmids = {p for part in ("train", "held_out") for r in labels[part] for p in (r["lead"], r["pmid"])}
    docs = open_index(settings).docs.get_many(sorted(pmids))
    terms = {p: DocumentTerms.of(d) for p, d in docs.items()}
    print(
        "bar     TRAIN off-topic dropped  on-topic dropped  score | held-out off-topic dropped  on-topic dropped"
    )
    scores = {}
    for bar in GRID:
        t = counts(labels["train"], dropped(agent, labels["train"], terms, bar))
        h = counts(labels["held_out"], dropped(agent, labels["held_out"], terms, bar))
        scores[bar] = t[0] - ON_TOPIC_COST * t[2]
        print(
            f"{bar:<7} {t[0]:>3}/{t[1]:<3} ({t[0] / t[1]:.3f})    {t[2]:>2}/{t[3]} ({t[2] / t[3]:.3f})   "
            f"{scores[bar]:>4}  | {h[0]:>3}/{h[1]:<3} ({h[0] / h[1]:.3f})          {h[2]:>2}/{h[3]} ({h[2] / h[3]:.3f})"
        )
    best = max(GRID, key=lambda b: (scores[b], -b))
    print(f"fitted on TRAIN: {best}; configured agent.max_topic_df: {settings.agent.max_topic_df}")
    if args.expert:
        expert_cost(agent)


if __name__ == "__main__":
    sys.exit(main())
