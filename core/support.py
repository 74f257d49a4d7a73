"""biocite's support model, the one owner of support judgements (agent verifier, evaluator, `biocite check`).

(claim, evidence passage) -> calibrated P(supports | contradicts | neutral | not_relevant), the evidence
sentences best first, and the claim's words inside them as phrases with exact character offsets.

How: the passage is split into sentences (index/sentences.py); a cross-encoder fine-tuned end to end from
the MiniLM backbone (`PairClassifier`) scores (claim, sentence) over the four labels; a multinomial logistic
regression over per-passage features (max / mean of each sentence column, the best sentence's row, number
and word agreement) turns the sentence scores into passage probabilities. The regression is fitted on a
calibration slice of Citation-Integrity TRAIN claims held back from fine-tuning, so it is both the learned
aggregation and the calibration. Training data: `support_data.py`. Artifact: a folder with `model/`,
`meta.json` (data fingerprint, metrics, hyper-parameters) and `aggregator.json`.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from biocite.abbreviations import long_forms
from biocite.added_clauses import added_clause
from biocite.changed_numbers import changed_number
from biocite.embedder import Embedder, resolve_device
from biocite.errors import InputError, ModelError
from biocite.files import atomic_write_json, output_folder
from biocite.heads import META_FILE, PairClassifier, macro_report
from biocite.models import model_path
from biocite.populations import other_population
from biocite.records import (
    Document,
    Span,  # exact offsets into the evidence text given to check(): text[start:end]
)
from biocite.reversals import ReversalKind, denial, reversal
from biocite.sentences import is_metadata, without_inline_label
from biocite.sentences import sentence_spans as spans
from biocite.settings import Settings, load_settings
from biocite.shipped import AGGREGATOR_FILE, install_shipped, shipped_origin
from biocite.support_data import (
    STOPWORDS,
    NearMiss,
    Passage,
    as_claims,
    balanced,
    calibration_side,
    citint_claims,
    citint_pairs,
    content_words,
    copy_pairs,
    fingerprint,
    hard_cases,
    kqa_pairs,
    overlap,
    pubmedqa_pairs,
    pubmedqa_passages,
    sample_per_type,
)
from biocite.tokenize import stem_words

SupportLabel = Literal["supports", "contradicts", "neutral", "not_relevant"]
LABELS: list[SupportLabel] = ["supports", "contradicts", "neutral", "not_relevant"]
ARTIFACT_KIND = "biocite.support_model"
ARTIFACT_VERSION = 5  # 2: learned evidence ranker; 3: no claim cue features in the aggregator;
# 4: PubMedQA pairs from the shared split, int8 scoring; 5: the aggregator also fitted on whole PubMedQA
# abstracts (real length: it judged 0.43 of held-out conclusions supported by their own abstract)
# The rules applied over the model's probabilities (`_verdict`): 1 the verbatim sentence; 2 the clause quote;
# 3 each passage scored in a batch of its own (`score`); 4 an abstract's metadata (trial registration,
# keywords, funding, copyright: `biocite.sentences.is_metadata`) is not evidence, and a passage with nothing
# else is not relevant; 5 a section label written into a sentence's text ("CONCLUSIONS: ") is not part of
# the verbatim comparison; 6 a claim that one sentence reverses (a swapped comparison, the opposite
# direction: `biocite.reversals`) and none restates is contradicted; 7 so is a claim's number that one
# sentence states otherwise for the same quantity and none states (`biocite.changed_numbers`); 8 a claim about
# one population (children, women, people) against a passage about the opposite one only (adults, men,
# animals) is neutral (`biocite.populations`); 9 so is a claim the model reads as supported that adds a
# clause no sentence mentions (`biocite.added_clauses`); 10 rule 4 reads NEJM's "(Funded by ...; ClinicalTrials.gov
# number, NCT...)" and a registration split off its label as metadata; 11 rule 6 also contradicts a claim
# that denies what one sentence states and none denies ("no significant complications" against "a significant
# complication rate": `biocite.reversals.denial`); 12 rule 6 reads a comparison whose subject is written once,
# before "but" ("X was superior to Y but inferior to Z": `biocite.reversals`). Part of the model's name, so
# cached judgements (evaluator/judges.py) are not reused across a change of how verdicts are made.
RULES_VERSION = 12
# inverse L2 strength of the aggregator's logistic regression (features standardised); with the ranker and
# C, chosen on the held calibration half of TRAIN claims (bench/support_model_results.txt, run D)
AGGREGATOR_C = 1.0


# how a sentence of the evidence contradicts a claim by rule (`misstatement`)
Misstatement = ReversalKind | Literal["denied statement", "different number"]


def misstatement(claim: str, sentences: Sequence[str]) -> tuple[int, Misstatement] | None:
    """The sentence that contradicts the claim by rule, and how: a reversal, else a statement the claim denies
    (`biocite.reversals`), else a number stated otherwise (`biocite.changed_numbers`)."""
    found = reversal(claim, sentences)
    if found:
        return found.index, found.kind
    denied = denial(claim, sentences)
    if denied is not None:
        return denied, "denied statement"
    changed = changed_number(claim, sentences)
    return (changed.index, "different number") if changed else None


class EvidenceSentence(BaseModel):
    start: int
    end: int
    text: str
    score: float  # P(this sentence supports the claim)
    phrases: list[Span] = Field(default_factory=list)


class SupportVerdict(BaseModel):
    label: SupportLabel
    probs: dict[str, float]  # calibrated, sum to 1, keys = LABELS
    evidence: list[EvidenceSentence]  # best first
    # the claim is one of the passage's sentences word for word: supported by definition, whatever the
    # model scored (it scored some verbatim conclusions "not relevant"); probs are then 1 / 0 / 0 / 0
    verbatim: bool = False
    # the claim is a clause that one sentence asserts on its own (`clause_quote_index`): supported too
    clause_quote: bool = False
    # the first evidence sentence says otherwise (`misstatement`): contradicted, probs 0 / 1 / 0 / 0
    reversal: Misstatement | None = None
    # the evidence is about another population than the claim ("adults, not children";
    # `biocite.populations`): neutral, probs 0 / 0 / 1 / 0
    other_population: str | None = None
    # the claim adds a clause no sentence of the evidence mentions ("..., especially in patients over 80";
    # `biocite.added_clauses`), which the model read as supported: neutral, probs 0 / 0 / 1 / 0
    added_clause: str | None = None


# --- text helpers ---------------------------------------------------------------------------------------


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _abbreviated(words: str, forms: dict[str, str]) -> str:
    """`_words` text with each abbreviation the passage defines written short: "metastatic spinal cord
    compression (MSCC)" and "metastatic spinal cord compression" both read "mscc"."""
    padded = f" {words} "
    for short, long_form in forms.items():
        s, lf = _words(short), _words(long_form)
        padded = padded.replace(f" {lf} {s} ", f" {s} ").replace(f" {lf} ", f" {s} ")
    return padded.strip()


