"""The bottom line (issue 12): question type, and for yes/no questions a verdict with a probability.

`question_type` is a rule on the question's template, read in its first clause that opens with an auxiliary
verb (yes/no) or a question word (which/what ... are -> list; what/who/when/where/which/how long -> factoid;
how/why, and requests such as "Can you suggest ..." -> open), after spoken fillers ("Also", "Ok,") are cut;
when no clause opens so, a question word or a request met mid-sentence ("migraines what medication ...?")
types the rest; a title-like question without either ("X: a single syndrome?") is yes/no
(bench/question_types.py).

`VerdictModel` is a trained multinomial logistic regression over features of the answer-bearing evidence
(the top 3 sentences by P(answer-bearing), `agent/findings.py`), so it works in extractive mode too:
- negation, no-difference, hedging, affirmation and contrast cue counts of the top sentence, and their
  P(answer-bearing)-weighted mean and maximum over the three; whether the question itself is negated.
- generate mode, when the configured LLM has masses: that LLM's probability mass on "yes", "no" and
  "maybe" as the first token of the answer to `prompts/verdict.txt` (one extra 1-token call), with or
  without the cues, whichever cross-validates better on train. The prompt's seven worked examples (two yes,
  three no, two maybe) are conclusions of corpus abstracts that are not PubMedQA questions (PMIDs 12535818,
  35998300, 17255138, 15200408, 11704023, 16034922, 33661190) with questions written for them, so no split
  of PubMedQA sees its own questions in the prompt; the llama.cpp prompt cache keeps their prefix. The masses
  of the train questions ship for the default LLM in data/pubmedqa/verdict_llm_<model>.json; for any
  other LLM `biocite train verdict --llm` (agent/verdict_training.py) computes them; the head is fitted on
  them in a second on first use, and generate mode uses it only when it cross-validates better than the
  cue head.
The probabilities are calibrated by a temperature fitted on the train rows' out-of-fold probabilities.
(Until version 2 the features included the MiniLM embedding of the evidence: 777 columns for 300 questions,
which cross-validated below the majority class.)
Trained on the PubMedQA development questions of the TRAIN part of the split by question (the reranker's:
seed 13, 60/40), with yes/no/maybe labels; maybe -> "mixed". C and class weighting are chosen by 5-fold
cross-validation on train. "insufficient" is the verdict of an abstention or of evidence that leaves a
key concept uncovered.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from biocite import pubmedqa
from biocite.agent.evidence import TextEncoder
from biocite.agent.findings import agent_models_dir
from biocite.agent.prompting import load_prompt
from biocite.errors import ModelError
from biocite.files import atomic_write_json
from biocite.heads import (
    LinearArtifact,
    LinearModel,
    apply_temperature,
    choose_c,
    fit_temperature,
    out_of_fold_probabilities,
)
from biocite.llm import answer_mass
from biocite.models import REGISTRY, model_path
from biocite.pubmedqa import SPLIT_SEED, TRAIN_SHARE, load_questions, split_questions
from biocite.records import Evidence, QuestionType, Verdict
from biocite.settings import DATA_DIR

ARTIFACT_VERSION = 6  # 3: cue features only (+ the LLM's answer-word mass); C and class weights chosen by CV
# 4: + a temperature fitted on out-of-fold probabilities of the train rows (calibrated probabilities)
# 5: retrained with the findings model that reads inline section labels (findings ARTIFACT_VERSION 3)
# 6: the LLM head may be the answer-word mass alone (meta "cues": false), whichever cross-validates better
KIND = "verdict"
LABELS: list[Verdict] = ["yes", "no", "mixed"]
PUBMEDQA_TO_VERDICT: dict[str, Verdict] = {"yes": "yes", "no": "no", "maybe": "mixed"}

_AUX = r"(?:is|are|was|were|do|does|did|can|could|should|would|will|has|have|had|may|might|must|shall)"
_YES_NO = re.compile(rf"^\s*(?:[^?:]*?:\s*)?{_AUX}\b", re.IGNORECASE)
_LIST = re.compile(
    r"^\s*(?:which|what)\s+(?:\w+\s+){0,3}(?:are|were)\b|^\s*(?:list|name)\b"
    r"|^\s*(?:which|what)\s+(?!(?:is|was|does|has|happens|means|helps|works|makes|seems)\b)"
    r"(?:\w+\s+){0,2}?\w{2,}s\s",  # "which drugs ..."
    re.IGNORECASE,
)
_FACTOID = re.compile(
    r"^\s*(?:for\s+)?(?:what|what's|whats|which|who|whom|when|where|how (?:many|much|long|often|soon))\b",
    re.IGNORECASE,
)
# "Is depression common after delivery?" asks how often, a frequency (factoid), not yes or no: no PubMedQA
# question asks it (0 of 500), so the verdict model never learnt one; its "no 0.83" over a prevalence of 16 %
# said nothing. The frequency word must be the predicate ("Are rare variants associated ...?" is yes/no), and
# a comparison stays yes/no ("Are seizures more common in ...?" asks whether a risk is raised).
_FREQUENCY = re.compile(
    r"^\s*(?:is|are|was|were)\s+(?:\S+\s+){0,6}?(?<!more )(?<!less )"
    r"(?:common|uncommon|rare|frequent|infrequent|prevalent)"
    r"(?=\s+(?:in|among|after|during|with|to|for|at|following)\b|\s*[?.]|\s*$)",
    re.IGNORECASE,
)
# "Is warfarin or aspirin better for stroke prevention?" asks which of two, not yes or no: its bottom line was "yes,
# the cited studies support it". Two alternatives joined by "or" and a comparison after them, or "should I take A or
# B" or "is it better to A or B", make a choice question (a factoid: the quotes say which); no PubMedQA question
# is one (0 of 500), nor any expert question (0 of 296).
_CHOICE = re.compile(
    r"^\s*(?:is|are|was|were|would|will|do|does|did|can|could|should)\s+[^?]*?\w\s+or\s+[^?]*?"
    r"\b(?:better|worse|best|superior|inferior|safer|preferable|preferred|more|less)\b"
    r"|^\s*should\s+(?:i|we|you|he|she|they)\s+(?:take|use|get|choose|start|try|have)\s+[^?]*?\w\s+or\s+\w"
    r"|^\s*(?:is|would)\s+it\s+(?:better|best|safer|preferable|worse)\s+to\s+[^?]*?\w\s+or\s+\w",
    re.IGNORECASE,
)
_OPEN = re.compile(
    r"^\s*(?:how(?!\s+(?:many|much|long|often|soon)\b)|why)\b"
    r"|^\s*(?:any|some)\s+(?:thoughts|advice|suggestions?|recommendations?|ideas|tips)\b"
    r"|^\s*(?:anything|something)\b"
    r"|^\s*(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:suggest|recommend|provide|tell|explain|describe|"
    r"give|prescribe|shed|help)\b",  # a request, not a yes/no question: "Can you suggest something for ...?"
    re.IGNORECASE,
)
# Words that open a spoken question without being part of it: "Also what is ...", "Ok, how often?"
_FILLER = re.compile(
    r"^(?:(?:and|also|but|so|ok|okay|alright|oh|no|yes|well|then|now|or|hi|hello|hmm|um|in any case|"
    r"(?:one|a) (?:last|more|quick|other) question|i have (?:a|one) (?:more )?question|question)\b(?!-\w)"
    r"[\s,:;.\-–]*)+",  # not the first part of a hyphenated word: "Well-being"
    re.IGNORECASE,
)
# Sentences and clauses: after . ? ! (also "pilaris.Are" without a space) and at , ; :
_CLAUSE_BREAK = re.compile(r"(?<=[?.!])\s+|\.(?=[A-Z])|[,;:]\s+")


# A question that starts mid-sentence, after words that do not open one: a question word, or a request
# ("... Lexapro would you tell me more about it?"); an auxiliary alone is not ("Back pain could be ...").
_INNER_QUESTION = re.compile(
    r"(?<=\w )(?:what|what's|whats|which|who|when|where|how|why|(?:can|could|would|will) you)\b",
    re.IGNORECASE,
)


def _clauses(question: str) -> list[str]:
    """The question, then each of its sentences and clauses, with spoken fillers cut from their start."""
    parts = [question, *_CLAUSE_BREAK.split(question)[1:]]
    return [c for c in (_FILLER.sub("", part.strip()) for part in parts) if c]


def question_type(question: str) -> QuestionType:
    """The type of the question's first clause (the whole question first) that opens with an auxiliary verb
    (yes/no, unless a request: "Can you suggest ...", a frequency: "Is X common in Y?", or a choice: "Is A or B
    better?") or a question word
    (list / factoid / open); else the type of the question that starts mid-sentence at a question word or a
    request; else yes/no for a title-like question ("Chronic functional somatic symptoms: a single
    syndrome?"), open otherwise."""
    text = question.strip()
    for clause in _clauses(text):
        if _OPEN.match(clause):
            return "open"
        if _FREQUENCY.match(clause) or _CHOICE.match(clause):
            return "factoid"
        if _YES_NO.match(clause):
            return "yes/no"
        if _LIST.match(clause):
            return "list"
        if _FACTOID.match(clause):
            return "factoid"
    inner = _INNER_QUESTION.search(text)  # "migraines what medication have the least side effects?"
    if inner:
        return question_type(text[inner.start() :])
    if text.endswith("?"):
        return "yes/no"  # PubMedQA-style titles: "Young-Burgess classification: does it predict ...?"
    return "open"


_CUES: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        "negative": r"\b(?:no|not|neither|nor|none|failed|unchanged|unrelated|independent of|without)\b|n't\b",
        "no_difference": r"\b(?:no (?:significant |statistically significant )?(?:difference|association|"
        r"effect|correlation|relationship|benefit|improvement|change)|did not (?:differ|improve|reduce|"
        r"increase|affect|predict|change)|not (?:significantly |statistically )?(?:different|associated|"
        r"related|correlated|predictive|effective|superior)|similar|comparable)\b",
        "hedge": r"\b(?:may|might|could|possibl\w*|unclear|uncertain|inconclusive|controversial|limited|"
        r"further (?:studies|research|investigation)|larger|warrant\w*|remains?|preliminary|trend)\b",
        "positive": r"\b(?:significant(?:ly)?|effective|improv\w*|reduc\w*|increas\w*|associated with|"
        r"superior|beneficial|predict\w*|safe|feasible|useful|important|higher|lower|better)\b",
        "numbers": r"\d",
        "not_significant": r"\bnot (?:statistically )?significant|\bno (?:statistically )?significant"
        r"|\bnon-?significant|\binsignificant",
        "negated_verb": r"\bno (?:evidence|support|role|benefit|advantage|impact|influence|value)|\bdoes not support"
        r"|\bcannot be|\bcould not|\bunable|\b(?:did|do|does|was|were|is|are|has|have) not\b",
        "equivalence": r"\bsimilar|\bcomparable|\bequivalent|\bno difference|\bequally|\bsame\b",
        "weak_hedge": r"\bmay\b|\bmight\b|\bcould\b|\bpossibl|\bpotential|\bappear|\bseem|\bsuggest",
        "strong_hedge": r"\bunclear|\buncertain|\binconclusive|\bcontroversial|\bconflicting|\bmixed\b"
        r"|\bnot clear|\bremains? to be|\bfurther (?:stud|research|investigation|trials)"
        r"|\blarger (?:stud|trials|prospective)|\bwarrant|\bpreliminary|\blimited\b|\bnot always|\bonly in"
        r"|\bsome\b|\bsubgroup|\bpartial",
        "affirmation": r"\bsignificantly (?:improv|reduc|increas|decreas|lower|higher|better|associat)"
        r"|\bis (?:a |an )?(?:effective|safe|feasible|useful|reliable|valid|accurate)"
        r"|\b(?:was|are|is) associated|\bconfirm|\bdemonstrat|\bshow(?:s|ed|n)? that|\bsupport"
        r"|\bindependent (?:predictor|risk factor)|\bpredict",
        "contrast": r"\bbut\b|\bhowever\b|\balthough\b|\bwhereas\b|\bdespite\b|\bnevertheless\b",
    }.items()
}
# A question of safety ("Is metformin safe during pregnancy?") is answered by what the studies found on harms:
# "no" had been read from an IVF trial's "no benefit of metformin", and "yes" can be read from a benefit alone.
# The word is read as the predicate ("safe?", "safe during", "safe and effective", "safe to take"), not as a
# modifier of the topic ("Is unsafe sexual behaviour increasing ...?", "safe sex"), in the question's last part
# (a title's "Comparative safety of A and B: does the association vary?" asks something else). Asked as harms
# ("Were there more adverse events with it?", "Does metformin cause side effects?", "Is semaglutide well
# tolerated?") it is the same question; "aware of the side effects" and "predict adverse outcome" are not (none of
# the 796 questions in data/ reads as one by these words that did not already by the words above).
_ASKS_SAFETY = re.compile(
    r"\b(?:safe|unsafe|harmful|harmless|dangerous)\b(?=\s*(?:[?,.;]|$|(?:and|or|for|in|to|during|when|with|as|at|"
    r"after|before|if|while|among|enough)\b))|\bsafely\b|\bsafety of\b"
    r"|\b(?:more|fewer|less|any|cause[sd]?|increase[sd]?|reduce[sd]?|with)\b[^?:]*?"
    r"\b(?:adverse (?:events?|effects?|reactions?)|side[- ]effects?)\b"
    r"|\b(?:well[- ])?tolerated\b(?=\s*(?:[?,.;]|$))",
    re.IGNORECASE,
)
_SPEAKS_OF_HARM = re.compile(
    r"\b(?:safe|safely|safety|unsafe|harm\w*|adverse|side[- ]effects?|\w*toxic\w*|damage|myopath\w*|"
    r"rhabdomyolysis|nausea|vomiting|diarrho?ea|complications?|tolera\w+|"
    r"morbidity|mortality|deaths?|died|fatal\w*|malformations?|teratogen\w*|risks?|hazards?|"
    r"bleeding|ha?emorrhag\w*|injur\w+|hypoglyc\w+|withdrawals?|discontinu\w+)\b",
    re.IGNORECASE,
)


