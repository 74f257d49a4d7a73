"""Train the issue-12 models (answer-bearing sentences, verdict) and measure them on the held-out questions.

Split: the PubMedQA development questions by question, seed 13, 60 % train / 40 % held out
(`biocite.pubmedqa.split_questions`, the reranker's split). Training uses the train part (plus the
index's structured abstracts for the findings model); the figures printed are on the held-out part, with
the source abstract given (no retrieval), against simple references measured in the same run:
- findings model: share of held-out questions whose top-scored sentence of the source abstract is in the
  long answer (the conclusions), vs. the top sentence by question cosine (the old signal) and vs. the
  abstract's last sentence;
- verdict model: accuracy and macro-F1 over yes/no/maybe on the held-out source abstracts, vs. the
  majority class; C (and class weighting) of each logistic regression chosen by 5-fold cross-validation
  on the TRAIN part;
- with --llm: `biocite train verdict --llm` (agent/verdict_training.py): the configured LLM's answer-word
  mass on the verdict prompt for train and held-out questions, saved (resumably) under agent.models_dir as
  verdict_llm_<model>.json (copied to data/pubmedqa/ to ship it), the stacked verdict model fitted on the
  train part and measured on the held-out part, beside the LLM's zero-shot answer (argmax).
- with --support (an experiment; nothing ships from it): the support model's probabilities for the question
  read as a claim (`as_claim`) against the top evidence sentences, as extra verdict features; fitted and
  measured the same way (cues alone, then cues + support), and its zero-shot confusion printed.
- with --words (an experiment; nothing ships from it): the tf-idf of the evidence's negation-scoped words and
  word pairs ("did not reduce" -> "not_reduce"; a question word under a negation also gives "qneg"), over a
  vocabulary fitted on the train questions' evidence (min_df 5), plus counts of question words said plainly
  or under a negation, beside the cues; fitted and measured the same way.

Saves the artifacts where the agent reads them (agent.models_dir, default <home>/models/agent/).

    python bench/agent_train_answers.py [--set agent.models_dir=/tmp/agent-models] [--llm]
                                        [--support] [--words]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
from sklearn.metrics import accuracy_score, f1_score  # noqa: E402

from biocite.agent import findings as F  # noqa: E402
from biocite.agent import verdict as V  # noqa: E402
from biocite.agent.evidence import VectorCache  # noqa: E402
from biocite.agent.verdict_training import train_verdict_heads  # noqa: E402
from biocite.heads import expected_calibration_error  # noqa: E402
from biocite.index.build import open_index  # noqa: E402
from biocite.pubmedqa import load_questions, split_questions  # noqa: E402
from biocite.settings import Settings, load_settings  # noqa: E402
from biocite.support import LABELS as SUPPORT_LABELS  # noqa: E402
from biocite.support import SupportModel  # noqa: E402


def report(
    name: str,
    verdict: V.VerdictModel,
    held: list[V.TrainingRow],
    masses: dict[str, dict[str, float]] | None,
    train: list[V.TrainingRow],
) -> None:
    """Accuracy and macro-F1 on the held-out source abstracts, vs. the train majority class."""
    x, y = V.feature_matrix(held, masses)
    probs = verdict.probabilities(x)
    predicted = probs.argmax(axis=1)
    uncalibrated = verdict.linear.predict_proba(x)
    _, y_train = V.feature_matrix(train)
    majority = np.full_like(y, np.bincount(y_train).argmax())
    print(
        f"{name} on held-out source abstracts ({len(y)}): accuracy {accuracy_score(y, predicted):.3f}, "
        f"macro-F1 {f1_score(y, predicted, average='macro'):.3f}; majority class "
        f"{accuracy_score(y, majority):.3f} / {f1_score(y, majority, average='macro'):.3f}; calibration error "
        f"(top-label ECE, 10 bins) {expected_calibration_error(probs, y):.3f} at temperature "
        f"{verdict.meta['temperature']} vs {expected_calibration_error(uncalibrated, y):.3f} at 1",
        flush=True,
    )


_MODAL = {"can", "could", "should", "would", "will", "may", "might", "must", "shall"}
_LEAD_AUX = re.compile(rf"^(.*?:\s*)?({V._AUX})\s+(.*)$", re.IGNORECASE)


def as_claim(question: str) -> str:
    """A yes/no question read as the claim it asks about: the leading auxiliary dropped ("Does X reduce Y?"
    -> "X reduce Y"), a modal kept before "be" or after "we", "there is" restored, and a title's "it"
    replaced by what precedes the colon ("Tamoxifen: does it ..." -> "Tamoxifen ...")."""
    text = question.strip().rstrip("?").strip()
    m = _LEAD_AUX.match(text)
    if not m:
        return text
    prefix, aux, rest = m.group(1) or "", m.group(2).lower(), m.group(3)
    if re.match(r"there\b", rest, re.IGNORECASE):
        rest = f"there {aux} {rest[6:].lstrip()}"
    elif aux in _MODAL and " be " in f" {rest} ":
        rest = re.sub(r"(^|\s)be\s", rf"\1{aux} be ", rest, count=1)
    elif aux in _MODAL and re.match(r"we\s", rest, re.IGNORECASE):
        rest = f"we {aux} {rest[3:]}"
    if prefix and re.match(r"(?:it|they)\b", rest, re.IGNORECASE):
        return prefix.rstrip(": ") + rest[rest.index(" ") :]
    return prefix + rest if prefix else rest[0].upper() + rest[1:]


def support_features(settings: Settings, rows: list[V.TrainingRow]) -> np.ndarray:
    """log P(supports/contradicts/neutral/not relevant) of `as_claim(question)` against the top evidence
    sentences joined into one passage, as the support model's aggregator calibrates them (one row each)."""
    model = SupportModel.load(settings)
    verdicts = model.check_many([(as_claim(r.question), " ".join(r.texts)) for r in rows])
    return np.log(np.array([[v.probs[k] for k in SUPPORT_LABELS] for v in verdicts]) + 1e-4)