def verbatim_index(claim: str, sentences: Sequence[str], passage: str | None = None) -> int | None:
    """The index of the sentence that is the claim word for word (case, punctuation, a section label
    written into the text, and an abbreviation the passage defines written out or not aside: "CONCLUSIONS: X"
    quotes "X"; "Elderly patients with metastatic spinal cord compression did not benefit" quotes "Elderly
    patients with MSCC did not benefit"), if any; or of the second of two consecutive sentences that are (an
    extractive quote of a sentence that refers back carries the one before it). The abbreviations are those of
    `passage` (default: the sentences)."""
    forms = long_forms(passage if passage is not None else " ".join(sentences))
    key = _abbreviated(_words(without_inline_label(claim)), forms)
    words = [_abbreviated(_words(without_inline_label(s)), forms) for s in sentences]
    if not key:
        return None
    pairs = (i for i in range(1, len(words)) if f"{words[i - 1]} {words[i]}" == key)
    return next((i for i, w in enumerate(words) if w == key), next(pairs, None))


# A lead-in that the rest of its sentence does not depend on: a discourse marker, or a causal, concessive
# or premise clause. The main clause after it is asserted on its own. Not here on purpose: "if", "when",
# "unless" (conditions), "in patients with ...", "compared with ..." (restrictions, comparators).
_ASSERTED_LEAD = re.compile(
    r"(?:in (?:conclusion|summary|addition|this (?:study|trial|series|cohort)|our (?:study|series|cohort))"
    r"|to conclude|overall|taken together|thus|therefore|hence|consequently|however|moreover"
    r"|furthermore|additionally|finally|importantly|notably|interestingly|as expected"
    r"|based on (?:these|our|the|this)|since|because|although|though|while|whereas|despite|given)\b",
    re.IGNORECASE,
)
# A claim that restates what a study reported: "The study found that X" claims X.
_REPORTING_FRAME = re.compile(
    r"^(?:(?:the|this|that|one|a|our|these|several) )?(?:study|studies|trials?|analysis|review|authors?"
    r"|investigators?|researchers?|results?|findings?|data|evidence|meta analysis) (?:found|find|finds|showed|shows|show|reported|reports|concluded"
    r"|concludes|demonstrated|demonstrates|suggested|suggests|suggest|indicated|indicates|confirmed|confirms)"
    r" that "
)
# A discourse marker opening the claim ("However, X"): it ties X to what came before and claims X.
_CLAIM_MARKER = re.compile(
    r"^(?:however|thus|therefore|hence|moreover|furthermore|additionally|in addition|also|overall|finally"
    r"|importantly|notably|in conclusion|in summary|taken together) "
)
_AUX = frozenset(
    "is are was were be been being has have had do does did can could may might must shall should will would".split()
)
# Words after which the second conjunct is a joint argument ("between A and B"), not a separate claim.
_JOINT = frozenset("between both either neither versus vs respectively among from".split())
_ADVERB = frozenset("also well not further then".split())


def _verb_like(word: str) -> bool:
    return word in _AUX or (word.endswith("ed") and len(word) > 4)


def _asserted_clauses(sentence: str) -> list[str]:
    """The sentence, and its main clause without each asserted lead-in (`_ASSERTED_LEAD` before a comma)."""
    out = [sentence]
    for m in re.finditer(r",\s+", sentence):
        if _ASSERTED_LEAD.match(sentence[: m.start()].strip()):
            out.append(sentence[m.end() :])
    return out


def _lead_moved(sentence: str) -> list[str]:
    """The sentence with the part before a comma moved to its end: "In patients with X, resection is
    necessary" says what "Resection is necessary in patients with X" says (the same words, nothing cut)."""
    out = []
    for m in re.finditer(r",\s+", sentence):
        lead, rest = sentence[: m.start()], sentence[m.end() :]
        if len(_words(lead).split()) >= 2 and len(_words(rest).split()) >= 2:
            out.append(f"{rest} {lead}")
    return out


def _leading_conjunct(claim: list[str], clause: str) -> bool:
    """The claim is the clause's first conjunct, and the conjunction joins clauses or verb phrases: ", and
    ..." or "and (adverb) <verb> ..." ("was successful and well tolerated"; not "with A and B combined",
    whose "A" alone is not what was tested). A and B asserts A. The claim must be a clause of its own: four
    words or more, with a verb, and no joint argument ("between A and B") in the sentence."""
    tokens = re.findall(r"\w+|,", clause.lower())
    at_word = [i for i, t in enumerate(tokens) if t != ","]  # token position of each word
    words = [tokens[i] for i in at_word]
    k = len(claim)
    if not (4 <= k < len(words) - 1 and words[:k] == claim and words[k] == "and"):
        return False
    comma_before_and = tokens[at_word[k] - 1] == ","
    rest = [w for w in words[k + 1 :] if w not in _ADVERB and not w.endswith("ly")]
    joins_clauses = comma_before_and or (bool(rest) and _verb_like(rest[0]))
    return (
        joins_clauses
        and words[k + 1] != "only"
        and not _JOINT & set(words)
        and any(_verb_like(w) for w in claim)
    )


