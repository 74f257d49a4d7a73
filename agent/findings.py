"""Answer-bearing evidence (issue 12): P(a sentence reports a finding that answers the question).

Question similarity favours sentences that restate the question (background, objective); this model
scores whether a sentence *answers* it. A logistic regression over
- findings cues: p-values, confidence intervals, effect-size ratios, percentages, direction and
  conclusion words; methods / objective / background cues (negative evidence); position in the abstract;
- the MiniLM embedding of the sentence, its element-wise product with the question's embedding, and
  their cosine.

Training data (reproducible from the repository, `train_findings`):
- the PubMedQA development questions of the TRAIN part of the split by question shared with the reranker
  (`biocite.pubmedqa.split_questions`: seed 13, 60 % train / 40 % validation); positives are the
  sentences of the source abstract that overlap the question's long answer (the abstract's conclusions),
  negatives the other sentences;
- the structured abstracts of the index (labelled AbstractText parts of the shipped PubMed XML, and plain
  abstracts that write their labels inline, "RESULTS: ...": labels RESULTS / FINDINGS / CONCLUSIONS
  positive, BACKGROUND / OBJECTIVE / METHODS negative), with the title standing in for the question.
  Sentences are the index's own (`index/sentences.py`), as the agent sees them.
The held-out 40 % is never used for training or fitting.

The artifact is a `biocite.heads.LinearModel` JSON file (scaler, coefficients, metadata), trained on first
use when missing or of another version.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from tqdm import tqdm

from biocite import pubmedqa
from biocite.agent.evidence import ANSWER_BEARING, TextEncoder
from biocite.heads import LinearArtifact, LinearModel, choose_c
from biocite.pubmedqa import SPLIT_SEED, TRAIN_SHARE, load_questions, split_questions
from biocite.records import Document, Evidence, Sentence
from biocite.sentences import calls_for_research, section_label
from biocite.settings import Settings

# 2: C chosen by cross-validation on train; the saved layout is biocite.heads.LinearModel
# 3: abstracts with their section labels written inline are structured too (`sentences.inline_sections`)
ARTIFACT_VERSION = 3
KIND = "findings"
LABELS = ["other", "answer_bearing"]
MIN_TRAIN_ABSTRACTS = 50  # PubMedQA train-part source abstracts the index must hold to train on

_CUES: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        "p_value": r"\bp\s*[<=>≤≥]\s*0?\.\d|\bp\s*(?:value)?\s*(?:<|=)\s*\d",
        "interval": r"\b(?:95\s*%|CI\b|confidence interval|interquartile|IQR\b)",
        "ratio": r"\b(?:a?OR|RR|a?HR|odds ratio|relative risk|hazard ratio|risk ratio|mean difference)\b",
        "percent": r"\d\s*%|\bpercent",
        "number": r"\d",
        "significant": r"\bsignifican",
        "direction": r"\b(?:increas|decreas|reduc|improv|higher|lower|greater|fewer|worse|better|rose|fell|"
        r"lowered|raised|associated|correlat|predict|differ)\w*",
        "negation": r"\b(?:no|not|neither|nor|failed|unchanged|similar|comparable)\b",
        "conclusion": r"\b(?:suggest|conclu|indicat|demonstrat|appear|confirm|support|recommend|"
        r"should|findings?|results? (?:show|suggest|indicate))\w*",
        "hedge": r"\b(?:may|might|could|possibl|further (?:studies|research)|warrant|unclear)\w*",
        "methods": r"\b(?:we (?:studied|enrolled|performed|conducted|reviewed|analy[sz]ed|examined|"
        r"included|recruited|measured|compared|used)|were (?:enrolled|randomi[sz]ed|included|recruited|"
        r"divided|assigned|collected|measured|reviewed|analy[sz]ed)|retrospective|prospective|"
        r"questionnaire|cohort of|cross-sectional)\b",
        "objective": r"\b(?:aim|objective|purpose|to (?:determine|assess|evaluate|investigate|examine|"
        r"compare|identify|describe)|we hypothesi[sz]ed|this study)\b",
        "background": r"\b(?:is (?:a|an|the) (?:common|major|leading)|remains? (?:unclear|unknown)|"
        r"little is known|has been|have been)\b",
    }.items()
}
CUE_NAMES = [*_CUES, "position", "first", "last", "log_words", "cosine"]

# Section labels of structured abstracts: answer-bearing (1) or not (0); other labels are left out.
_POSITIVE_LABELS = re.compile(r"RESULT|FINDING|CONCLU|INTERPRET", re.IGNORECASE)
_NEGATIVE_LABELS = re.compile(r"BACKGROUND|INTRODUCTION|OBJECTIVE|AIM|PURPOSE|METHOD|DESIGN|SETTING|PATIENT|"
                              r"PARTICIPANT|CONTEXT", re.IGNORECASE)  # fmt: skip


def cue_features(text: str, index: int, count: int, cosine: float) -> list[float]:
    """Findings cues (counts, capped at 3), relative position, first/last flags, log length, cosine."""
    cues = [min(len(p.findall(text)), 3) / 3 for p in _CUES.values()]
    position = index / max(count - 1, 1)
    words = len(text.split())
    return [*cues, position, float(index == 0), float(index == count - 1), np.log1p(words) / 5, cosine]


def feature_matrix(question_vector: np.ndarray, vectors: np.ndarray, cues: np.ndarray) -> np.ndarray:
    """[cues, sentence embedding, sentence * question] per row."""
    return np.hstack([cues, vectors, vectors * question_vector[None, :]]).astype(np.float32)


# An effect ratio written out, its abbreviations in capitals: the "ratio" cue above (a feature the findings model
# is trained on) is case-blind, so it also counts the word "or" ("... other than ergocalciferol or phosphate
# binders"): it fires on 4,950 of the corpus's 49,510 sentences, 520 of which name a ratio.
_RATIO_STATISTIC = re.compile(
    r"\b(?:a?OR|RR|a?HR)\b|(?i:\b(?:(?:odds|hazard|risk) ratios?|relative risks?|mean differences?)\b)"
)


def reports_finding(item: Evidence) -> bool:
    """Whether an evidence sentence reports a finding: the findings model reads it as answer-bearing (or was
    not asked), or it states a statistic (p-value, confidence interval, effect ratio). The model is taught
    that a PubMedQA abstract's conclusions answer its question and its results do not, so it scores a
    result with its effect size low; that result is what a clinician checks first. A call for more research
    ("Further studies are needed to ...", `calls_for_research`) closes many abstracts and reports nothing."""
    text = item.span.text
    if calls_for_research(text):
        return False
    if item.answer is None or item.answer >= ANSWER_BEARING:
        return True
    return bool(
        _CUES["p_value"].search(text) or _CUES["interval"].search(text) or _RATIO_STATISTIC.search(text)
    )


# A question that asks for a quantity, and the numbers that state one of its kind: "How many women with
# synchronous endometrial and ovarian cancer have Lynch syndrome?" was answered with the study's conclusion on
# whom to test, never with "Overall, 7% of women in our cohort met ... criteria for Lynch syndrome" (the findings
# model, taught on yes/no questions, reads a result as no answer); "What dose of atropine is used with
# ketamine?" never quoted "0.01 mg/kg of atropine".
_COUNT = re.compile(
    r"\d\s*%|\bper\s*cent\b|\b\d+\s+(?:of|out\s+of)\s+(?:the\s+)?\d+\b|\b(?:one|\d+)\s+in\s+(?:every\s+)?\d+\b",
    re.IGNORECASE,
)
_DOSE = re.compile(r"\d\s*(?:mg|mcg|µg|ug|g|ml|iu|units?|mmol|mg/kg|mcg/kg)\b", re.IGNORECASE)
_DURATION = re.compile(
    r"\d\s*(?:hours?|h|days?|weeks?|months?|years?|minutes?|min)\b(?![\s-]*old\b)", re.IGNORECASE
)
_AGE = re.compile(r"\bage[ds]?\b", re.IGNORECASE)


def _states_duration(text: str) -> bool:
    """A time span, not an age ("aged 15-81 years", "median age 3.4 years", "over the age of 70 years", a
    "45-year-old"): no "age" in the 40 characters before it."""
    return any(not _AGE.search(text[max(0, m.start() - 40) : m.start()]) for m in _DURATION.finditer(text))


ASKED_QUANTITIES: tuple[tuple[re.Pattern[str], Callable[[str], object]], ...] = (
    (
        re.compile(
            r"\bhow\s+(?:many|common|frequent(?:ly)?|often|likely)\b|\bwhat\s+(?:is\s+the\s+|are\s+the\s+)?"
            r"(?:percentage|percent|proportion|fraction|share|number|rate|incidence|prevalence|frequency|chance|odds)\b",
            re.IGNORECASE,
        ),
        _COUNT.search,
    ),
    (re.compile(r"\bwhat\s+(?:is\s+the\s+)?(?:dose|dosage)\b|\bhow\s+much\b", re.IGNORECASE), _DOSE.search),
    (re.compile(r"\bhow\s+long\b", re.IGNORECASE), _states_duration),
)
QUANTITY_ANSWER = 0.9  # P(answer-bearing) at least, of a sentence stating the asked kind of quantity


def with_asked_quantity(question: str, sentences: Sequence[Sentence], probs: np.ndarray) -> np.ndarray:
    """P(answer-bearing) of each sentence when the question asks for a quantity (a count or share, a dose, a
    duration: `ASKED_QUANTITIES`): at least `QUANTITY_ANSWER` for a sentence that states one of that kind, at
    most `ANSWER_BEARING` for one that does not (a conclusion that atropine "reduces hypersalivation" does not
    say how common it is; "Hypersalivation occurred in 11.4% of patients given atropine ..." does). Unchanged
    for other questions. Relevance still decides which of them lead, and whether any clears the bar."""
    stated = next((kind for asks, kind in ASKED_QUANTITIES if asks.search(question)), None)
    if stated is None:
        return probs
    states = np.array([bool(stated(s.text)) for s in sentences])
    return np.where(states, np.maximum(probs, QUANTITY_ANSWER), np.minimum(probs, ANSWER_BEARING))


def findings_or_all(evidence: list[Evidence]) -> list[Evidence]:
    """The evidence sentences that report a finding, in order; all of them when none does. What an answer
    is written from: a sentence of background or methods ("Patients with glaucoma were included.") answers
    nothing when findings are there."""
    return [item for item in evidence if reports_finding(item)] or evidence


@dataclass(frozen=True)
class FindingsModel(LinearArtifact):
    """P(answer-bearing): a logistic regression over standardised `feature_matrix` columns."""

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        return self.linear.predict_proba(features)[:, 1]

    def score(
        self, question: str, sentences: Sequence[Sentence], counts: Sequence[int], encode: TextEncoder
    ) -> np.ndarray:
        """P(answer-bearing) of each sentence; `counts[i]` = sentences in sentence i's abstract."""
        if not sentences:
            return np.zeros(0, dtype=np.float32)
        vectors = encode.encode([question, *[s.text for s in sentences]])
        q, s = vectors[0], vectors[1:]
        cues = np.array(
            [
                cue_features(x.text, x.index, n, float(v @ q))
                for x, n, v in zip(sentences, counts, s, strict=True)
            ],
            dtype=np.float32,
        )
        return self.probabilities(feature_matrix(q, s, cues))

    @classmethod
    def load(cls, path: Path) -> FindingsModel | None:
        """None for an artifact of another version or layout (the caller retrains it)."""
        linear = LinearModel.load(path, kind=KIND, version=ARTIFACT_VERSION, labels=LABELS)
        return None if linear is None else cls(linear)


