"""Which verdict prompt lets the default LLM read PubMedQA findings best (issue 12)? Chosen on TRAIN only.

Rows: the shared PubMedQA split's 300 TRAIN questions (seed 13, 60/40 by question), each with its source
abstract's top three answer-bearing sentences in reading order (`verdict.training_rows`, default index).
For each prompt variant, the configured LLM's first-token mass on yes/no/maybe (one 1-token call per question,
saved under --out so an interrupted run resumes), then:
- the LLM alone (its most likely word): accuracy, macro-F1, confusion (rows gold yes/no/maybe);
- 5-fold CV score on train (mean of accuracy and macro-F1) of the shipped head recipe (`verdict.fit_with_cv`)
  over the cues + the LLM's mass, and over the LLM's mass alone.
Variants:
- zero: the earlier prompt (one-line system, no examples);
- instr: a system prompt that says when to answer yes, no and maybe, no examples;
- few: the earlier system prompt + the seven worked examples of `agent/prompts/verdict.txt`;
- shipped: `agent/prompts/verdict.txt` (instructions + the seven examples);
- shipped-no-findings: the shipped prompt with "N/A" as findings (a content-free baseline, Zhao et al. 2021).
No held-out question is read here; `biocite train verdict --llm` measures the chosen prompt held out.

    python bench/verdict_prompt.py [--variants zero,instr,few,shipped] [--out /tmp/verdict_prompt]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import json  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.metrics import accuracy_score, f1_score  # noqa: E402

from biocite.agent import verdict as V  # noqa: E402
from biocite.agent.evidence import VectorCache  # noqa: E402
from biocite.agent.findings import load_findings  # noqa: E402
from biocite.agent.prompting import Prompt, load_prompt  # noqa: E402
from biocite.index.build import open_index  # noqa: E402
from biocite.llm import answer_mass, make_chat_model  # noqa: E402
from biocite.pubmedqa import load_questions, split_questions  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

warnings.filterwarnings("ignore", message="The least populated class")
OLD_SYSTEM = (
    "You answer biomedical research questions from the given study findings with one word: yes, no, or maybe."
)


def variants() -> dict[str, tuple[Prompt, bool]]:
    """name -> (prompt, whether the findings are blanked)."""
    shipped = load_prompt("verdict")
    return {
        "zero": (Prompt("zero", OLD_SYSTEM, shipped.user), False),
        "instr": (Prompt("instr", shipped.system, shipped.user), False),
        "few": (Prompt("few", OLD_SYSTEM, shipped.user, shipped.examples), False),
        "shipped": (shipped, False),
        "shipped-no-findings": (shipped, True),
    }


def masses(chat: Any, prompt: Prompt, blank: bool, rows: list[V.TrainingRow], path: Path) -> dict[str, Any]:
    done: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    for i, row in enumerate(rows):
        if row.pmid not in done:
            evidence = "N/A" if blank else " ".join(row.reading_order)
            messages = prompt.messages(evidence=evidence, question=row.question)
            done[row.pmid] = answer_mass(chat, messages, V.LLM_WORDS)
        if i % 10 == 9:
            path.write_text(json.dumps(done))
    path.write_text(json.dumps(done))
    return done


def cv(x: np.ndarray, y: np.ndarray) -> float:
    return V.best_cv_score(V.fit_with_cv(x, y)[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variants", default="zero,instr,few,shipped")
    parser.add_argument("--out", type=Path, default=Path("/tmp/verdict_prompt"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    settings = load_settings()
    index = open_index(settings)
    cache = VectorCache(index.embedder, max_items=200_000)
    findings = load_findings(settings, index.embedder, cache, index.docs)
    train, _ = split_questions(load_questions())
    rows = V.training_rows([q.pmid for q in train], cache, findings, index.docs)
    chat = make_chat_model(settings)
    x_cues, y = V.feature_matrix(rows)
    print(f"{len(rows)} TRAIN questions; cues alone CV {cv(x_cues, y):.3f}")
    known = variants()
    for name in args.variants.split(","):
        prompt, blank = known[name]
        found = masses(chat, prompt, blank, rows, args.out / f"{name}.json")
        llm = np.vstack([V.llm_features(found[r.pmid]) for r in rows])
        argmax = llm.argmax(axis=1)
        confusion = [[int(((y == a) & (argmax == b)).sum()) for b in range(3)] for a in range(3)]
        print(
            f"{name:20s} LLM alone accuracy {accuracy_score(y, argmax):.3f}, macro-F1 "
            f"{f1_score(y, argmax, average='macro'):.3f}, confusion {confusion}; CV cues + LLM "
            f"{cv(np.hstack([x_cues, llm]), y):.3f}, LLM alone {cv(llm, y):.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