def clause_quote_index(claim: str, sentences: Sequence[str]) -> int | None:
    """The index of the sentence that asserts the claim as one of its clauses, word for word (case and
    punctuation aside): the sentence less an asserted lead-in ("Since ..., X" claims X), or its first
    conjunct ("X and Y" claims X), or the whole sentence with its lead-in moved to the end ("In patients with
    X, Y" claims "Y in patients with X"); a reporting frame on the claim ("The study found that X") is read
    as X, and so is a discourse marker ("However, X"). A part cut anywhere else is left to the model: "X
    reduced Y" also sits inside "It is not true that X reduced Y", and "X reduced Y in men" is not "X reduced
    Y"."""
    key = _REPORTING_FRAME.sub("", _CLAIM_MARKER.sub("", _words(claim))).split()
    if not key:
        return None
    for i, s in enumerate(sentences):
        for clause in _asserted_clauses(s):
            if _words(clause).split() == key or _leading_conjunct(key, clause):
                return i
        if any(_words(moved).split() == key for moved in _lead_moved(s)):
            return i
    return None


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentences of free text as (start, end) offsets (the index's splitter)."""

    return spans(Document(pmid="1", abstract=text)) if text.strip() else []


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")


def phrases(claim: str, text: str, start: int, end: int) -> list[Span]:
    """Runs of words of evidence[start:end] that are content words of the claim (exact offsets); two
    matched words separated only by stopwords/punctuation join into one phrase."""

    wanted = set(stem_words(sorted(content_words(claim))))
    tokens = [m for m in _TOKEN.finditer(text, start, end) if m.group(0).lower() not in STOPWORDS]
    stems = stem_words([m.group(0).lower() for m in tokens])
    hits = [m for m, s in zip(tokens, stems, strict=True) if s in wanted]
    out: list[Span] = []
    for m in hits:
        if out:
            gap = text[out[-1].end : m.start()]
            if all(w.lower() in STOPWORDS for w in _TOKEN.findall(gap)) and len(gap) <= 12:
                s = out[-1].start
                out[-1] = Span(start=s, end=m.end(), text=text[s : m.end()])
                continue
        out.append(Span(start=m.start(), end=m.end(), text=m.group(0)))
    return out


# --- cheap passage features -----------------------------------------------------------------------

_NUMWORD = {
    "one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "six": 6.0, "seven": 7.0, "eight": 8.0,
    "nine": 9.0, "ten": 10.0, "twice": 2.0, "half": 0.5, "double": 2.0, "threefold": 3.0, "twofold": 2.0,
}  # fmt: skip
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|\.\d+)(?![\w.]*\d)")


def numbers(text: str) -> set[float]:
    """The values of a text's numbers: thousands commas dropped, small spelled-out numbers ('two',
    'twice', 'half') included."""
    out = {round(float(m.replace(",", "")), 6) for m in _NUMBER.findall(text)}
    return out | {_NUMWORD[w] for w in re.findall(r"[a-z]+", text.lower()) if w in _NUMWORD}


def cheap_features(claim: str, passage: str) -> list[float]:
    """Number agreement (share of the claim's numbers found in the passage; 1 when it has none) and
    content-word recall of the claim in the passage."""
    nums = numbers(claim)
    num_agree = len(nums & numbers(passage)) / len(nums) if nums else 1.0
    words = content_words(claim)
    recall = len(words & content_words(passage)) / len(words) if words else 0.0
    return [num_agree, recall]


# No sentence position: in the stored Citation-Integrity corpus the annotated evidence is always sentence 0
# of the cited abstract's 5 (train and dev), so a position feature would learn that artifact, not evidence.
RANK_FEATURES = ["p_supports", "p_contradicts", "p_neutral", "cosine", "cosine_gap", "overlap", "overlap_gap"]


def rank_features(claim: str, sentences: Sequence[str], probs: np.ndarray, cos: np.ndarray) -> np.ndarray:
    """Per-sentence features of the evidence ranker (n_sentences x len(RANK_FEATURES)): the cross-encoder's
    probabilities, the bi-encoder cosine and the claim's word overlap (raw and as the gap to the passage's
    best)."""
    n = len(sentences)
    if n == 0:
        return np.zeros((0, len(RANK_FEATURES)))
    ov = np.asarray([overlap(claim, s) for s in sentences])
    return np.column_stack(
        [probs[:, 0], probs[:, 1], probs[:, 2], cos, cos - cos.max(), ov, ov - ov.max()]
    ).astype(np.float64)


def rank_scores(probs: np.ndarray, cos: np.ndarray, weight: float) -> np.ndarray:
    """The fallback evidence ranking: P(supports) + P(contradicts) + weight x cosine(claim, sentence)."""
    return probs[:, 0] + probs[:, 1] + weight * cos


def passage_features(
    probs: np.ndarray, cos: np.ndarray, cheap: Sequence[float], best: int = -1
) -> np.ndarray:
    """Fixed-length features of one passage from its sentences' probabilities (n_sentences x 4) and
    cosines: max and mean per column, the best-ranked sentence's row (`best`; default the highest
    P(supports) + P(contradicts) + cosine), max / best / mean cosine, then the cheap features."""
    if probs.size == 0:
        probs = np.full((1, len(LABELS)), 0.25, dtype=np.float32)
        cos = np.zeros(1, dtype=np.float32)
        best = 0
    i = best if 0 <= best < len(probs) else int(np.argmax(rank_scores(probs, cos, 1.0)))
    logit = lambda x: np.log(np.clip(x, 1e-4, 1 - 1e-4))  # noqa: E731
    return np.concatenate(
        [
            logit(probs.max(axis=0)),
            logit(probs.mean(axis=0)),
            logit(probs[i]),
            [float(cos.max()), float(cos[i]), float(cos.mean())],
            np.asarray(cheap),
        ]
    ).astype(np.float64)


