"""The no-LLM answer: the chosen evidence sentences themselves, deduplicated, best first, each citing its own
abstract. It is the fallback when the LLM fails and the baseline in the benchmarks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from biocite.agent.evidence import antecedent
from biocite.agent.findings import findings_or_all
from biocite.citations import count_words
from biocite.records import AnswerSentence, Citation, Evidence, Sentence
from biocite.sentences import states_aim, without_inline_label


def extractive_sentences(
    evidence: list[Evidence],
    max_sentences: int,
    max_words: int,
    sentences: Mapping[str, Sequence[Sentence]] | None = None,
) -> list[AnswerSentence]:
    """Evidence sentences in the evidence order (best first) within the sentence and word limits: those that
    report a finding, or, when none does, the best sentences (`findings_or_all`); statements of a study's aim
    ("The purpose of this study was to ...", `states_aim`) only when nothing else is left.

    `support` is 1.0: each sentence is a verbatim quote of the abstract it cites, less a section label written
    into the abstract's text ("CONCLUSIONS: "); the cited evidence keeps the whole sentence. A sentence that
    opens on a pronoun pointing back ("It was related to ...", "However, its role ...") is quoted with the
    sentence before it in its abstract (`sentences`: each abstract's sentences, when the caller has them), so the
    quote says what it is about; the cited evidence is the chosen sentence alone.
    """
    out: list[AnswerSentence] = []
    seen: set[str] = set()
    words = 0
    chosen = findings_or_all(evidence)
    for item in [e for e in chosen if not states_aim(e.span.text)] or chosen:  # an aim answers nothing
        text = without_inline_label(item.span.text)
        before = _sentence_before(item, sentences or {})
        before = "" if _key(before) in seen else before  # quoted already
        keys = [_key(t) for t in (before, text) if t]
        quote = f"{before} {text}" if before else text
        n = count_words(quote)
        if _key(text) in seen or words + n > max_words:
            continue
        seen.update(keys)
        out.append(
            AnswerSentence(text=quote, citations=[Citation(pmid=item.pmid, evidence=[item])], support=1.0)
        )
        words += n
        if len(out) >= max_sentences:
            break
    return out


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def _sentence_before(item: Evidence, sentences: Mapping[str, Sequence[Sentence]]) -> str:
    """The abstract's sentence before this one when this one refers back to it, else ""."""
    before = antecedent(item, sentences)
    return "" if before is None else without_inline_label(before.text)