def support_experiment(settings: Settings, rows: list[V.TrainingRow], held: list[V.TrainingRow]) -> None:
    """Cues + support features, C and class weights by 5-fold CV on train; held-out printed once."""
    started = time.perf_counter()
    s_train, s_held = support_features(settings, rows), support_features(settings, held)
    x, y = V.feature_matrix(rows)
    xh, yh = V.feature_matrix(held)
    fitted, choice = V.fit_with_cv(np.hstack([x, s_train]), y)
    predicted = fitted.predict_proba(np.hstack([xh, s_held])).argmax(axis=1)
    print(f"verdict (cues + support, extractive) by 5-fold CV on train: C={choice['C']}, {choice['class_weight']}; "
          f"held-out ({len(yh)}): accuracy {accuracy_score(yh, predicted):.3f}, macro-F1 "
          f"{f1_score(yh, predicted, average='macro'):.3f} ({time.perf_counter() - started:.0f} s)")  # fmt: skip
    top = np.vstack([s_train, s_held]).argmax(axis=1)
    gold = np.concatenate([y, yh])
    confusion = {f"{V.LABELS[g]}->{SUPPORT_LABELS[t]}": int(((gold == g) & (top == t)).sum())
                 for g in range(len(V.LABELS)) for t in range(len(SUPPORT_LABELS))}  # fmt: skip
    print(f"  support model zero-shot, all 500 (gold verdict -> its label): "
          f"{ {k: v for k, v in confusion.items() if v} }")  # fmt: skip


_NEGATOR = re.compile(r"(?:no|not|never|neither|nor|none|without|cannot|fail\w*|unable|lack\w*|\w+n't)")
_STOPWORDS = frozenset(
    "a an the of in on for to with and or is are was were be does do did can could should would will has have "
    "had may might must there this that these those it its by at as from than vs versus what which who how "
    "whether patients patient".split()
)


def negation_scoped(text: str) -> list[str]:
    """Lower-cased words; those after a negator, up to the next punctuation mark, prefixed "not_"."""
    out: list[str] = []
    negated = False
    for token in re.findall(r"[a-z]+'?t?|[.,;:]", text.lower()):
        if token in ".,;:":
            negated = False
            continue
        out.append(f"not_{token}" if negated else token)
        negated = negated or bool(_NEGATOR.fullmatch(token))
    return out