# --- training data ---------------------------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def overlaps_long_answer(sentence: str, long_answer: str) -> bool:
    """The sentence is part of the long answer (its normalised text occurs in it, or vice versa)."""
    s, a = _norm(sentence), _norm(long_answer)
    return bool(s) and (s in a or (len(a) > 20 and a in s))


@dataclass
class LabelledAbstract:
    question: str
    sentences: list[Sentence]
    labels: list[int | None]  # 1 answer-bearing, 0 not, None left out
    source: str


class SentenceStore(Protocol):
    """What training reads from the index: documents and their stored sentences (index/store.py)."""

    def pmids(self) -> list[str]: ...
    def get_many(self, pmids: Sequence[str]) -> dict[str, Document]: ...
    def sentences(self, pmid: str) -> list[Sentence]: ...


def pubmedqa_training(pmids: set[str], store: SentenceStore) -> list[LabelledAbstract]:
    """Source abstracts of the given PubMedQA questions; long-answer sentences positive."""
    items = {item.pmid: item for item in pubmedqa.read_items()}
    docs = store.get_many(sorted(pmids))
    out = []
    for pmid in sorted(docs):
        sentences = store.sentences(pmid)
        answer = items[pmid].long_answer
        labels: list[int | None] = [int(overlaps_long_answer(s.text, answer)) for s in sentences]
        if any(labels):
            out.append(LabelledAbstract(items[pmid].question, sentences, labels, "pubmedqa"))
    return out


