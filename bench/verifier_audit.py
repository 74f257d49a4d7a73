"""The agent's verifier, audited (issue 13): generated answers to HELD-OUT questions, each kept sentence
judged again by the support model against its cited abstracts in full (the verifier saw only the evidence
sentences), and by the LLM's P(yes) on the agent's support prompt over the cited evidence sentences.

Input: the generate-mode records of bench/agent_answers.py (`--records-out`): answers to the held-out part
of the PubMedQA development questions (seed-13 split by question, never trained on). Bottom-line sentences
are left out (they state the verdict model's conclusion, not a claim taken from the evidence).

Prints: sentences audited; the share the support model labels Supports against the full cited abstract
(best citation); the share with LLM P(yes) >= 0.5; how often the two disagree.

    python bench/verifier_audit.py bench/agent_answers_generate_run.json [--n 30]
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

from biocite.agent.prompting import load_prompt  # noqa: E402
from biocite.index.hybrid import open_retriever  # noqa: E402
from biocite.llm import make_chat_model, yes_probability  # noqa: E402
from biocite.records import Answer  # noqa: E402
from biocite.settings import load_settings  # noqa: E402
from biocite.support import SupportModel  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("records", type=Path)
    parser.add_argument("--n", type=int, default=30, help="answers (non-abstained) to audit")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args()
    settings = load_settings(None, args.overrides)
    docs = open_retriever(settings).documents
    support = SupportModel.load(settings)
    chat = make_chat_model(settings)
    prompt = load_prompt("support")
    records = json.loads(args.records.read_text())["records"]
    answers = [Answer.model_validate(r["answer"]) for r in records]
    answers = [a for a in answers if not a.abstained][: args.n]
    rows = []
    for answer in answers:
        for sentence in answer.sentences:
            if sentence.kind == "bottom_line" or not sentence.citations:
                continue
            abstracts = [docs.get(c.pmid) for c in sentence.citations]
            passages = [d.abstract for d in abstracts if d is not None]
            verdicts = support.check_many([(sentence.text, p) for p in passages])
            by_model = any(v.label == "supports" for v in verdicts)
            quoted = " ".join(e.span.text for c in sentence.citations for e in c.evidence)
            p_yes = yes_probability(chat, prompt.messages(evidence=quoted, statement=sentence.text))
            by_llm = p_yes is not None and p_yes >= 0.5
            rows.append((by_model, by_llm))
            print(f"  model {'S' if by_model else '-'} llm {p_yes if p_yes is None else round(p_yes, 2)}  "
                  f"{sentence.text[:90]}", flush=True)  # fmt: skip
    n = max(len(rows), 1)
    print(f"answers audited: {len(answers)}; sentences: {len(rows)}")
    print(f"support model: Supports against the full cited abstract: {sum(m for m, _ in rows) / n:.3f}")
    print(f"LLM P(yes) >= 0.5 on the cited evidence: {sum(j for _, j in rows) / n:.3f}")
    print(f"model and LLM disagree: {sum(m != j for m, j in rows) / n:.3f}")


if __name__ == "__main__":
    sys.exit(main())
