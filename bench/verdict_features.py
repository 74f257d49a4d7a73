"""Do more features lift the yes/no/maybe verdict head (issue 12: accuracy >= 0.75, macro-F1 >= 0.60)? A
negative result, kept so that it is not tried again blind.

Rows: the shared PubMedQA split (seed 13, 60/40 by question: 300 train, 200 held out); each row is the
question and its source abstract's top answer-bearing sentences, as the agent ranks them
(`verdict.training_rows`, the default index). Heads: the shipped recipe (`verdict.fit_with_cv`: C and class
weighting by 5-fold CV on train, mean of accuracy and macro-F1) over
- cues: the shipped regex cue features (the extractive head);
- support: the support model's log-probabilities (Supports / Contradicts / Neutral / Not relevant) for the
  question turned into a claim (leading auxiliary and "?" dropped) against the top sentence, their
  P(answer-bearing)-weighted mean and their maximum. The support model was trained on TRAIN PubMedQA
  conclusions only (`support_data.pubmedqa_pairs`), so held-out questions are unseen by it;
- direction: increase / decrease / negation words of the question and the evidence, their agreement, and
  how many question words a negated clause of the top sentence holds;
- with the shipped qwen1.5b answer-word masses (train questions only): CV on train, no held-out figure.
And two readings of the abstract (which sentences the cue head reads; the rows are rebuilt, the cues kept):
- no metadata: the abstract's funding, registration and keyword lines left out (the agent's reading since
  2026-12-02: NEJM's "(Funded by ...)" had led the README demo's bottom line);
- no side effects: also left out, for a question that asks nothing about harms, each sentence on side effects
  (adverse, toxic, tolerated, safety, complications) that shares no word with the question outside its subject
  ("No new late toxic effects were noted." had made "Does nivolumab plus ipilimumab improve overall survival?"
  lean "no").
A feature set is worth shipping only if its CV score on train beats the cues'; held-out figures are printed
to show what that rule would have cost.

    python bench/verdict_features.py
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import re  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score  # noqa: E402

from biocite.agent import verdict as V  # noqa: E402
from biocite.agent.coverage import asked_subject  # noqa: E402
from biocite.agent.evidence import VectorCache, content_terms  # noqa: E402
from biocite.agent.findings import load_findings  # noqa: E402
from biocite.index.build import open_index  # noqa: E402
from biocite.pubmedqa import load_questions, read_items, split_questions  # noqa: E402
from biocite.sentences import is_metadata_sentence  # noqa: E402
from biocite.settings import load_settings  # noqa: E402
from biocite.support import SupportModel  # noqa: E402

LEADING_AUX = re.compile(
    r"^(?:does|do|did|is|are|was|were|can|could|should|will|would|has|have|had|may|might)\s+", re.I
)
UP = re.compile(
    r"\b(?:increas\w*|higher|improv\w*|rais\w*|enhanc\w*|promot\w*|more|greater|elevat\w*|better|"
    r"benefit\w*|effective|associated|predict\w*)\b",
    re.I,
)
DOWN = re.compile(
    r"\b(?:reduc\w*|decreas\w*|lower\w*|prevent\w*|protect\w*|inhibit\w*|less|fewer|declin\w*|"
    r"attenuat\w*|worse)\b",
    re.I,
)
NEGATION = re.compile(r"\b(?:no|not|without|neither|nor|failed|unchanged|similar|comparable)\b", re.I)
SIDE_EFFECTS = re.compile(
    r"\b(?:adverse|toxic\w*|side[- ]effects?|tolera\w+|safety|safe(?:ly)?|complications?)\b", re.I
)
WORD = re.compile(r"[a-z]{4,}")
Rows = Sequence[V.TrainingRow]


def as_claim(question: str) -> str:
    return LEADING_AUX.sub("", question.strip()).rstrip("?").strip()


def _weights(row: V.TrainingRow) -> np.ndarray:
    w = np.asarray(row.weights, dtype=np.float64)
    return w / w.sum()


def support_features(model: SupportModel, rows: Rows) -> np.ndarray:
    probs = model.head_probs([as_claim(r.question) for r in rows], [r.texts for r in rows])
    out = [np.hstack([p[0], _weights(r) @ p, p.max(axis=0)]) for r, p in zip(rows, probs, strict=True)]
    return np.log(np.vstack(out) + 1e-4)


def _count(pattern: re.Pattern[str], text: str) -> float:
    return min(len(pattern.findall(text)), 3) / 3


def _negated_overlap(question: str, sentence: str) -> float:
    asked = set(WORD.findall(question.lower()))
    clauses = re.split(r"[,;:]| but | however | whereas ", sentence.lower())
    shares = [len(asked & set(WORD.findall(c))) / max(len(asked), 1) for c in clauses if NEGATION.search(c)]
    return max(shares, default=0.0)


def direction_features(rows: Rows) -> np.ndarray:
    out = []
    for r in rows:
        up, down = float(bool(UP.search(r.question))), float(bool(DOWN.search(r.question)))
        e = np.array([[_count(UP, t), _count(DOWN, t), _count(NEGATION, t)] for t in r.texts])
        top = e[0]
        agreement = [up * top[0], up * top[1], down * top[0], down * top[1]]
        out.append(
            np.hstack(
                [[up, down], top, _weights(r) @ e, agreement, [_negated_overlap(r.question, r.texts[0])]]
            )
        )
    return np.vstack(out)


def _about_side_effects_only(question: str, text: str) -> bool:
    if SIDE_EFFECTS.search(question) or V.asks_about_safety(question) or not SIDE_EFFECTS.search(text):
        return False
    subject = content_terms(asked_subject(question) or "")
    return not ((content_terms(question) - subject) & content_terms(text))


def reading_rows(
    pmids: Sequence[str], cache: VectorCache, findings: Any, store: Any, side: bool
) -> list[V.TrainingRow]:
    """`V.training_rows` with the abstract's metadata (and, with `side`, its side-effect sentences) left out."""
    items = {item.pmid: item for item in read_items()}
    rows = []
    for pmid in pmids:
        doc, sentences = store.get(pmid), store.sentences(pmid)
        if not sentences:
            continue
        question = items[pmid].question
        kept = [s for s in sentences if not is_metadata_sentence(doc, s)]
        if side:
            kept = [s for s in kept if not _about_side_effects_only(question, s.text)] or kept
        order, weights = V.top_evidence(findings.score(question, kept, [len(kept)] * len(kept), cache))
        top = [(pmid, kept[i].index, kept[i].text) for i in order]
        label = V.PUBMEDQA_TO_VERDICT[items[pmid].final_decision]
        rows.append(V.TrainingRow(pmid=pmid, question=question, texts=[t for *_, t in top], weights=weights,
                                  reading_order=V.reading_order(top), label=label))  # fmt: skip
    return rows


