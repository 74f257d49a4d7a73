"""Attribute first: choose evidence sentences in the retrieved abstracts, and the phrases inside them.

Relevance of a sentence to the question = a weighted mix of the embedding cosine (MiniLM by default) and
the share of the question's content terms the sentence contains (same tokenizer as BM25). In generate
mode the top few may further be judged by the LLM (see `graph.py`). Every span is an exact slice of the
abstract: `doc.abstract[span.start:span.end] == span.text`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from biocite.other_names import Names, asked_names, named_otherwise, with_other_names
from biocite.records import Document, Evidence, SearchHit, Sentence, Span
from biocite.sentences import is_metadata_sentence, refers_back, without_inline_label
from biocite.tokenize import american_spelling, tokenize


class TextEncoder(Protocol):
    """Anything that embeds texts: a `biocite.retrieval.Encoder`, or a `VectorCache` over one."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class RelevanceWeights:
    cosine: float = 0.6
    lexical: float = 0.4


class VectorCache:
    """Embeddings of texts already seen in this process (sentences recur across rounds and turns)."""

    def __init__(self, encoder: TextEncoder, max_items: int = 20_000) -> None:
        self.encoder = encoder
        self.max_items = max_items
        self._vectors: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing and len(self._vectors) + len(missing) > self.max_items:
            self._vectors.clear()  # full: start again, with every text of this call (some were cached)
            missing = list(dict.fromkeys(texts))
        if missing:
            for text, vector in zip(missing, self.encoder.encode(missing), strict=True):
                self._vectors[text] = np.asarray(vector, dtype=np.float32)
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])


def content_terms(text: str) -> set[str]:
    return set(tokenize(text, stem=True))


def lexical_overlap(question_terms: set[str], text: str, names: Names = ()) -> float:
    """Share of the question's content terms that occur in `text` (0 when the question has none), in either
    spelling ("hypokalaemia" / "hypokalemia"), a drug or condition of the question (`names`) counting when
    `text` writes it by another name."""
    if not question_terms:
        return 0.0
    found = content_terms(text)
    found |= named_otherwise(names, found)
    spelt = {american_spelling(t) for t in found}
    return sum(t in found or american_spelling(t) in spelt for t in question_terms) / len(question_terms)


def relevance(cosine: float, lexical: float, weights: RelevanceWeights = RelevanceWeights()) -> float:
    return float(np.clip(weights.cosine * max(cosine, 0.0) + weights.lexical * lexical, 0.0, 1.0))


# Clause boundaries: punctuation, and conjunctions / relative pronouns that open a new clause.
_BOUNDARY = re.compile(
    r"[,;:()\[\]]"
    r"|\s(?:and|but|whereas|while|which|although|though|because|compared (?:with|to)|versus|vs\.?)\s",
    re.IGNORECASE,
)
_TRIM = " \t\n.,;:()[]"


def clause_spans(sentence: Sentence) -> list[tuple[int, int]]:
    """(start, end) offsets, relative to the sentence, of its clauses, trimmed of spaces and punctuation."""
    spans: list[tuple[int, int]] = []
    cursor = 0
    text = sentence.text
    for match in [*_BOUNDARY.finditer(text), None]:
        end = match.start() if match else len(text)
        piece = text[cursor:end]
        left = len(piece) - len(piece.lstrip(_TRIM))
        right = len(piece.rstrip(_TRIM))
        if right - left >= 3:
            spans.append((cursor + left, cursor + right))
        if match:
            cursor = match.end()
    return spans


def contributory_phrases(
    sentence: Sentence, abstract: str, question_terms: set[str], max_phrases: int = 2
) -> list[Span]:
    """The clauses sharing the most content terms with the question (none if no clause shares any)."""
    scored = []
    for start, end in clause_spans(sentence):
        shared = len(question_terms & content_terms(sentence.text[start:end]))
        if shared:
            scored.append((shared, -(end - start), start, end))
    best = sorted(scored, reverse=True)[:max_phrases]
    phrases = []
    for _, _, start, end in sorted(best, key=lambda item: item[2]):
        abs_start, abs_end = sentence.start + start, sentence.start + end
        phrases.append(Span(start=abs_start, end=abs_end, text=abstract[abs_start:abs_end]))
    return phrases


@dataclass
class ScoredSentence:
    sentence: Sentence
    cosine: float
    lexical: float
    relevance: float
    answer: float | None = None  # P(answer-bearing), when an answer scorer is given
    retrieval: float = 0.0  # its abstract's score relative to its query's best hit (`relative_scores`)
    lent: float = 0.0  # relevance its abstract lends it (`lend_relevance`): it clears the bars, not the order

    @property
    def standing(self) -> float:
        """The relevance the bars read: its own, or what its abstract lends it."""
        return max(self.relevance, self.lent)

    def rank(self, answer_weight: float, retrieval_weight: float = 0.0) -> float:
        """The order of evidence: relevance mixed with P(answer-bearing) when known, then with the retrieval
        score of the sentence's abstract (which reads the whole abstract and its title, not one sentence)."""
        own = self.relevance
        if self.answer is not None:
            own = (1.0 - answer_weight) * self.relevance + answer_weight * self.answer
        return (1.0 - retrieval_weight) * own + retrieval_weight * self.retrieval