# A question that asks what the harms are ("What are the side effects of formoterol?", "How about the adverse
# events?", "What about its safety?", "How about toxicity?") is a question of harms too, asked as a factoid. Not
# "What are the complications of yellow fever?": a disease's complications are its course, not harms done by a
# treatment; nor "What are the treatments for myoclonus and their possible side effects?" (a BioGen 2024 topic):
# harms are the second of two things it asks.
_ASKS_WHICH_HARMS = re.compile(
    r"^\W*(?:what|which|how)\b(?:(?!\band\b)[^?])*?"
    r"\b(?:side[- ]effects?|adverse (?:events?|effects?|reactions?)|tolerability|safety|\w*toxicity)\b",
    re.IGNORECASE,
)
# What a question of harms needs its evidence to speak of; listed as not covered when none does.
HARMS = "harms (adverse events, side effects)"


def asks_about_safety(question: str) -> bool:
    """Whether the question's last part (after a title's colon) asks whether something is safe or harmful."""
    return bool(_ASKS_SAFETY.search(question.rsplit(":", 1)[-1]))


def asks_of_harms(question: str) -> bool:
    """Whether the question asks whether something is safe, or what harms it does."""
    return asks_about_safety(question) or bool(_ASKS_WHICH_HARMS.search(question.rsplit(":", 1)[-1]))