def section_training(store: SentenceStore, exclude: set[str]) -> list[LabelledAbstract]:
    """Structured abstracts: RESULTS / CONCLUSIONS sentences positive, BACKGROUND / METHODS negative."""
    out = []
    docs = store.get_many([p for p in store.pmids() if p not in exclude])
    for pmid in sorted(docs):
        doc = docs[pmid]
        if not doc.sections or not doc.title:
            continue
        sentences = store.sentences(pmid)
        labels: list[int | None] = []
        for s in sentences:
            label = section_label(doc, s.start) or ""
            labels.append(
                1 if _POSITIVE_LABELS.search(label) else 0 if _NEGATIVE_LABELS.search(label) else None
            )
        if any(labels) and 0 in labels:
            out.append(LabelledAbstract(doc.title, sentences, labels, "sections"))
    return out


def training_abstracts(train_pmids: set[str], store: SentenceStore) -> list[LabelledAbstract]:
    """PubMedQA train-part abstracts plus every structured abstract of the index that is not a PubMedQA
    source (so no held-out question's abstract is trained on)."""
    all_questions = {item.pmid for item in pubmedqa.read_items()}
    return pubmedqa_training(train_pmids, store) + section_training(store, all_questions)


def abstract_features(
    items: Sequence[LabelledAbstract], encoder: TextEncoder, progress: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    rows: list[np.ndarray] = []
    ys: list[int] = []
    bar = tqdm(items, desc="findings model", unit="abstract", disable=not progress, file=sys.stderr)
    for item in bar:
        keep = [i for i, y in enumerate(item.labels) if y is not None]
        vectors = encoder.encode([item.question, *[item.sentences[i].text for i in keep]])
        q, s = vectors[0], vectors[1:]
        count = len(item.sentences)
        cues = np.array(
            [
                cue_features(item.sentences[i].text, i, count, float(v @ q))
                for i, v in zip(keep, s, strict=True)
            ],
            dtype=np.float32,
        )
        rows.append(feature_matrix(q, s, cues))
        ys.extend(int(item.labels[i] or 0) for i in keep)
    return np.vstack(rows), np.asarray(ys)


C_GRID = (0.01, 0.05, 0.2)  # regularisation candidates, chosen among by cross-validation on train


def fit_logistic(x: np.ndarray, y: np.ndarray, c: float = 0.05, seed: int = 13) -> LinearModel:
    return LinearModel.fit(x, y, kind=KIND, version=ARTIFACT_VERSION, labels=LABELS, c=c, seed=seed)


def train_findings(
    encoder: TextEncoder,
    embedder_name: str,
    store: SentenceStore,
    *,
    c: float | None = None,
    progress: bool = False,
) -> FindingsModel:
    """Train on the PubMedQA train part and the structured XML abstracts (about 4 minutes on 2 cores, most of
    it embedding their ~12,000 sentences). C: given, or chosen by 5-fold cross-validation on the training
    rows (balanced accuracy)."""

    started = time.perf_counter()
    train, _ = split_questions(load_questions())
    items = training_abstracts({q.pmid for q in train}, store)
    if sum(i.source == "pubmedqa" for i in items) < MIN_TRAIN_ABSTRACTS:
        raise ValueError(f"the index holds fewer than {MIN_TRAIN_ABSTRACTS} training abstracts")
    if progress:  # the first answer waited minutes here with nothing said (trained once, with a progress bar)
        print("biocite: training the findings model once (answer-bearing sentences)", file=sys.stderr)
    x, y = abstract_features(items, encoder, progress)
    cv_scores = None
    if c is None:
        from sklearn.metrics import balanced_accuracy_score

        c, cv_scores = choose_c(x, y, C_GRID, fit_logistic, balanced_accuracy_score)
    fitted = fit_logistic(x, y, c)
    meta = {
        "embedder": embedder_name,
        "split": {"seed": SPLIT_SEED, "train_share": TRAIN_SHARE, "train_questions": len(train)},
        "abstracts": {
            "pubmedqa": sum(i.source == "pubmedqa" for i in items),
            "sections": sum(i.source == "sections" for i in items),
        },  # fmt: skip
        "sentences": int(len(y)),
        "positives": int(y.sum()),
        "C": c,
        "C_cv_scores": cv_scores,
        "train_seconds": round(time.perf_counter() - started, 1),
        "cues": CUE_NAMES,
    }
    return FindingsModel(fitted.model_copy(update={"meta": meta}))


def agent_models_dir(settings: Settings) -> Path:
    return settings.agent.models_dir or settings.models_dir / "agent"


def load_findings(
    settings: Settings,
    embedder: Any,
    encoder: TextEncoder,
    store: SentenceStore,
    *,
    train_if_missing: bool = True,
) -> FindingsModel | None:
    """The cached model for this embedder; trained (with `encoder`, e.g. a cache over `embedder`) and
    saved on first use. None for an embedder it cannot use (the tests' hashing embedder) or when missing
    and not to be trained."""
    name = str(getattr(embedder, "name", ""))
    if name not in ("minilm", "mpnet") or not settings.agent.answer_model:
        return None
    path = agent_models_dir(settings) / f"findings-{name}.json"
    if path.is_file() and (model := FindingsModel.load(path)) is not None:
        return model
    # missing, or of another version or layout (written by an older biocite): trained and replaced
    if not train_if_missing:
        return None
    try:
        model = train_findings(encoder, name, store, progress=True)
    except ValueError:  # an index without enough of the training abstracts (small test indexes)
        return None
    model.save(path)
    return model