def report(
    name: str, train: np.ndarray, held: np.ndarray | None, y_train: np.ndarray, y_held: np.ndarray
) -> None:
    model, choice = V.fit_with_cv(train, y_train)
    line = (
        f"{name:26} CV {max(choice['cv_scores'].values()):.3f}  (C={choice['C']}, {choice['class_weight']})"
    )
    if held is not None:
        predicted = model.predict_proba(held).argmax(axis=1)
        line += (
            f"  held-out accuracy {accuracy_score(y_held, predicted):.3f}, "
            f"macro-F1 {f1_score(y_held, predicted, average='macro'):.3f}, "
            f"confusion (rows gold {'/'.join(V.LABELS)}) {confusion_matrix(y_held, predicted).tolist()}"
        )
    print(line)


def main() -> None:
    settings = load_settings(None, [])
    index = open_index(settings)
    cache = VectorCache(index.embedder, max_items=200_000)
    findings = load_findings(settings, index.embedder, cache, index.docs)
    if findings is None:
        raise SystemExit("no answer-bearing model for the default index (see `biocite train verdict`)")
    train_q, held_q = split_questions(load_questions())
    rows = V.training_rows([q.pmid for q in train_q], cache, findings, index.docs)
    held = V.training_rows([q.pmid for q in held_q], cache, findings, index.docs)
    print(f"rows: {len(rows)} train / {len(held)} held-out")
    (x_tr, y_tr), (x_he, y_he) = V.feature_matrix(rows), V.feature_matrix(held)
    support = SupportModel.load(settings)
    extra: dict[str, Callable[[Rows], np.ndarray]] = {
        "support": lambda rs: support_features(support, rs),
        "direction": direction_features,
    }
    built = {name: (make(rows), make(held)) for name, make in extra.items()}
    report("cues (shipped)", x_tr, x_he, y_tr, y_he)
    for name, side in (("no metadata", False), ("no side effects", True)):
        read_tr, read_he = (
            reading_rows([q.pmid for q in qs], cache, findings, index.docs, side) for qs in (train_q, held_q)
        )
        changed = sum(a.texts != b.texts for a, b in zip([*read_tr, *read_he], [*rows, *held], strict=True))
        (r_tr, ry_tr), (r_he, ry_he) = V.feature_matrix(read_tr), V.feature_matrix(read_he)
        report(f"cues, {name} ({changed} read otherwise)", r_tr, r_he, ry_tr, ry_he)
    for name, (f_tr, f_he) in built.items():
        report(f"{name} alone", f_tr, f_he, y_tr, y_he)
        report(f"cues + {name}", np.hstack([x_tr, f_tr]), np.hstack([x_he, f_he]), y_tr, y_he)
    masses = V.LLMFeatures.model_validate_json(V.shipped_features_path("qwen1.5b").read_text()).rows
    with_llm = [i for i, r in enumerate(rows) if r.pmid in masses]
    x_llm, y_llm = V.feature_matrix([rows[i] for i in with_llm], masses)
    report("cues + qwen1.5b (train)", x_llm, None, y_llm, y_he)
    for name, (f_tr, _) in built.items():
        report(f"cues + qwen1.5b + {name}", np.hstack([x_llm, f_tr[with_llm]]), None, y_llm, y_he)


if __name__ == "__main__":
    main()