# where a trial's safety is a method, not a finding: "3836 were included in the full analysis and safety data sets"
_SAFETY_METHOD = re.compile(r"\bsafety (?:data ?sets?|analys[ie]s|populations?|sets?)\b", re.IGNORECASE)


def speaks_of_harm(texts: Sequence[str]) -> bool:
    """Whether any of the sentences reports on safety: harms, adverse events, complications, tolerability."""
    return any(_SPEAKS_OF_HARM.search(_SAFETY_METHOD.sub(" ", t)) for t in texts)


def on_harms(evidence: list[Evidence]) -> list[Evidence]:
    """The evidence sentences that report on harms, for a question of harms; all of them when none does.
    "What are side effects of using formoterol?" had been answered with budesonide-formoterol's symptom control
    and glucocorticoid exposure."""
    return [e for e in evidence if speaks_of_harm([e.span.text])] or evidence


_NEGATED_QUESTION = re.compile(rf"\b{_AUX}n't\b|\b{_AUX}\s+(?:\w+\s+)?not\b|\bno\b", re.IGNORECASE)
MIN_TRAIN_ROWS = 50  # train questions (source abstract in the index) a verdict head needs
LLM_WORDS = ("yes", "no", "maybe")  # the verdict prompt's answer words, in the LLM features' order