# P(answer-bearing) at which a sentence reports a finding: the findings model's own decision boundary
ANSWER_BEARING = 0.5

# (question, sentences, sentences in each one's abstract) -> P(answer-bearing) per sentence
AnswerScorer = Callable[[str, list[Sentence], list[int]], np.ndarray]


def score_sentences(
    question: str,
    sentences: Sequence[Sentence],
    cache: VectorCache,
    weights: RelevanceWeights = RelevanceWeights(),
) -> list[ScoredSentence]:
    if not sentences:
        return []
    vectors = cache.encode([with_other_names(question), *[s.text for s in sentences]])
    cosines = vectors[1:] @ vectors[0]
    terms = content_terms(question)
    names = asked_names(question)
    out = []
    for sentence, cosine in zip(sentences, cosines, strict=True):
        lexical = lexical_overlap(terms, sentence.text, names)
        out.append(
            ScoredSentence(sentence, float(cosine), lexical, relevance(float(cosine), lexical, weights))
        )
    return out


def relative_scores(hits: Sequence[SearchHit]) -> dict[str, float]:
    """The hits of one query, scored relative to its best hit (1.0): score / best for non-negative scores
    (fusion), min-max for scores that can be negative (reranker logits)."""
    if not hits:
        return {}
    scores = np.array([h.score for h in hits], dtype=np.float64)
    low, high = float(scores.min()), float(scores.max())
    if low >= 0 and high > 0:
        relative = scores / high
    elif high > low:
        relative = (scores - low) / (high - low)
    else:
        relative = np.ones_like(scores)
    return {h.pmid: round(float(r), 4) for h, r in zip(hits, relative, strict=True)}


def covering_picks(ranked: list[ScoredSentence], question_terms: set[str], k: int) -> list[ScoredSentence]:
    """Up to k sentences of one abstract: the best-ranked first; then, among its answer-bearing sentences
    (P >= 0.5, the findings model's own decision boundary), the one naming most question terms the picks
    so far leave out ("severe exacerbations" after a conclusion about symptom control), best rank on ties.
    Without P(answer-bearing), or when no such sentence adds a term: rank order."""
    picks: list[ScoredSentence] = []
    covered: set[str] = set()
    rest = list(ranked)
    while rest and len(picks) < k:
        gain = [
            len((question_terms & content_terms(s.sentence.text)) - covered)
            if picks and s.answer is not None and s.answer >= ANSWER_BEARING
            else 0
            for s in rest
        ]
        best = max(range(len(rest)), key=lambda i: (gain[i], -i))
        pick = rest.pop(best)
        picks.append(pick)
        covered |= question_terms & content_terms(pick.sentence.text)
    return picks


def select_evidence(
    question: str,
    docs: dict[str, Document],
    sentences: dict[str, list[Sentence]],
    cache: VectorCache,
    *,
    per_doc: int,
    min_relevance: float,
    weights: RelevanceWeights = RelevanceWeights(),
    duplicate_cosine: float = 0.95,
    answer_scorer: AnswerScorer | None = None,
    answer_weight: float = 0.0,
    retrieval_scores: dict[str, float] | None = None,
    retrieval_weight: float = 0.0,
    strong_abstract: float | None = None,
    lent_margin: float = 0.0,
    only: Callable[[str], bool] | None = None,
) -> list[Evidence]:
    """Up to `per_doc` sentences per abstract at or above `min_relevance` (and, with `only`, whose text it
    accepts), best first, near-duplicates dropped. With an `answer_scorer`, "best" is `ScoredSentence.rank`:
    relevance mixed with P(answer-bearing), so findings come before sentences that merely restate the question; with
    `retrieval_scores` (by PMID) and a `retrieval_weight`, also with the score of the sentence's abstract, so
    a finding of the abstract that matches the whole question comes before one of an abstract that shares
    a word with it (an aspirin-and-melanoma sentence for an aspirin-and-cardiovascular question).

    Nothing below the relevance bar is kept, so the sufficiency check sees thin evidence as thin, and no
    metadata sentence (trial registration, funding, keyword lists: `biocite.sentences.is_metadata`). With
    `strong_abstract`, the best hit of a query, when its best sentence (metadata aside: a keyword list is no
    evidence) reaches it, lends that relevance less `lent_margin` to its answer-bearing sentences
    (`lend_relevance`).
    """
    terms = content_terms(question)
    chosen: list[tuple[ScoredSentence, Document]] = []
    by_doc: dict[str, list[ScoredSentence]] = {}
    for pmid, doc in docs.items():
        own = sentences.get(pmid, [])
        scored = score_sentences(question, own, cache, weights)
        if answer_scorer is not None and own:  # scored on the whole abstract: position is a feature
            probs = answer_scorer(question, own, [len(own)] * len(own))
            for item, p in zip(scored, probs, strict=True):
                item.answer = float(p)
        retrieval = (retrieval_scores or {}).get(pmid, 0.0)
        for item in scored:
            item.retrieval = retrieval
        by_doc[pmid] = [item for item in scored if not is_metadata_sentence(doc, item.sentence)]
    if strong_abstract is not None:
        for pmid in top_hits(retrieval_scores or {}):
            lend_relevance(by_doc.get(pmid, []), strong_abstract, lent_margin)
    for pmid, doc in docs.items():
        scored = by_doc[pmid]
        scored.sort(key=lambda s: s.rank(answer_weight), reverse=True)
        eligible = [
            s for s in scored if s.standing >= min_relevance and (only is None or only(s.sentence.text))
        ]
        chosen.extend((s, doc) for s in covering_picks(eligible, terms, per_doc))
    chosen.sort(key=lambda item: item[0].rank(answer_weight, retrieval_weight), reverse=True)
    kept: list[Evidence] = []
    kept_vectors: list[np.ndarray] = []
    for candidate, doc in chosen:
        vector = cache.encode([candidate.sentence.text])[0]
        if any(float(vector @ other) >= duplicate_cosine for other in kept_vectors):
            continue
        kept_vectors.append(vector)
        kept.append(to_evidence(candidate.sentence, doc, terms, candidate.standing, candidate.answer))
    return kept


