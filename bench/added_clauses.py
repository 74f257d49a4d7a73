"""Claims that add a clause their evidence never mentions (support rule 9: `biocite.added_clauses`): what the
rule catches beyond the support model, and what it costs on claims the evidence supports.

Found in `bench/support_model.py`: held-out hard cases with one extra unsupported clause ("..., whereas the
opposite held in postmenopausal women") were judged not supports 0.625 of the time (target 0.9).

1. The rule alone (no model), firing on supported pairs: Citation-Integrity SUPPORT claims against their cited
   abstract (TRAIN, where the rule was read; DEV held out), PubMedQA conclusions against their own abstract
   without the conclusion (the shared split), and the agent's kept generated sentences against each abstract
   they cite (`bench/agent_answers_generate_run*.json`). A Citation-Integrity citing sentence often carries
   what other cited papers said ("..., and elevated blood pressure") and is labelled SUPPORT for its main
   clause, so there a firing is partly a real unsupported clause, partly a cost.
2. With the support model (each verdict once; the rule applies only where the model read supports, so the
   model's own label is the verdict's unless `added_clause` is set): extra-clause hard cases of the TRAIN
   templates on TRAIN claims and of the HELD-OUT templates on DEV claims, judged NOT supports, model alone ->
   with the rule; the unperturbed DEV SUPPORT claims judged supports (the control); Citation-Integrity DEV
   3-class macro-F1 and binary Supports F1, model alone -> with the rule.

    python bench/added_clauses.py
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import random  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from populations import generated_rows  # noqa: E402
from reversals import citint_rows, pubmedqa_rows  # noqa: E402
from sklearn.metrics import f1_score  # noqa: E402

from biocite.added_clauses import added_clause  # noqa: E402
from biocite.support import SupportModel, SupportVerdict  # noqa: E402
from biocite.support_data import citint_claims, hard_cases  # noqa: E402

Rows = list[tuple[str, list[str]]]
PER_TEMPLATE_SIDE = 80  # extra-clause hard cases judged per side (the support bench uses 40)


def fires(name: str, rows: Rows, show: int = 0) -> None:
    """How often the rule fires on the rows, and the first `show` clauses it found."""
    hits = [(c, added_clause(c, s)) for c, s in rows]
    found = [(c, h) for c, h in hits if h]
    print(f"   {name}: {len(found)}/{len(rows)} = {len(found) / max(len(rows), 1):.3f}")
    for claim, hit in found[:show]:
        print(f"      fired: ...{hit.clause!r}  ({claim[:90]}...)")


def _label(v: SupportVerdict, rule: bool) -> str:
    return v.label if rule or not v.added_clause else "supports"


def _share(values: list[bool]) -> str:
    return f"{sum(values)}/{len(values)} = {sum(values) / max(len(values), 1):.3f}"


def _three(label: str) -> str:
    return label if label in ("supports", "contradicts") else "nei"


def hard_case_rows(split: str, held_out: bool) -> Rows:
    claims, _ = citint_claims(split)
    by_id = {c.id: c for c in claims}
    cases = [h for h in hard_cases(claims, held_out=held_out, seed=14) if h.source == "hard:extra_clause"]
    cases = random.Random(14).sample(cases, min(PER_TEMPLATE_SIDE, len(cases)))
    return [(h.claim, by_id[h.group].sentences) for h in cases]


def main() -> None:
    print("1. the rule alone, firing on supported pairs")
    for split in ("train", "dev"):
        fires(f"Citation-Integrity {split} SUPPORT claims", citint_rows(split, "supports"), show=6)
    for side in ("train", "held-out"):
        fires(f"PubMedQA {side} conclusions vs their abstract", pubmedqa_rows(side), show=3)
    fires("the agent's kept generated sentences vs each cited abstract", generated_rows(), show=3)

    model = SupportModel.load()
    print("2. with the support model: model alone -> with the rule")
    for name, rows in (
        ("TRAIN templates x TRAIN claims", hard_case_rows("train", held_out=False)),
        ("HELD-OUT templates x DEV claims", hard_case_rows("dev", held_out=True)),
    ):
        verdicts = [model.check_sentences(c, s)[0] for c, s in rows]
        alone = _share([_label(v, False) != "supports" for v in verdicts])
        ruled = _share([_label(v, True) != "supports" for v in verdicts])
        print(f"   extra-clause hard cases, {name}, NOT supports: {alone} -> {ruled}")
    claims, _ = citint_claims("dev")
    verdicts = [model.check_sentences(c.claim, c.sentences)[0] for c in claims]
    gold = [_three(c.label) for c in claims]
    supported = [v for v, c in zip(verdicts, claims, strict=True) if c.label == "supports" and c.evidence]
    print(
        "   control, DEV SUPPORT claims unperturbed judged supports: "
        f"{_share([_label(v, False) == 'supports' for v in supported])} -> "
        f"{_share([_label(v, True) == 'supports' for v in supported])}"
    )
    for rule in (False, True):
        pred = [_three(_label(v, rule)) for v in verdicts]
        macro = f1_score(gold, pred, average="macro")
        binary = f1_score([g == "supports" for g in gold], [p == "supports" for p in pred])
        print(f"   Citation-Integrity DEV ({len(claims)}), rule {'on ' if rule else 'off'}: 3-class macro-F1 "
              f"{macro:.4f}, Supports F1 {binary:.4f}")  # fmt: skip


if __name__ == "__main__":
    main()