def _cues(text: str) -> list[float]:
    return [min(len(p.findall(text)), 3) / 3 for p in _CUES.values()]


def evidence_features(question: str, texts: Sequence[str], weights: Sequence[float]) -> np.ndarray:
    """One feature row for (question, answer-bearing evidence sentences, most answer-bearing first): the
    cue counts of the top sentence, their P(answer-bearing)-weighted mean and maximum over the sentences,
    and whether the question itself is negated."""
    n = len(_CUES)
    if not texts:
        return np.zeros(3 * n + 1, dtype=np.float32)
    w = np.asarray(weights, dtype=np.float32)
    w = w / w.sum() if w.sum() > 0 else np.full(len(texts), 1 / len(texts), dtype=np.float32)
    cues = np.array([_cues(t) for t in texts], dtype=np.float32)
    negated = float(bool(_NEGATED_QUESTION.search(question)))
    return np.hstack([cues[0], w @ cues, cues.max(axis=0), [negated]]).astype(np.float32)


def llm_features(mass: Mapping[str, float]) -> np.ndarray:
    """log P of each answer word of the verdict prompt (floored: a word outside the top logprobs)."""
    return np.log(np.array([mass.get(w, 0.0) for w in LLM_WORDS], dtype=np.float32) + 1e-4)


