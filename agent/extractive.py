"""The no-LLM answer: the chosen evidence sentences themselves, deduplicated, best first, each citing its own
abstract. It is the fallback when the LLM fails and the baseline in the benchmarks."""

from __future__ import annotations

from biocite.agent.evidence import ANSWER_BEARING
from biocite.citations import count_words
from biocite.records import AnswerSentence, Citation, Evidence


def reports_finding(item: Evidence) -> bool:
    """Whether the findings model reads the sentence as answer-bearing (True when it was not asked)."""
    return item.answer is None or item.answer >= ANSWER_BEARING


def extractive_sentences(
    evidence: list[Evidence], max_sentences: int, max_words: int
) -> list[AnswerSentence]:
    """Evidence sentences in the evidence order (best first) within the sentence and word limits: those that
    report a finding (`reports_finding`), or, when none does, the best sentences. A question-like sentence
    of background or methods ("Patients with glaucoma were included.") answers nothing when findings are
    there to quote.

    `support` is 1.0: each sentence is a verbatim quote of the abstract it cites.
    """
    findings = [item for item in evidence if reports_finding(item)]
    out: list[AnswerSentence] = []
    seen: set[str] = set()
    words = 0
    for item in findings or evidence:
        key = " ".join(item.span.text.casefold().split())
        n = count_words(item.span.text)
        if key in seen or words + n > max_words:
            continue
        seen.add(key)
        out.append(
            AnswerSentence(
                text=item.span.text, citations=[Citation(pmid=item.pmid, evidence=[item])], support=1.0
            )
        )
        words += n
        if len(out) >= max_sentences:
            break
    return out