def top_hits(retrieval_scores: Mapping[str, float]) -> list[str]:
    """The abstracts that were the best hit of a query (relative retrieval score 1, `relative_scores`)."""
    return [pmid for pmid, score in retrieval_scores.items() if score >= 1.0]


def lend_relevance(scored: list[ScoredSentence], strong: float, margin: float) -> None:
    """In an abstract whose best sentence reaches `strong`, each answer-bearing sentence (P >= `ANSWER_BEARING`)
    stands as relevant as that best sentence less `margin` (the agent's relevance margin: what still stands
    beside the best evidence) before the relevance bars, not in the order. Relevance is question similarity,
    and a strong abstract's finding is often worded otherwise: "The frequency and topographic distribution of
    LNM are not modified by NACT" scored 0.13 for "Could the extent of lymphadenectomy be modified by neoadjuvant
    chemotherapy in cervical cancer?", below the bar, while the abstract's aim restating the question scored
    0.65 and led. Only the best hit of a query lends (`top_hits`), and only when strong: another abstract's
    findings are on another question as often as not (lending from every strong abstract added 11 quotes of
    other abstracts to 300 TRAIN answers, from the best hits 3). The order stays on the sentence's own
    relevance: lent to the order too, 38 of 300 TRAIN answers opened on a closing aside instead of the
    conclusion on the question ("This effect could not be explained by stage migration." before "The risk of
    biochemical recurrence ... is reduced by approximately 50% ..."), and lent whole, the README demo lost its
    severe-exacerbation result."""
    best = max((s.relevance for s in scored), default=0.0)
    if best < strong:
        return
    for item in scored:
        if item.answer is not None and item.answer >= ANSWER_BEARING:
            item.lent = best - margin


def to_evidence(
    sentence: Sentence, doc: Document, question_terms: set[str], score: float, answer: float | None = None
) -> Evidence:
    text = doc.abstract[sentence.start : sentence.end]
    return Evidence(
        pmid=doc.pmid,
        sentence_index=sentence.index,
        span=Span(start=sentence.start, end=sentence.end, text=text),
        phrases=contributory_phrases(sentence, doc.abstract, question_terms),
        relevance=round(score, 4),
        answer=None if answer is None else round(answer, 4),
    )


def antecedent(item: Evidence, sentences: Mapping[str, Sequence[Sentence]]) -> Sentence | None:
    """The abstract's sentence before this evidence sentence when this one opens on a pronoun pointing back
    to it ("This is therefore a rare case of an inherited WAGR deletion."), else None. `sentences`: each
    abstract's sentences, by PMID."""
    of_abstract = sentences.get(item.pmid, ())
    i = item.sentence_index - 1
    if not refers_back(without_inline_label(item.span.text)) or not 0 <= i < len(of_abstract):
        return None
    return of_abstract[i] if of_abstract[i].index == i else None


def with_antecedents(evidence: list[Evidence], sentences: Mapping[str, Sequence[Sentence]]) -> list[Evidence]:
    """The evidence with, just before each sentence that points back, the sentence it points back to (once),
    so what the generator reads, cites and is verified against says what "this" or "it" is."""
    shown = {(e.pmid, e.sentence_index) for e in evidence}
    out: list[Evidence] = []
    for item in evidence:
        before = antecedent(item, sentences)
        if before is not None and (item.pmid, before.index) not in shown:
            shown.add((item.pmid, before.index))
            span = Span(start=before.start, end=before.end, text=before.text)
            # not scored against the question itself: it carries the relevance of the sentence pointing to it
            out.append(
                Evidence(pmid=item.pmid, sentence_index=before.index, span=span, relevance=item.relevance)
            )
        out.append(item)
    return out