def llm_messages(question: str, texts: Sequence[str]) -> list[Any]:
    """The verdict prompt; `texts` grouped by abstract, in text order (`reading_order`)."""
    return load_prompt("verdict").messages(evidence=" ".join(texts), question=question)


def reading_order(items: Sequence[tuple[str, int, str]]) -> list[str]:
    """(pmid, sentence index, text) of the top evidence -> texts grouped by abstract (first-ranked abstract
    first), each abstract's sentences in text order: how the LLM features were computed for training."""
    rank = {pmid: i for i, (pmid, _, _) in reversed(list(enumerate(items)))}
    return [t for _, _, t in sorted(items, key=lambda x: (rank[x[0]], x[1]))]


@dataclass(frozen=True)
class VerdictModel(LinearArtifact):
    """yes / no / mixed: a multinomial logistic regression over standardised `evidence_features`, plus the
    LLM's `llm_features` when the model was trained with them (`meta["llm"]` names that LLM)."""

    @property
    def llm(self) -> str | None:
        return self.meta.get("llm")

    @property
    def uses_cues(self) -> bool:
        """False for a head on the LLM's answer-word mass alone (chosen when it cross-validated better)."""
        return bool(self.meta.get("cues", True))

    @property
    def cv_score(self) -> float:
        """The best cross-validated score on train (mean of accuracy and macro-F1) of its (C, weighting)."""
        return best_cv_score(self.meta)

    def beats(self, other: VerdictModel) -> bool:
        """Whether this (stacked) head cross-validated better on train than `other`: a weak LLM's answer-word
        mass can add only noise, and then generate mode keeps the cue head."""
        return self.cv_score > other.cv_score

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """Calibrated: the logistic regression's probabilities at the temperature fitted on train."""
        return apply_temperature(self.linear.predict_proba(features), self.meta.get("temperature", 1.0))

    def predict(
        self,
        question: str,
        texts: Sequence[str],
        weights: Sequence[float],
        llm_mass: Mapping[str, float] | None = None,
    ) -> tuple[Verdict, float, dict[str, float]]:
        """(verdict, its probability, all probabilities) from the answer-bearing evidence sentences."""
        if self.llm is not None and llm_mass is None:
            raise ValueError(f"this verdict model needs the answer-word mass of {self.llm}")
        row = feature_row(question, texts, weights, llm_mass if self.llm else None, self.uses_cues)
        probs = self.probabilities(row[None, :])[0]
        best = int(np.argmax(probs))
        return (
            LABELS[best],
            float(probs[best]),
            {k: round(float(p), 4) for k, p in zip(LABELS, probs, strict=True)},
        )

    @classmethod
    def load(cls, path: Path) -> VerdictModel | None:
        """None for an artifact of another version, label set or layout (the caller retrains it)."""
        linear = LinearModel.load(path, kind=KIND, version=ARTIFACT_VERSION, labels=LABELS)
        return None if linear is None else cls(linear)


def top_evidence(probabilities: np.ndarray, k: int = 3) -> tuple[list[int], list[float]]:
    """Indices and P(answer-bearing) of the k most answer-bearing sentences, best first."""
    order = np.argsort(-probabilities, kind="stable")[:k]
    return [int(i) for i in order], [float(probabilities[i]) for i in order]


class TrainingRow(BaseModel):
    """One PubMedQA question as the verdict model sees it: its source abstract's top answer-bearing
    sentences (best first, as the agent ranks them) and the gold verdict."""

    pmid: str
    question: str
    texts: list[str]
    weights: list[float]
    reading_order: list[str]
    label: Verdict


