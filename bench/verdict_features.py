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
- significance: the statistics the sentences report, read as numbers: p-values at or under 0.05 and over it,
  confidence intervals that exclude the null (1 after a ratio, 0 after a difference) and that span it; of the
  top sentence, weighted and maximum, and which side outnumbers the other. The same counts over the whole
  source abstract ("sig abstract");
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
P_VALUE = re.compile(
    r"\bp\s*(?:value\s*)?(<=|>=|[<=>≤≥])\s*(0?\.\d+|[01](?:\.\d+)?)(?:\s*[x×]\s*10\s*[-−]\s*(\d+))?", re.I
)
INTERVAL = re.compile(
    r"(?:CI|confidence interval)\s*[,:;=]?\s*\[?\(?\s*(-?\d+(?:\.\d+)?)\s*(?:to|-|–|,)\s*(-?\d+(?:\.\d+)?)",
    re.I,
)
RATIO = re.compile(r"\b(?:OR|RR|HR|IRR|aOR|aHR|ratio|odds|hazard|relative risk)\b", re.I)
DIFFERENCE = re.compile(r"\b(?:difference|change|MD|WMD|SMD|mean|beta|β|coefficient)\b", re.I)
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


def significance_counts(text: str) -> list[float]:
    """[significant p, non-significant p, intervals excluding the null, intervals spanning it], each /3, capped."""
    sig = nonsig = excludes = spans = 0
    for m in P_VALUE.finditer(text):
        value = float(m.group(2)) * (10 ** -int(m.group(3)) if m.group(3) else 1)
        if m.group(1) in ("<", "≤", "<=", "=") and value <= 0.05:
            sig += 1
        elif m.group(1) in ("=", ">", "≥", ">=") and value > 0.05:
            nonsig += 1
    for m in INTERVAL.finditer(text):
        low, high = sorted((float(m.group(1)), float(m.group(2))))
        before = text[max(0, m.start() - 80) : m.start()]
        null = 1.0 if RATIO.search(before) else 0.0 if DIFFERENCE.search(before) or low < 0 else 1.0
        spans, excludes = (spans + 1, excludes) if low <= null <= high else (spans, excludes + 1)
    return [min(x, 3) / 3 for x in (sig, nonsig, excludes, spans)]


def significance_features(rows: Rows) -> np.ndarray:
    out = []
    for r in rows:
        e = np.array([significance_counts(t) for t in r.texts])
        total = e.sum(axis=0)
        for_effect, against = total[0] + total[2], total[1] + total[3]
        out.append(
            np.hstack([e[0], _weights(r) @ e, e.max(axis=0), [for_effect > against, against > for_effect]])
        )
    return np.vstack(out)


def abstract_significance(rows: Rows, store: Any) -> np.ndarray:
    counts = [[significance_counts(s.text) for s in store.sentences(r.pmid)] for r in rows]
    return np.vstack([np.minimum(np.sum(c, axis=0), 1.0) for c in counts])


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
        "significance": significance_features,
        "sig abstract": lambda rs: abstract_significance(rs, index.docs),
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
