"""Records that cross module boundaries: documents, sentences, search hits.

Offsets are character offsets into `Document.abstract` (the stored abstract text), so a citation can point
at an exact span: `doc.abstract[s.start:s.end] == s.text` always holds.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, computed_field

from biocite.errors import InputError
from biocite.html import render

# About a quarter of the shipped JSONL abstracts (PubMedQA's sources) come without a title.
UNTITLED = "(no title in the corpus)"

_PMID = re.compile(r"[1-9][0-9]{0,9}")


def pmid_problem(value: Any) -> str | None:
    """Why `value` is not a PMID (a positive integer, at most 10 digits, no sign or leading zero)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return f"expected a PMID (positive integer), got {type(value).__name__}"
    text = str(value).strip()
    if not _PMID.fullmatch(text):
        return f"not a PMID (a positive integer): {text[:40]!r}"
    return None


def check_pmid(value: Any) -> str:
    """The PMID as its canonical string, or an InputError; used at every boundary (readers, CLI, API)."""
    problem = pmid_problem(value)
    if problem:
        raise InputError(problem)
    return str(value).strip()


# A PMID as people copy it: "PMID: 29768149", "PubMed ID 29768149", a PubMed link (group 1: the digits)
PMID_REFERENCE = re.compile(
    r"(?:(?:PMID|PubMed\s+ID)\s*[:#]?\s*"
    r"|https?://(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed)/)(\d{1,10})\b/?",
    re.IGNORECASE,
)


def copied_pmid(value: str) -> str:
    """The digits of a PMID as copied ("PMID: 29768149", a PubMed link); any other value as it is (to be
    checked where it is used)."""
    reference = PMID_REFERENCE.fullmatch(value.strip())
    return reference.group(1) if reference else value


def given_pmid(value: str) -> str:
    """A PMID a user typed on the command line, also as copied: its canonical string, or an InputError."""
    return check_pmid(copied_pmid(value))


def _pmid_field(value: Any) -> Any:
    problem = pmid_problem(value)
    if problem:
        raise ValueError(problem)
    return str(value).strip()


# A PMID as stored everywhere: the digits of a positive integer ("-5", "abc/../etc", "[/bold]" refused).
Pmid = Annotated[str, BeforeValidator(_pmid_field)]


QuestionType = Literal["yes/no", "factoid", "list", "open"]
Verdict = Literal["yes", "no", "mixed", "insufficient"]
# A verdict is said with how sure the verdict model is, in the words of the IPCC's likelihood scale for calibrated
# probabilities (likely: >= 0.66; about as likely as not below), a scale fixed outside biocite's data. A "no" at
# 0.51 read as certain above a quote that says the opposite ("Vitamin C reduces the prevalence of complex regional
# pain syndrome"); on held-out PubMedQA questions extractive verdicts below 0.66 were right 0.55 of the time.
LIKELY = 0.66


def hedged(verdict: str | None, probability: float | None) -> bool:
    """A stated verdict (yes, no, mixed) below `LIKELY` as shown (two decimals): said as uncertain."""
    return verdict in ("yes", "no", "mixed") and probability is not None and round(probability, 2) < LIKELY


class Section(BaseModel):
    """A labelled part of a structured abstract (BACKGROUND, METHODS, ...)."""

    label: str | None = None
    start: int
    end: int


class Document(BaseModel):
    """One PubMed abstract."""

    pmid: Pmid
    title: str = ""
    abstract: str = ""
    sections: list[Section] = Field(default_factory=list)
    year: int | None = None
    journal: str | None = None
    mesh: list[str] = Field(default_factory=list)
    publication_types: list[str] = Field(default_factory=list)

    @property
    def url(self) -> str:
        return f"https://pubmed.ncbi.nlm.nih.gov/{self.pmid}/"

    @property
    def text(self) -> str:
        """Title and abstract, as indexed."""
        return f"{self.title}\n{self.abstract}".strip()


class Sentence(BaseModel):
    """One sentence of an abstract, addressable as (pmid, index, start, end)."""

    pmid: Pmid
    index: int
    start: int
    end: int
    text: str