def training_rows(pmids: Sequence[str], encoder: TextEncoder, findings: Any, store: Any) -> list[TrainingRow]:
    """The rows of these PubMedQA questions whose source abstract is in the index."""
    items = {item.pmid: item for item in pubmedqa.read_items()}
    rows = []
    for pmid in pmids:
        sentences = store.sentences(pmid)
        if not sentences:
            continue
        question = items[pmid].question
        probs = findings.score(question, sentences, [len(sentences)] * len(sentences), encoder)
        order, weights = top_evidence(probs)
        top = [(pmid, sentences[i].index, sentences[i].text) for i in order]
        rows.append(
            TrainingRow(
                pmid=pmid,
                question=question,
                texts=[text for _, _, text in top],
                weights=weights,
                reading_order=reading_order(top),
                label=PUBMEDQA_TO_VERDICT[items[pmid].final_decision],
            )
        )
    return rows


def feature_row(
    question: str,
    texts: Sequence[str],
    weights: Sequence[float],
    llm_mass: Mapping[str, float] | None = None,
    cues: bool = True,
) -> np.ndarray:
    """The cue features, then the LLM's when `llm_mass` is given; without `cues`, the LLM's alone."""
    parts = [evidence_features(question, texts, weights)] if cues else []
    if llm_mass is not None:
        parts.append(llm_features(llm_mass))
    return np.hstack(parts).astype(np.float32)


def feature_matrix(
    rows: Sequence[TrainingRow],
    llm_masses: Mapping[str, Mapping[str, float]] | None = None,
    cues: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """(features, label indices); with `llm_masses` (by PMID) the LLM columns (`feature_row`)."""
    x = [
        feature_row(r.question, r.texts, r.weights, llm_masses[r.pmid] if llm_masses else None, cues)
        for r in rows
    ]
    return np.vstack(x), np.array([LABELS.index(r.label) for r in rows])


# Regularisation and class weighting, chosen together by 5-fold cross-validation on train; the score is the
# mean of accuracy and macro-F1 (issue 12 asks for both).
C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0)
CLASS_WEIGHTS = ("balanced", "none")


def fit_verdict(x: np.ndarray, y: np.ndarray, c: float, class_weight: str = "balanced") -> LinearModel:
    return LinearModel.fit(
        x, y, kind=KIND, version=ARTIFACT_VERSION, labels=LABELS, c=c, max_iter=3000, seed=13,
        balanced=class_weight == "balanced",
    )  # fmt: skip


def _accuracy_and_macro_f1(gold: np.ndarray, predicted: np.ndarray) -> float:
    from sklearn.metrics import accuracy_score, f1_score

    return (accuracy_score(gold, predicted) + f1_score(gold, predicted, average="macro")) / 2


def best_cv_score(choice: Mapping[str, Any]) -> float:
    """The best cross-validated score among a `fit_with_cv` choice's (C, weighting) pairs."""
    return float(max(choice["cv_scores"].values()))


def fit_with_cv(
    x: np.ndarray, y: np.ndarray, grid: Sequence[float] = C_GRID
) -> tuple[LinearModel, dict[str, Any]]:
    """The model refitted on all rows with the (C, class weighting) of the best cross-validated score, and the
    temperature that calibrates its probabilities, fitted on the same folds' out-of-fold probabilities."""
    scores: dict[str, float] = {}
    best: tuple[float, float, str] | None = None
    for weighting in CLASS_WEIGHTS:
        c, by_c = choose_c(x, y, grid, partial(fit_verdict, class_weight=weighting), _accuracy_and_macro_f1)
        scores.update({f"{weighting}:C={k}": v for k, v in by_c.items()})
        if best is None or by_c[c] > best[0]:
            best = (by_c[c], c, weighting)
    assert best is not None
    _, c, weighting = best
    fit = partial(fit_verdict, c=c, class_weight=weighting)
    temperature = fit_temperature(out_of_fold_probabilities(x, y, fit), y)
    choice = {"C": c, "class_weight": weighting, "cv_scores": scores, "temperature": round(temperature, 4)}
    return fit(x, y), choice


def train_verdict(
    encoder: TextEncoder,
    embedder_name: str,
    findings: Any,
    store: Any,
    llm_masses: LLMFeatures | None = None,
) -> VerdictModel:
    """Trained on the TRAIN questions of the shared PubMedQA split; with `llm_masses`, on those of its
    questions that have them, with the LLM columns."""
    train, _ = split_questions(load_questions())
    rows = training_rows([q.pmid for q in train], encoder, findings, store)
    return fit_verdict_rows(rows, embedder_name, llm_masses)


