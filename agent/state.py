"""The typed state that flows through the answering graph (one question = one pass; chat keeps `history`)."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from pydantic import BaseModel, Field

from biocite.citations import DraftSentence
from biocite.records import Answer, AnswerSentence, Evidence, NodeTiming, QuestionType, SearchHit, Verdict


class Turn(BaseModel):
    """One finished exchange of a chat, kept by the checkpointer to rewrite follow-up questions."""

    question: str
    standalone: str
    answer: str
    cited: list[str] = Field(default_factory=list)
    focus: list[str] = Field(default_factory=list)  # the PMIDs it named (a follow-up on it reads them too)


class AgentState(TypedDict, total=False):
    question: str  # as asked
    mode: str  # "generate" | "extractive"
    standalone: str  # the question rewritten to stand alone (chat follow-ups); else the question
    needs_context: bool  # it refers back to an earlier question and there is none: the agent abstains
    focus: list[str]  # PMIDs the question names ("What did PMID 29768149 find?"): answered from those alone
    round: int  # retrieval rounds done
    queries: list[str]  # every query searched, in order
    hits: list[SearchHit]  # every abstract retrieved, in order of first retrieval
    retrieval_scores: dict[str, float]  # each hit's score relative to the best hit of its query (1.0)
    evidence: list[Evidence]  # chosen evidence sentences, best first
    cleared: int  # evidence sentences that cleared the relevance bar, before the coverage filter
    # of each evidence abstract naming key concepts only in passing (its other sentences dropped), their labels
    in_passing_by_pmid: dict[str, list[str]]
    not_covered: list[str]  # key concepts of the question that no evidence abstract mentions
    concepts_by_pmid: dict[str, list[str]]  # for each retrieved abstract checked, the concepts it covers
    unknown_concepts: list[str]  # ... of them, those no indexed abstract mentions: the agent abstains
    readings: list[str]  # how question words no indexed abstract has were read in the evidence
    sufficient: bool | None  # the evidence cleared the relevance bars (before the coverage filter)
    question_type: QuestionType
    verdict: Verdict | None  # yes/no questions only
    verdict_probability: float | None
    verdict_evidence: list[Evidence]  # what the verdict read, best first: the bottom line quotes it
    drafts: list[DraftSentence]  # the generator's parsed sentences, before verification
    sentences: list[AnswerSentence]  # the answer's sentences
    answer_mode: str  # what produced `sentences` ("generate", or "extractive" also on fallback)
    llm_failed: bool
    abstain_reason: str | None
    notes: list[str]
    timings: list[NodeTiming]
    answer: Answer | None
    history: Annotated[list[Turn], operator.add]  # grows across the turns of a chat thread


def fresh_turn(question: str, mode: str) -> AgentState:
    """The input of one pass: every per-question field reset (a chat thread keeps only `history`)."""
    return AgentState(
        question=question,
        mode=mode,
        standalone=question,
        needs_context=False,
        focus=[],
        round=0,
        queries=[],
        hits=[],
        retrieval_scores={},
        evidence=[],
        cleared=0,
        in_passing_by_pmid={},
        not_covered=[],
        concepts_by_pmid={},
        unknown_concepts=[],
        readings=[],
        sufficient=None,
        verdict=None,
        verdict_probability=None,
        verdict_evidence=[],
        drafts=[],
        sentences=[],
        answer_mode=mode,
        llm_failed=False,
        abstain_reason=None,
        notes=[],
        timings=[],
        answer=None,
    )
