"""The no-LLM answer: the chosen evidence sentences themselves, deduplicated, best first, each citing its own
abstract. It is the fallback when the LLM fails and the baseline in the benchmarks."""

from __future__ import annotations

from biocite.agent.findings import findings_or_all
from biocite.citations import count_words
from biocite.records import AnswerSentence, Citation, Evidence
from biocite.sentences import without_inline_label


def extractive_sentences(
    evidence: list[Evidence], max_sentences: int, max_words: int
) -> list[AnswerSentence]:
    """Evidence sentences in the evidence order (best first) within the sentence and word limits: those that
    report a finding, or, when none does, the best sentences (`findings_or_all`).

    `support` is 1.0: each sentence is a verbatim quote of the abstract it cites, less a section label written
    into the abstract's text ("CONCLUSIONS: "); the cited evidence keeps the whole sentence.
    """
    out: list[AnswerSentence] = []
    seen: set[str] = set()
    words = 0
    for item in findings_or_all(evidence):
        text = without_inline_label(item.span.text)
        key = " ".join(text.casefold().split())
        n = count_words(text)
        if key in seen or words + n > max_words:
            continue
        seen.add(key)
        out.append(
            AnswerSentence(text=text, citations=[Citation(pmid=item.pmid, evidence=[item])], support=1.0)
        )
        words += n
        if len(out) >= max_sentences:
            break
    return out