def fit_verdict_rows(
    rows: Sequence[TrainingRow], embedder_name: str, llm_masses: LLMFeatures | None = None
) -> VerdictModel:
    """The verdict model fitted on these TRAIN rows (with `llm_masses`: those that have them), C and class
    weighting by 5-fold cross-validation; ValueError under 50 rows."""
    started = time.perf_counter()
    if llm_masses is not None:
        rows = [r for r in rows if r.pmid in llm_masses.rows]
    if len(rows) < MIN_TRAIN_ROWS:
        raise ValueError(f"the index holds fewer than {MIN_TRAIN_ROWS} training abstracts")
    masses = llm_masses.rows if llm_masses else None
    x, y = feature_matrix(rows, masses)
    fitted, choice = fit_with_cv(x, y)
    cues = True
    if masses is not None:  # the LLM's mass alone may read better than with the cues' noise (CV decides)
        alone, alone_choice = fit_with_cv(*feature_matrix(rows, masses, cues=False))
        if best_cv_score(alone_choice) > best_cv_score(choice):
            fitted, choice, cues = alone, alone_choice, False
    meta = {
        "cues": cues,
        "embedder": embedder_name,
        "llm": llm_masses.llm if llm_masses else None,
        "llm_features": llm_masses.provenance() if llm_masses else None,
        "split": {"seed": SPLIT_SEED, "train_share": TRAIN_SHARE, "train_questions": len(rows)},
        "label_counts": {k: int((y == i).sum()) for i, k in enumerate(LABELS)},
        **choice,
        "train_seconds": round(time.perf_counter() - started, 1),
    }
    return VerdictModel(fitted.model_copy(update={"meta": meta}))


# --- the LLM's answer-word mass on the verdict prompt, for the TRAIN questions -----------------------------


class LLMIdentity(BaseModel):
    """Which LLM answer-word masses belong to: `name` (file-safe, in artifact names) and a `fingerprint`
    that changes when the model does: a registry model's sha256; for a GGUF path, "gguf:" + the sha256 of
    its size and first and last MiB (hashing a multi-GB file at every start would cost seconds); for an
    endpoint, "openai:" + the sha256 of its base URL and model name (the served weights cannot be seen)."""

    name: str
    fingerprint: str


def _file_safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "llm"


def _gguf_fingerprint(path: Path) -> str:
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as fh:
        digest.update(fh.read(1 << 20))
        fh.seek(max(0, size - (1 << 20)))
        digest.update(fh.read(1 << 20))
    return "gguf:" + digest.hexdigest()


def llm_identity(settings: Any) -> LLMIdentity:
    """The configured LLM's identity (a local model must be installed: `model_path` says how otherwise)."""
    llm = settings.llm
    if llm.backend == "openai":
        key = hashlib.sha256(f"{llm.base_url}\n{llm.model}".encode()).hexdigest()
        return LLMIdentity(name=_file_safe(f"openai-{llm.model}"), fingerprint=f"openai:{key}")
    if llm.model in REGISTRY:
        return LLMIdentity(name=llm.model, fingerprint=REGISTRY[llm.model].sha256)
    path = model_path(settings, llm.model)
    return LLMIdentity(name=_file_safe(path.stem), fingerprint=_gguf_fingerprint(path))


class LLMFeatures(BaseModel):
    """The verdict prompt's answer-word mass of one LLM on the train questions (by PMID). Shipped in
    data/pubmedqa/ for the default LLM; made for any other by `biocite train verdict --llm` (~2.5 s a
    question for the default LLM on 2 cores), which saves it under the agent's models folder. Valid only for
    the same LLM (`fingerprint`) and prompt."""

    llm: str
    llm_fingerprint: str
    prompt_sha256: str
    split: dict[str, Any]
    rows: dict[str, dict[str, float]]

    def provenance(self) -> dict[str, Any]:
        rows = hashlib.sha256(json.dumps(self.rows, sort_keys=True).encode()).hexdigest()
        return {
            "llm_fingerprint": self.llm_fingerprint,
            "prompt_sha256": self.prompt_sha256,
            "rows": len(self.rows),
            "rows_sha256": rows,
        }

    def matches(self, identity: LLMIdentity) -> bool:
        return self.llm_fingerprint == identity.fingerprint and self.prompt_sha256 == prompt_sha256()