def word_features(rows: list[V.TrainingRow], held: list[V.TrainingRow]) -> tuple[np.ndarray, np.ndarray]:
    """(train, held-out) word + alignment columns; the vocabulary is fitted on the train rows only."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    def stems(question: str) -> set[str]:
        return {w[:5] for w in re.findall(r"[a-z]+", question.lower()) if w not in _STOPWORDS and len(w) > 2}

    def document(row: V.TrainingRow) -> str:
        words, asked = negation_scoped(" ".join(row.texts)), stems(row.question)
        denied = ["qneg" for w in words if w.startswith("not_") and w[4:9] in asked]
        negated = ["questionneg"] if V._NEGATED_QUESTION.search(row.question) else []
        return " ".join(words + denied + negated)

    def alignment(row: V.TrainingRow) -> np.ndarray:
        asked, counts = stems(row.question), []
        for text in row.texts[:3] or [""]:
            words = negation_scoped(text)
            plain = sum(1 for w in words if not w.startswith("not_") and w[:5] in asked)
            denied = sum(1 for w in words if w.startswith("not_") and w[4:9] in asked)
            counts.append([min(plain, 5) / 5, min(denied, 3) / 3, float(denied > 0)])
        matrix = np.array(counts)
        return np.hstack([matrix[0], matrix.max(axis=0)])

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=5, sublinear_tf=True)
    train = vectorizer.fit_transform([document(r) for r in rows]).toarray()
    test = vectorizer.transform([document(r) for r in held]).toarray()
    return (
        np.hstack([train, np.vstack([alignment(r) for r in rows])]),
        np.hstack([test, np.vstack([alignment(r) for r in held])]),
    )


def words_experiment(rows: list[V.TrainingRow], held: list[V.TrainingRow]) -> None:
    """Cues + word features, C and class weights by 5-fold CV on train (grid down to 0.003: 755 columns)."""
    w_train, w_held = word_features(rows, held)
    x, y = V.feature_matrix(rows)
    xh, yh = V.feature_matrix(held)
    fitted, choice = V.fit_with_cv(np.hstack([x, w_train]), y, (0.003, *V.C_GRID))
    predicted = fitted.predict_proba(np.hstack([xh, w_held])).argmax(axis=1)
    print(f"verdict (cues + words, extractive; {w_train.shape[1]} word columns) by 5-fold CV on train: "
          f"C={choice['C']}, {choice['class_weight']}, CV {max(choice['cv_scores'].values())}; held-out "
          f"({len(yh)}): accuracy {accuracy_score(yh, predicted):.3f}, macro-F1 "
          f"{f1_score(yh, predicted, average='macro'):.3f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--llm", action="store_true", help="also the verdict model stacked on the local LLM")
    parser.add_argument("--support", action="store_true", help="also the support-model features experiment")
    parser.add_argument(
        "--words", action="store_true", help="also the negation-scoped word features experiment"
    )
    args = parser.parse_args()

    settings = load_settings(None, args.overrides)
    index = open_index(settings)
    cache = VectorCache(index.embedder, max_items=200_000)
    out_dir = F.agent_models_dir(settings)
    started = time.perf_counter()
    train, held_out = split_questions(load_questions())
    print(f"split: {len(train)} train / {len(held_out)} held-out questions (seed 13, 60/40)")

    # --- answer-bearing sentences
    items = F.training_abstracts({q.pmid for q in train}, index.docs)
    x, y = F.abstract_features(items, cache)
    print(f"findings training: {len(items)} abstracts, {len(y)} sentences, {int(y.sum())} positive "
          f"({time.perf_counter() - started:.0f} s)", flush=True)  # fmt: skip
    model = F.train_findings(
        cache, index.embedder.name, index.docs
    )  # C by 5-fold CV on train, as on first use
    print(f"findings C by 5-fold CV on train (balanced accuracy): {model.meta['C_cv_scores']} -> {model.meta['C']}",
          flush=True)  # fmt: skip
    model.save(out_dir / f"findings-{index.embedder.name}.json")
    held = F.pubmedqa_training({q.pmid for q in held_out}, index.docs)
    cosine_col = len(F.CUE_NAMES) - 1
    top_model, top_cosine, top_last = [], [], []
    for item in held:
        xs, ys = F.abstract_features([item], cache)
        top_model.append(ys[int(np.argmax(model.probabilities(xs)))])
        top_cosine.append(ys[int(np.argmax(xs[:, cosine_col]))])
        top_last.append(ys[-1])
    print(
        f"held-out ({len(held)} source abstracts): top sentence in the long answer: model "
        f"{np.mean(top_model):.3f}, question cosine {np.mean(top_cosine):.3f}, last sentence {np.mean(top_last):.3f}",
        flush=True,
    )

    # --- verdict
    rows = V.training_rows([q.pmid for q in train], cache, model, index.docs)
    held_rows = V.training_rows([q.pmid for q in held_out], cache, model, index.docs)
    verdict = V.train_verdict(cache, index.embedder.name, model, index.docs)  # as on first use
    print(f"verdict (cues) C and class weights by 5-fold CV on train (mean of accuracy and macro-F1): "
          f"{verdict.meta['cv_scores']} -> C={verdict.meta['C']}, {verdict.meta['class_weight']}", flush=True)  # fmt: skip
    verdict.save(out_dir / f"verdict-{index.embedder.name}.json")
    report("verdict (cues, extractive)", verdict, held_rows, None, rows)
    if args.support:
        support_experiment(settings, rows, held_rows)
    if args.words:
        words_experiment(rows, held_rows)
    if args.llm:  # the LLM head as `biocite train verdict --llm` fits it (masses saved under out_dir)
        print(train_verdict_heads(settings, index.docs, index.embedder, llm=True, progress=False).summary(),
              flush=True)  # fmt: skip
    print(f"saved to {out_dir}; {time.perf_counter() - started:.0f} s in all")
    print(json.dumps({"findings_meta": model.meta, "verdict_meta": verdict.meta}, indent=1, default=str))


if __name__ == "__main__":
    sys.exit(main())