class SearchHit(BaseModel):
    """One retrieved abstract with the scores of each retrieval stage that saw it.

    `document` and `sentences` carry the abstract itself to the agent (fetched once, at retrieval); they are
    left out of serialised hits (JSON output, chat checkpoints), which stay as small as before.
    """

    pmid: Pmid
    title: str
    score: float
    rank: int
    stage_scores: dict[str, float] = Field(default_factory=dict)
    best_sentence: Sentence | None = None
    document: Document | None = Field(default=None, exclude=True, repr=False)
    sentences: list[Sentence] = Field(default_factory=list, exclude=True, repr=False)

    @property
    def display_title(self) -> str:
        return self.title or UNTITLED


# --- answers -----------------------------------------------------------------------------------------


class Span(BaseModel):
    """A character span of an abstract: `doc.abstract[start:end] == text`."""

    start: int
    end: int
    text: str


class Evidence(BaseModel):
    """One evidence sentence chosen before writing, with the phrases inside it that carry the answer."""

    pmid: Pmid
    sentence_index: int
    span: Span
    phrases: list[Span] = Field(default_factory=list)
    # 0..1, how well the sentence matches the question (embedding cosine + term overlap); a finding of a
    # query's strong best hit: at least its abstract's best sentence's less the relevance margin
    # (agent/evidence.py `lend_relevance`)
    relevance: float
    answer: float | None = (
        None  # P(the sentence reports a finding that answers the question); agent/findings.py
    )


class Citation(BaseModel):
    """A cited PMID and the evidence sentences of that abstract the answer sentence rests on."""

    pmid: Pmid
    evidence: list[Evidence] = Field(default_factory=list)


class AnswerSentence(BaseModel):
    text: str
    citations: list[Citation] = Field(default_factory=list)
    support: float | None = None  # verified P(supported by its own citations); None = not verified
    # "bottom_line": the verdict sentence of a yes/no question (its probability is Answer.verdict_probability)
    kind: Literal["finding", "bottom_line"] = "finding"


class Reference(BaseModel):
    pmid: Pmid
    title: str
    year: int | None = None
    journal: str | None = None

    @property
    def url(self) -> str:
        return f"https://pubmed.ncbi.nlm.nih.gov/{self.pmid}/"

    @property
    def display_title(self) -> str:
        return self.title or UNTITLED


class NodeTiming(BaseModel):
    node: str
    seconds: float


class Trace(BaseModel):
    """What the agent did: enough to audit an answer or an abstention."""

    queries: list[str] = Field(default_factory=list)
    rounds: int = 0
    retrieved: list[str] = Field(default_factory=list)
    timings: list[NodeTiming] = Field(default_factory=list)
    models: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


class Answer(BaseModel):
    question: str
    sentences: list[AnswerSentence] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    abstained: bool = False
    abstain_reason: str | None = None
    mode: str = "generate"
    question_type: QuestionType | None = None
    # yes/no questions: the bottom line and its probability from the trained verdict model (agent/verdict.py)
    verdict: Verdict | None = None
    verdict_probability: float | None = None
    not_covered: list[str] = Field(default_factory=list)  # key concepts of the question in no evidence
    # how question words no indexed abstract has were read ("read 'cirrotics' as 'cirrhotics': ...")
    readings: list[str] = Field(default_factory=list)
    # what a reader must know about the cited evidence as a whole ("every cited study is in animals ...")
    caveats: list[str] = Field(default_factory=list)
    trace: Trace = Field(default_factory=Trace)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict_shown(self) -> str | None:
        """The verdict as the CLI and web page head it: "no", or "uncertain, leaning no" below `LIKELY` (as
        the bottom-line sentence says), so a bold "Verdict: no" never heads a probability of 0.47."""
        if not hedged(self.verdict, self.verdict_probability):
            return self.verdict
        return "uncertain, mixed" if self.verdict == "mixed" else f"uncertain, leaning {self.verdict}"

    @property
    def cited_pmids(self) -> list[str]:
        seen: dict[str, None] = {}
        for sentence in self.sentences:
            for citation in sentence.citations:
                seen.setdefault(citation.pmid, None)
        return list(seen)

    def _repr_html_(self) -> str:
        """How a notebook shows an Answer: cited sentences, quoted evidence, PubMed links."""
        refs = {pmid: i for i, pmid in enumerate(self.cited_pmids, start=1)}
        return render("answer.html.j2", answer=self, refs=refs)