# --- the model ------------------------------------------------------------------------------------------


class Ranker(BaseModel):
    """How much each sentence is THE evidence: a logistic score over `rank_features`; plain numbers."""

    coef: list[float]
    mean: list[float]
    scale: list[float]

    def score(self, x: np.ndarray) -> np.ndarray:
        if len(x) == 0:
            return np.zeros(0)
        return ((np.atleast_2d(x) - np.asarray(self.mean)) / np.asarray(self.scale)) @ np.asarray(self.coef)

    @classmethod
    def fit(cls, x: np.ndarray, y: Sequence[bool], seed: int) -> Ranker:
        from sklearn.linear_model import LogisticRegression

        mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
        lr = LogisticRegression(C=1.0, max_iter=2000, random_state=seed)
        lr.fit((x - mean) / scale, np.asarray(y, dtype=int))
        return cls(coef=lr.coef_[0].tolist(), mean=mean.tolist(), scale=scale.tolist())


class Aggregator(BaseModel):
    """Multinomial logistic regression over `passage_features`; stored as plain numbers. `ranker` orders
    the sentences (evidence first); without one, `rank_scores` with `rank_weight`."""

    coef: list[list[float]]
    intercept: list[float]
    mean: list[float]
    scale: list[float]
    rank_weight: float = 1.0  # cosine weight in `rank_scores` (the fallback ranking)
    ranker: Ranker | None = None
    feature_names: list[str] = Field(default_factory=list)

    def rank(self, claim: str, sentences: Sequence[str], probs: np.ndarray, cos: np.ndarray) -> np.ndarray:
        """A score per sentence, higher = more likely the evidence."""
        if self.ranker is None or len(sentences) == 0:
            return rank_scores(probs, cos, self.rank_weight)
        return self.ranker.score(rank_features(claim, sentences, probs, cos))

    def features(
        self,
        claim: str,
        sentences: Sequence[str],
        probs: np.ndarray,
        cos: np.ndarray,
        passage: str | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(passage features, sentence order best first) of a claim against a passage's scored sentences;
        `passage` defaults to the sentences joined."""
        order = np.argsort(-self.rank(claim, sentences, probs, cos), kind="stable")
        cheap = cheap_features(claim, " ".join(sentences) if passage is None else passage)
        return passage_features(probs, cos, cheap, int(order[0]) if len(order) else -1), order

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        z = (np.atleast_2d(x) - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = z @ np.asarray(self.coef).T + np.asarray(self.intercept)
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    @classmethod
    def fit(cls, x: np.ndarray, y: Sequence[str], seed: int, c: float = 1.0) -> Aggregator:
        from sklearn.linear_model import LogisticRegression

        mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
        lr = LogisticRegression(C=c, max_iter=5000, random_state=seed)
        lr.fit((x - mean) / scale, [LABELS.index(v) for v in y])  # type: ignore[arg-type]
        coef = np.zeros((len(LABELS), x.shape[1]))
        intercept = np.full(len(LABELS), -30.0)  # a label absent from the slice gets ~0 probability
        for row, cls_index in enumerate(lr.classes_):
            coef[cls_index] = lr.coef_[row] if len(lr.classes_) > 2 else (lr.coef_[0] * (1 if row else -1))
            intercept[cls_index] = (
                lr.intercept_[row] if len(lr.classes_) > 2 else lr.intercept_[0] * (1 if row else -1)
            )
        return cls(coef=coef.tolist(), intercept=intercept.tolist(), mean=mean.tolist(), scale=scale.tolist())


def support_dir(settings: Settings) -> Path:
    return settings.support.path or settings.models_dir / "support"


def _is_current(folder: Path, settings: Settings) -> bool:
    """A complete support model of this code's version at `folder` that the settings accept: one trained
    here (`biocite train support`) is always kept; otherwise, with `support.source: shipped`, it must be the
    artifact this biocite ships (a newer biocite replaces an older shipped or first-use model)."""
    try:
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    complete = (folder / AGGREGATOR_FILE).is_file()
    if not (
        complete and meta.get("kind") == ARTIFACT_KIND and meta.get("support_version") == ARTIFACT_VERSION
    ):
        return False
    origin = str(meta.get("origin") or "")
    shipped = shipped_origin()
    return origin.startswith("trained:") or settings.support.source == "train" or shipped in (None, origin)


class SupportModel:
    def __init__(self, head: Any, aggregator: Aggregator, meta: dict[str, Any], max_sentences: int = 10):
        self.head = head
        self.aggregator = aggregator
        self.meta = meta
        self.max_sentences = max_sentences
        self._embedder: Any = None
        self._threads: ThreadPoolExecutor | None = None
        self.folder: Path | None = None  # where it was loaded from

    def cosines(self, claims: Sequence[str], groups: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """cosine(claim, sentence) of the MiniLM bi-encoder for each claim's group of sentences."""
        if self._embedder is None:
            self._embedder = Embedder("minilm")
        texts = sorted({*claims, *(s for g in groups for s in g)})
        row = {t: i for i, t in enumerate(texts)}
        vecs = self._embedder.encode(texts, batch_size=64)
        return [
            vecs[[row[s] for s in g]] @ vecs[row[c]] if g else np.zeros(0, dtype=np.float32)
            for c, g in zip(claims, groups, strict=True)
        ]

    def score(
        self, claims: Sequence[str], groups: Sequence[Sequence[str]]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """(probs n x 4, cosines n) per claim and its sentences (`head_probs`, then the bi-encoder)."""
        return list(zip(self.head_probs(claims, groups), self.cosines(claims, groups), strict=True))

    def head_probs(self, claims: Sequence[str], groups: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """The cross-encoder's (n x 4) probabilities per claim and its sentences.

        Each claim's group is one batch of its own: dynamic int8 quantizes a batch's activations with one
        scale, so scored beside other claims' pairs a sentence's probabilities moved by up to 0.5 (argmax on
        14 % of dev pairs). And each batch runs on one torch thread, the groups spread over as many threads
        as torch has cores: two passages at once on two cores score more pairs a second than one passage on
        both (a batch of <= 10 sentences is too small to split well), and a verdict is a function of its
        claim and passage alone, whatever else is checked in the same call."""
        empty = np.zeros((0, len(LABELS)), dtype=np.float32)

        def one(claim: str, group: Sequence[str]) -> np.ndarray:
            return (
                self.head.predict_proba([(claim, s) for s in group], batch_size=len(group))
                if group
                else empty
            )

        return list(self._pool().map(one, claims, groups))

    def _pool(self) -> ThreadPoolExecutor:
        if self._threads is None:
            import torch

            # one call first, so the tokenizer's padding and truncation are set before threads share it
            self.head.predict_proba([("claim", "evidence")], batch_size=1)
            workers = max(1, torch.get_num_threads())
            self._threads = ThreadPoolExecutor(
                workers, "support", initializer=torch.set_num_threads, initargs=(1,)
            )
        return self._threads

    @property
    def name(self) -> str:
        # the aggregator's digest too: a refitted one over the same head judges differently
        digest = hashlib.sha256(self.aggregator.model_dump_json().encode()).hexdigest()[:8]
        return f"support:{str(self.meta.get('train_data_sha256') or 'untracked')[:12]}:{digest}:rules{RULES_VERSION}"

    @classmethod
    def load(cls, settings: Settings | None = None, *, train_if_missing: bool = True) -> SupportModel:
        settings = settings or load_settings()
        folder = support_dir(settings)
        if not _is_current(folder, settings):
            if not train_if_missing:
                raise ModelError(
                    f"no support model of version {ARTIFACT_VERSION} at {folder}; run `biocite train support`"
                )
            # first use, or an artifact an earlier biocite made: install the shipped one (seconds) or train
            if settings.support.source == "shipped" and shipped_origin():
                print(f"biocite: installing the shipped support model into {folder}", file=sys.stderr)
                install_shipped(settings, folder)
            else:
                print(f"biocite: training the support model once into {folder} (minutes)", file=sys.stderr)
                train_support(settings, folder)
        return cls.from_folder(folder, settings)

    @classmethod
    def from_folder(cls, folder: Path, settings: Settings | None = None) -> SupportModel:
        head = PairClassifier.load(folder)
        meta = head.meta
        if meta.get("kind") != ARTIFACT_KIND or meta.get("support_version") != ARTIFACT_VERSION:
            raise ModelError(f"{folder}: not a support model of version {ARTIFACT_VERSION}; retrain it")
        try:
            agg = Aggregator.model_validate_json((folder / AGGREGATOR_FILE).read_text())
        except ValueError as exc:
            raise ModelError(f"{folder / AGGREGATOR_FILE}: unreadable ({exc})") from None
        cap = settings.support.max_sentences if settings else 10
        model = cls(head.int8(inplace=True) if meta.get("int8") else head, agg, meta, max_sentences=cap)
        model.folder = folder
        return model

    # --- scoring --------------------------------------------------------------------------------------

    def judged_spans(self, claim: str, evidence: str) -> list[tuple[int, int]]:
        """The (start, end) offsets of the sentences of `evidence` judged against `claim`: all but metadata,
        at most `max_sentences` of them (those sharing most words with the claim)."""
        # a keyword line names every word of a claim about its topic and scored "supports" (0.80)
        spans = [(s, t) for s, t in sentence_spans(evidence) if not is_metadata(evidence[s:t])]
        if len(spans) > self.max_sentences:  # keep the sentences sharing most words with the claim
            ranked = sorted(spans, key=lambda s: -overlap(claim, evidence[s[0] : s[1]]))
            spans = sorted(ranked[: self.max_sentences])
        return spans

    def check(self, claim: str, evidence: str) -> SupportVerdict:
        return self.check_many([(claim, evidence)])[0]

    def check_many(self, pairs: Sequence[tuple[str, str]]) -> list[SupportVerdict]:
        """Each pair's verdict, exactly as `check` gives it alone (one cross-encoder batch per pair)."""
        for i, (claim, _) in enumerate(pairs):
            if not claim or not claim.strip():
                raise InputError(f"pair {i + 1}: empty claim")
        return self._check_spans([(c, e, self.judged_spans(c, e)) for c, e in pairs])

    def check_sentences(
        self, claim: str, sentences: Sequence[str]
    ) -> tuple[SupportVerdict, np.ndarray, np.ndarray]:
        """A passage given as its sentences (joined by spaces; no re-splitting, no sentence cap): the
        verdict, the (n_sentences x 4) sentence probabilities and the cosines, in the given order."""
        spans, pos = [], 0
        for s in sentences:
            spans.append((pos, pos + len(s)))
            pos += len(s) + 1
        ((probs, cos),) = self.score([claim], [list(sentences)])
        return self._verdict(claim, " ".join(sentences), spans, probs, cos), probs, cos

    def _check_spans(self, jobs: Sequence[tuple[str, str, list[tuple[int, int]]]]) -> list[SupportVerdict]:
        scored = self.score([c for c, _, _ in jobs], [[e[s:t] for s, t in spans] for _, e, spans in jobs])
        return [
            self._verdict(claim, evidence, spans, p, cos)
            for (claim, evidence, spans), (p, cos) in zip(jobs, scored, strict=True)
        ]

    def _verdict(
        self, claim: str, evidence: str, spans: list[tuple[int, int]], p: np.ndarray, cos: np.ndarray
    ) -> SupportVerdict:
        if not spans:  # nothing to judge (an empty passage scored "contradicts" 0.41)
            probs: dict[str, float] = {lab: float(lab == "not_relevant") for lab in LABELS}
            return SupportVerdict(label="not_relevant", probs=probs, evidence=[])
        sents = [evidence[s:t] for s, t in spans]
        x, order = self.aggregator.features(claim, sents, p, cos, passage=evidence)
        final = self.aggregator.predict_proba(x)[0]
        copy = verbatim_index(claim, sents, evidence)
        clause = clause_quote_index(claim, sents) if copy is None else None
        quoted = copy if copy is not None else clause  # the sentence the claim is quoted from
        misstated = misstatement(claim, sents) if quoted is None else None
        population = other_population(claim, sents) if quoted is None and not misstated else None
        model_supports = LABELS[int(np.argmax(final))] == "supports"
        unruled = quoted is None and not misstated and not population
        added = added_clause(claim, sents) if unruled and model_supports else None
        ruled: tuple[int, SupportLabel] | None = (
            (quoted, "supports") if quoted is not None
            else (misstated[0], "contradicts") if misstated
            else (population.index, "neutral") if population
            else (int(order[0]), "neutral") if added
            else None
        )  # fmt: skip
        if ruled is not None:
            first = ruled[0]
            final = np.eye(len(LABELS))[LABELS.index(ruled[1])]
            order = np.array([first, *[i for i in order.tolist() if i != first]])
        label = LABELS[int(np.argmax(final))]
        sentences = [
            EvidenceSentence(
                start=spans[i][0],
                end=spans[i][1],
                text=evidence[spans[i][0] : spans[i][1]],
                score=round(float(p[i, 0]), 5),
                phrases=phrases(claim, evidence, *spans[i]),
            )
            for i in order[:3].tolist()
        ]
        return SupportVerdict(
            label=label,
            probs={lab: round(float(v), 5) for lab, v in zip(LABELS, final, strict=True)},
            evidence=sentences,
            verbatim=copy is not None,
            clause_quote=clause is not None,
            reversal=misstated[1] if misstated else None,
            other_population=population.described if population else None,
            added_clause=added.clause if added else None,
        )


# --- training -------------------------------------------------------------------------------------------


def backbone_path(settings: Settings, backbone: str | Path) -> Path:
    return model_path(settings, backbone)


def _calibration_set(
    claims: Sequence[Any], corpus: dict[int, list[str]], seed: int, hard_per_type: int, max_claims: int
) -> list[Passage]:
    """The aggregator's rows, at passage level: each calibration claim vs its cited abstract (its own
    label; kind "cited"), vs a random or a same-topic other abstract (not_relevant; "other"), verbatim/lead-cut
    copies ("copy") and TRAIN-template hard cases vs the cited abstract ("hard:<type>"); then the held-back
    PubMedQA train questions' conclusions vs whole abstracts (`pubmedqa_passages`) and their TRAIN-template
    hard cases vs their own abstract ("hard:<type>:pubmedqa"): Citation-Integrity stores 5 sentences an
    abstract, and means over sentences fall with length."""
    rng = random.Random(seed)
    near = NearMiss({str(k): v for k, v in corpus.items()})
    ids = sorted(corpus)
    out: list[Passage] = []
    claims = rng.sample(list(claims), min(max_claims, len(claims)))
    for c in claims:
        out.append(Passage(c.claim, c.sentences, c.label, "cited"))
        other = rng.choice(ids) if rng.random() < 0.5 else int(near.other(c.claim, str(c.doc_id)) or ids[0])
        if other != c.doc_id:
            out.append(Passage(c.claim, corpus[other], "not_relevant", "other"))
    for p in copy_pairs(claims, seed)[:hard_per_type]:  # verbatim / lead-cut sentences of the cited abstract
        out.append(Passage(p.claim, next(c.sentences for c in claims if c.id == p.group), "supports", "copy"))
    out += _hard_rows(claims, seed, hard_per_type, rng)
    # as many PubMedQA questions as Citation-Integrity claims at most (the default 150 takes all 50; the tests'
    # tiny recipe, 24)
    passages = pubmedqa_passages(
        "train", seed, keep=lambda group: calibration_side(group, seed), max_questions=max_claims
    )
    return out + passages + _hard_rows(as_claims(passages), seed, hard_per_type, rng, ":pubmedqa")


def _hard_rows(
    claims: Sequence[Any], seed: int, per_type: int, rng: random.Random, suffix: str = ""
) -> list[Passage]:
    """Up to `per_type` TRAIN-template hard cases of each type, each against its claim's whole passage."""
    by_id = {c.id: c for c in claims}
    sampled = sample_per_type(hard_cases(claims, held_out=False, seed=seed), per_type, rng)
    return [
        Passage(h.claim, by_id[h.group].sentences, h.label, h.source + suffix)
        for items in sampled.values()
        for h in items
    ]


def _slice_report(rows: Sequence[Passage], pred: Sequence[str]) -> dict[str, Any]:
    """Figures of the held calibration half shaped like the held-out ones: 3-class macro-F1 of the claims
    vs their cited abstract, Supports rate vs other abstracts, NOT-Supports rate of the (train-template)
    hard cases, Supports rate of the unperturbed supported claims."""
    from sklearn.metrics import f1_score

    three = lambda v: v if v in ("supports", "contradicts") else "nei"  # noqa: E731
    cited = [(three(r.label), three(p)) for r, p in zip(rows, pred, strict=True) if r.kind == "cited"]
    out: dict[str, Any] = {}
    if cited:
        g, q = zip(*cited, strict=True)
        out["cited_3class_macro_f1"] = round(
            float(
                f1_score(g, q, labels=["supports", "contradicts", "nei"], average="macro", zero_division=0)
            ),
            4,
        )
    for kind in sorted({r.kind for r in rows}):
        hits = [p == "supports" for r, p in zip(rows, pred, strict=True) if r.kind == kind]
        if kind == "cited":
            hits = [
                p == "supports"
                for r, p in zip(rows, pred, strict=True)
                if r.kind == kind and r.label == "supports"
            ]
        name = f"{kind}_not_supports" if kind.startswith("hard:") else f"{kind}_supports"
        out[name] = round(1 - float(np.mean(hits)) if kind.startswith("hard:") else float(np.mean(hits)), 4)
    return out


def _scored_rows(
    model: SupportModel, rows: Sequence[Passage]
) -> tuple[list[list[str]], list[tuple[np.ndarray, np.ndarray]]]:
    """The sentences scored per row (at most max_sentences, most claim words first) and their scores."""
    groups = [
        sorted(r.sentences, key=lambda x: -overlap(r.claim, x))[: model.max_sentences]
        if len(r.sentences) > model.max_sentences
        else r.sentences
        for r in rows
    ]
    return groups, model.score([r.claim for r in rows], groups)


def fit_rank_weight(scored: Sequence[tuple[np.ndarray, np.ndarray]], gold: Sequence[set[int]]) -> float:
    """The cosine weight giving the best top-1 evidence sentence on claims with annotated evidence."""
    grid = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 100.0]
    hits = {
        w: sum(int(np.argmax(rank_scores(p, c, w))) in g for (p, c), g in zip(scored, gold, strict=True))
        for w in grid
    }
    return max(grid, key=lambda w: (hits[w], -w))


def _top1(scores: Sequence[np.ndarray], gold: Sequence[set[int]]) -> float:
    return (
        float(np.mean([int(np.argmax(s)) in g for s, g in zip(scores, gold, strict=True)])) if gold else 0.0
    )


def fit_ranker(
    claims: Sequence[Any], scored: Sequence[tuple[np.ndarray, np.ndarray]], seed: int
) -> tuple[float, Ranker | None, dict[str, float]]:
    """The cosine weight of the fallback ranking and a learned `Ranker` (None when it does not beat the
    fallback on the held half), both for top-1 evidence on claims with annotated evidence."""
    gold = [set(c.evidence) for c in claims]
    feats = [rank_features(c.claim, c.sentences, p, cos) for c, (p, cos) in zip(claims, scored, strict=True)]
    order = np.random.default_rng(seed).permutation(len(claims))
    a, b = order[: len(claims) // 2], order[len(claims) // 2 :]

    def ranker_on(idx: Sequence[int] | np.ndarray) -> Ranker:
        x = np.concatenate([feats[i] for i in idx])
        y = [j in gold[i] for i in idx for j in range(len(feats[i]))]
        return Ranker.fit(x, y, seed)

    w_half = fit_rank_weight([scored[i] for i in a], [gold[i] for i in a])
    r_half = ranker_on(a)
    fallback = _top1([rank_scores(scored[i][0], scored[i][1], w_half) for i in b], [gold[i] for i in b])
    learned = _top1([r_half.score(feats[i]) for i in b], [gold[i] for i in b])
    weight = fit_rank_weight(scored, gold)
    ranker = ranker_on(range(len(claims))) if learned >= fallback else None
    return weight, ranker, {"held_half_top1_weighted_cosine": round(fallback, 4),
                            "held_half_top1_ranker": round(learned, 4)}  # fmt: skip


def fit_aggregator(
    model: SupportModel,
    cal_claims: Sequence[Any],
    corpus: dict[int, list[str]],
    settings: Settings,
) -> tuple[Aggregator, dict[str, Any]]:
    """The ranker and the aggregation/calibration, fitted on held-back TRAIN claims only: the evidence
    ranker on those with annotated evidence, the aggregator on `_calibration_set` (their cited abstracts,
    other abstracts, TRAIN-template hard cases). Reports both on a held half before refitting on all."""
    cfg = settings.support
    seed = cfg.seed
    rows = _calibration_set(cal_claims, corpus, seed, cfg.calibration_hard_per_type, cfg.calibration_claims)
    evidence_claims = [c for c in cal_claims if c.evidence][: cfg.calibration_claims]
    ev_scored = model.score([c.claim for c in evidence_claims], [c.sentences for c in evidence_claims])
    weight, ranker, rank_metrics = fit_ranker(evidence_claims, ev_scored, seed)
    ranking = Aggregator(coef=[], intercept=[], mean=[], scale=[], rank_weight=weight, ranker=ranker)
    groups, scored = _scored_rows(model, rows)
    x = np.stack(
        [
            ranking.features(r.claim, g, p, cos, passage=" ".join(r.sentences))[0]
            for r, g, (p, cos) in zip(rows, groups, scored, strict=True)
        ]
    )
    y = [r.label for r in rows]
    # fit on a random half, report on the other half (both inside the held-back TRAIN claims), refit on all
    order = np.random.default_rng(seed).permutation(len(rows))
    a, b = order[: len(rows) // 2], order[len(rows) // 2 :]
    half = Aggregator.fit(x[a], [y[i] for i in a], seed, c=AGGREGATOR_C)
    pred = [LABELS[i] for i in half.predict_proba(x[b]).argmax(axis=1)]
    held = _slice_report([rows[i] for i in b], pred)
    aggregator = Aggregator.fit(x, y, seed, c=AGGREGATOR_C)
    aggregator.rank_weight, aggregator.ranker = weight, ranker
    aggregator.feature_names = [
        *(f"{s}_{lab}" for s in ("max", "mean", "best") for lab in LABELS),
        "cos_max", "cos_best", "cos_mean", "num_agree_passage", "word_recall_passage",
    ]  # fmt: skip
    top1 = _top1([ranking.rank(c.claim, c.sentences, p, cos) for c, (p, cos) in zip(evidence_claims, ev_scored,
                  strict=True)], [set(c.evidence) for c in evidence_claims])  # fmt: skip
    metrics = {
        "calibration_rows": len(rows),
        "calibration_slice_half": macro_report([y[i] for i in b], pred, LABELS),
        "calibration_slice_half_shaped": held,
        "calibration_evidence_top1": round(top1, 4),
        "rank_weight": weight,
        "ranker": "learned" if ranker is not None else "weighted cosine",
        **rank_metrics,
    }
    return aggregator, metrics


def training_pairs(settings: Settings) -> list[Any]:
    """The seeded, label-balanced fine-tuning pairs (held-back calibration claims excluded)."""
    seed = settings.support.seed
    claims, corpus = citint_claims("train")
    fit_claims = [c for c in claims if not calibration_side(c.id, seed)]
    pool = (
        citint_pairs(fit_claims, corpus, seed)
        + kqa_pairs(seed)
        + pubmedqa_pairs()
        + hard_cases(fit_claims, held_out=False, seed=seed)
        + copy_pairs(fit_claims, seed)
    )
    pool = [p for p in pool if not calibration_side(p.group, seed)]
    return balanced(pool, settings.support.train_pairs, seed)


def finetune_head(
    settings: Settings,
    *,
    backbone: str | Path | None = None,
    device: str | None = None,
    progress: bool = True,
    say: Callable[[str], None] = lambda _msg: None,
    train: Sequence[Any] | None = None,
) -> PairClassifier:
    """Fine-tune the cross-encoder on `train` (default: `training_pairs`); its meta records the data."""
    cfg = settings.support
    seed = cfg.seed
    dev = resolve_device(device or cfg.device, "support.device")  # a missing GPU stops it before any work
    if train is None:
        say("support model: building training pairs (Citation-Integrity train, K-QA, PubMedQA, hard cases)")
        train = training_pairs(settings)
    bb = backbone_path(settings, backbone or cfg.backbone)
    say(f"support model: fine-tuning {bb.name} on {len(train)} pairs ({dev})")
    head = PairClassifier.train(
        [(p.claim, p.evidence) for p in train],
        [p.label for p in train],
        label_set=list(LABELS),
        backbone=bb,
        epochs=cfg.epochs,
        batch_size=cfg.batch_size,
        lr=cfg.lr,
        max_length=cfg.max_length,
        seed=seed,
        progress=progress,
        device=dev,
        freeze_word_embeddings=cfg.freeze_word_embeddings,
    )
    head.meta.update(
        backbone_name=str(backbone or cfg.backbone),
        device=dev,
        train_data_sha256=fingerprint(train),
        train_sources={s: sum(1 for p in train if p.source == s) for s in sorted({p.source for p in train})},
        label_counts_train={lab: sum(1 for p in train if p.label == lab) for lab in LABELS},
    )
    return head


def fit_and_save(
    settings: Settings,
    head: PairClassifier,
    folder: Path,
    *,
    say: Callable[[str], None] = lambda _msg: None,
    extra_meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Fit the evidence ranker and the aggregator on held-back train claims over `head`'s scores (int8 on
    the CPU where the settings say so: the scores inference will see), then save the artifact."""
    cfg = settings.support
    on_cpu = next(head.model.model.parameters()).device.type == "cpu"
    int8 = cfg.int8 and on_cpu  # (torch's dynamic int8 runs on the CPU only)
    scorer = head.int8() if int8 else head
    model = SupportModel(scorer, Aggregator(coef=[], intercept=[], mean=[], scale=[]), {}, cfg.max_sentences)
    say(
        "support model: fitting the evidence ranker and the aggregation/calibration on held-back train claims"
    )
    claims, corpus = citint_claims("train")
    cal_claims = [c for c in claims if calibration_side(c.id, cfg.seed)]
    aggregator, agg_metrics = fit_aggregator(model, cal_claims, corpus, settings)
    meta = {
        "kind": ARTIFACT_KIND,
        "support_version": ARTIFACT_VERSION,
        "task": "support",
        "calibration_rows": agg_metrics.pop("calibration_rows"),
        "calibration_hard_per_type": cfg.calibration_hard_per_type,
        "calibration_claims": cfg.calibration_claims,
        "aggregator_c": AGGREGATOR_C,
        "max_sentences": cfg.max_sentences,
        "int8": int8,
        "metrics": agg_metrics,
        **(extra_meta or {}),
    }
    if not on_cpu:  # artifacts and inference stay on the CPU
        head.model.to("cpu")
    head.save(folder, meta=meta)
    (folder / AGGREGATOR_FILE).write_text(aggregator.model_dump_json(indent=2))
    (folder / "metrics.json").write_text(json.dumps(meta["metrics"], indent=2))
    return head.meta


def train_support(
    settings: Settings,
    folder: Path | None = None,
    *,
    backbone: str | None = None,
    device: str | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Fine-tune, fit the aggregator, score on the calibration slice, save. Returns the saved meta."""
    folder = output_folder(folder or support_dir(settings))  # before minutes of fine-tuning
    say = log or (lambda msg: print(msg, file=sys.stderr) if progress else None)
    started, cpu_started = time.perf_counter(), time.process_time()
    head = finetune_head(settings, backbone=backbone, device=device, progress=progress, say=say)
    origin = f"trained:{head.meta['train_data_sha256'][:16]}"
    meta = fit_and_save(settings, head, folder, say=say, extra_meta={"origin": origin})
    meta["seconds_total"] = round(time.perf_counter() - started, 1)
    meta["cpu_seconds_total"] = round(time.process_time() - cpu_started, 1)  # / threads ~ wall on idle cores
    atomic_write_json(folder / META_FILE, meta)
    say(f"support model: saved to {folder} in {meta['seconds_total']:.0f} s")
    return meta


def to_evaluator_label(label: str) -> str:
    """The evaluator's label names (Supports / Contradicts / Neutral / Not relevant)."""
    return {"supports": "Supports", "contradicts": "Contradicts", "neutral": "Neutral"}.get(
        label, "Not relevant"
    )