def prompt_sha256() -> str:
    return hashlib.sha256(load_prompt("verdict").text().encode()).hexdigest()


def shipped_features_path(name: str) -> Path:
    return DATA_DIR / "pubmedqa" / f"verdict_llm_{name}.json"


def trained_features_path(settings: Any, name: str) -> Path:
    return agent_models_dir(settings) / f"verdict_llm_{name}.json"


def load_llm_features(settings: Any, identity: LLMIdentity) -> LLMFeatures | None:
    """The masses for this LLM and today's prompt: the shipped ones and those made on this machine
    (`biocite train verdict --llm`) together, the latter winning; None when neither file matches."""
    found: LLMFeatures | None = None
    rows: dict[str, dict[str, float]] = {}
    for path in (shipped_features_path(identity.name), trained_features_path(settings, identity.name)):
        if path.is_file():
            features = LLMFeatures.model_validate_json(path.read_text())
            if features.matches(identity):
                found = features
                rows.update(features.rows)
    return None if found is None else found.model_copy(update={"rows": rows})


def compute_llm_features(
    chat: Any,
    identity: LLMIdentity,
    rows: Sequence[TrainingRow],
    path: Path,
    *,
    limit: int | None = None,
    known: Mapping[str, dict[str, float]] | None = None,
    side: str = "train",
    on_row: Callable[[], None] = lambda: None,
    save_every: int = 10,
) -> tuple[LLMFeatures, int]:
    """(the masses of those `rows` that have one, how many were computed now): one 1-token call for each of
    the first `limit` rows without a mass yet (in `path` or `known`, e.g. the shipped ones). `path` keeps
    every mass known for this LLM and prompt (an earlier, longer run's too), saved every `save_every` calls,
    so an interrupted run resumes where it stopped. An LLM that returns no logprobs: ModelError."""
    done: dict[str, dict[str, float]] = dict(known or {})
    if path.is_file():
        previous = LLMFeatures.model_validate_json(path.read_text())
        done.update(previous.rows if previous.matches(identity) else {})

    def snapshot(masses: dict[str, dict[str, float]]) -> LLMFeatures:
        return LLMFeatures(
            llm=identity.name,
            llm_fingerprint=identity.fingerprint,
            prompt_sha256=prompt_sha256(),
            split={"seed": SPLIT_SEED, "train_share": TRAIN_SHARE, "side": side},
            rows=masses,
        )

    computed = 0
    for row in rows[:limit]:
        if row.pmid not in done:
            mass = answer_mass(chat, llm_messages(row.question, row.reading_order), LLM_WORDS)
            if mass is None:
                raise ModelError(
                    f"llm {identity.name} returned no token logprobs: the verdict head needs the answer-word mass"
                )
            done[row.pmid] = mass
            computed += 1
            if computed % save_every == 0:
                atomic_write_json(path, snapshot(done).model_dump())
        on_row()
    atomic_write_json(path, snapshot(done).model_dump())
    return snapshot({r.pmid: done[r.pmid] for r in rows if r.pmid in done}), computed


def load_verdict(
    settings: Any,
    findings: Any,
    encoder: TextEncoder,
    store: Any,
    *,
    llm: LLMIdentity | None = None,
    train_if_missing: bool = True,
) -> VerdictModel | None:
    """The cached verdict model for the findings model's embedder (with `llm`: the one stacked on that LLM's
    answer-word mass, None when no masses match it); trained and saved on first use (seconds)."""
    llm_masses = None
    if llm is not None:
        llm_masses = load_llm_features(settings, llm)
        if llm_masses is None:
            return None
    path = verdict_path(settings, findings.embedder, llm)
    if path.is_file() and (model := VerdictModel.load(path)) is not None:
        if model.meta.get("llm_features") == (llm_masses.provenance() if llm_masses else None):
            return model
    # missing, of another version or layout, or trained on other LLM features: trained and replaced
    if not train_if_missing:
        return None
    try:
        model = train_verdict(encoder, findings.embedder, findings, store, llm_masses)
    except ValueError:  # an index without enough of the training abstracts
        return None
    model.save(path)
    return model


def verdict_path(settings: Any, embedder: str, llm: LLMIdentity | None = None) -> Path:
    suffix = f"-llm-{llm.name}" if llm else ""
    return agent_models_dir(settings) / f"verdict-{embedder}{suffix}.json"
