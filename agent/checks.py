"""Input checks before the graph: empty, over-long or clearly non-English questions get a clear message;
a question that leans on an earlier one is recognised (`reads_as_follow_up`), and so is one that names the
abstracts to answer from (`named_pmids`)."""

from __future__ import annotations

import re
import unicodedata

from biocite.agent.coverage import DocumentFrequencies, without_time
from biocite.agent.evidence import content_terms
from biocite.errors import InputError
from biocite.records import PMID_REFERENCE

_WORD = re.compile(r"[^\W\d_]+")

# Function words: English ones show a question is English; the others, that it clearly is not.
ENGLISH = frozenset(
    """the a an of in on for to is are was were be been do does did what which who whom whose how why when
    where whether with without and or not no than that this these those can could should would may might
    there their its it by from at as after before during between about into over under more most
    less""".split()
)
OTHER = frozenset(
    """el la los las del por para una uno que qué cómo cuál es son está están con sin pero como más
    le les des du une est sont avec pour dans quel quelle quels comment sur pas
    der die das den dem des ein eine ist sind mit ohne und oder nicht wie welche wird werden bei
    il lo gli di che è sono con per una come quale quali non
    o os as um uma não são com para como qual quais""".split()
)


def latin_share(text: str) -> float:
    """Share of letters that are basic Latin (accented Latin letters count as Latin, other scripts not)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    latin = sum(1 for c in letters if unicodedata.name(c, "").startswith("LATIN"))
    return latin / len(letters)


def looks_english(text: str) -> bool:
    """A cheap heuristic: refuse other scripts, and Latin-script text with more foreign than English
    function words. Terse keyword questions ("BRCA1 breast cancer risk") pass: they have neither."""
    if latin_share(text) < 0.8:
        return False
    words = [w.casefold() for w in _WORD.findall(text)]
    english = sum(w in ENGLISH for w in words)
    other = sum(w in OTHER and w not in ENGLISH for w in words)
    return not (other >= 2 and other > english)


def check_question(question: str, max_chars: int) -> str:
    """The question stripped of surrounding space, or an InputError saying what is wrong with it."""
    if not isinstance(question, str):  # biocite.ask(...) from Python: named, not an AttributeError
        raise InputError(f"the question must be text, not {type(question).__name__}")
    text = " ".join(question.split())
    if not text:
        raise InputError("the question is empty")
    if len(text) > max_chars:
        raise InputError(
            f"the question is {len(text)} characters long; "
            f"the limit is {max_chars} (agent.max_question_chars)"
        )
    if not any(c.isalpha() for c in text):
        if text.isdigit():  # a PMID pasted as the question
            raise InputError(
                f"the question is a number, not words; to read the abstract of PMID {text}, "
                f"use `biocite show {text}` or GET /v1/documents?pmids={text}"
            )
        raise InputError("the question has no words")
    if not looks_english(text):
        raise InputError("the question does not look like English; biocite answers English questions only")
    return text


# A question that refers back: a pronoun where the subject would be, or an elliptical opening.
PRONOUNS = re.compile(r"\b(it|its|they|them|their|this|that|these|those|he|she|such)\b", re.IGNORECASE)
_FOLLOW_UP_OPENING = re.compile(r"^(and|but|also|what about|how about|same)\b", re.IGNORECASE)
# "What were the adverse events?", "What was the dose?": a question word, a verb, and a definite phrase with
# nothing to say whose (no "of", "for", "in" ...): of what? Not "What is the treatment of hypertension?", "How does
# the immune system work?" or "The yeast infection is not transferable?".
_LINKS = r"(?:of|for|in|on|with|among|to|after|during|from|between|versus|vs|and|or|by|at)\b"
_ASKS_OF_THE = re.compile(
    r"^(?:what|which|who|when|where|how\s+\w+)\s+(?:is|are|was|were|did|does|do|has|have|had)\s+the\s+"
    rf"(?:(?!{_LINKS})[\w-]+\s+){{0,2}}(?!{_LINKS})[\w-]+\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# "What about pregnant women?", "And in children?", "And aspirin?" (a short phrase, no question of its own: not
# "And is it safe?"): the last whole question asked again of something else
_QUESTION_WORDS = (
    r"(?:what|how|why|when|where|which|who|is|are|was|were|does|do|did|can|could|should|will|would)"
)
ASKS_AGAIN_ABOUT = re.compile(
    r"^\s*(?:and\s+)?(?:what|how)\s+about\b|^\s*and\s+(?:in|for|with|among)\b"
    rf"|^\s*and\s+(?!{_QUESTION_WORDS}\b)[^?.!,;]{{1,40}}\?\s*$",
    re.IGNORECASE,
)
# A term in fewer than 1 % of the indexed abstracts, or in fewer than 50, names something of the question's
# own (in a small index nothing is generic enough to tell). Checked on the 796 questions in data/ (PubMedQA
# dev, BioGen 2024/2025, K-QA) against the embedded corpus: none of them reads as a follow-up.
OWN_TERM_SHARE = 0.01
OWN_TERM_DOCS = 50


def reads_as_follow_up(question: str, df: DocumentFrequencies) -> bool:
    """A question like "What about in children?", "Is it safe?" or "What were the adverse events?": it refers
    back (a pronoun, an elliptical opening, or a definite phrase it asks of alone) and has nothing of its own to
    search for (at most 3 content terms, none rare in the index). Asked with no earlier question, it would be
    answered from whatever "children" retrieves. A time horizon is nothing of its own ("How about in the long
    run?")."""
    terms = content_terms(without_time(question))
    refers_back = any(p.search(question) for p in (_FOLLOW_UP_OPENING, PRONOUNS, _ASKS_OF_THE))
    return refers_back and len(terms) <= 3 and names_nothing_of_its_own(question, df)


def names_nothing_of_its_own(question: str, df: DocumentFrequencies) -> bool:
    """Every content term of the question is common in the index (`OWN_TERM_SHARE`, `OWN_TERM_DOCS`): asked in a
    chat, "How long do patients stay in hospital?" after a question of laparoscopic adrenalectomy asks of it."""
    terms = content_terms(without_time(question))
    return all(df.share(t) >= OWN_TERM_SHARE and df.counts.get(t, 0) >= OWN_TERM_DOCS for t in terms)


# In brackets, a PMID is a reference ("Does aspirin prevent stroke (PMID 123)?"): dropped from the words
_BRACKETED_PMID = re.compile(r"\s*[(\[]\s*(?:" + PMID_REFERENCE.pattern + r")\s*[)\]]", re.IGNORECASE)
_PMID_MENTION = re.compile(r"(?<!\w)" + PMID_REFERENCE.pattern, re.IGNORECASE)


# "PMIDs 123, 456 and 789"
_PMID_LIST = re.compile(r"(?<!\w)PMIDs\s*:?\s*(\d{1,10}(?:\s*(?:,|and|&|or)\s*\d{1,10})+)\b", re.IGNORECASE)


def named_pmids(question: str) -> tuple[str, list[str]]:
    """The PMIDs a question names ("What did PMID 29768149 find about budesonide-formoterol?", "Do PMIDs 123
    and 456 agree?"), in order, and the question with each mention read as "the study" ("the studies"; dropped
    where it stands in brackets), so that its own words are what is searched for and checked in those
    abstracts: "PMID 29768149" is no concept to cover."""
    found = [(m.start(), m.group(1)) for m in _PMID_MENTION.finditer(question)]
    found += [(m.start(), n) for m in _PMID_LIST.finditer(question) for n in re.findall(r"\d+", m.group(1))]
    pmids = [n.lstrip("0") or "0" for _, n in sorted(found)]
    text = _PMID_LIST.sub("the studies", _BRACKETED_PMID.sub("", question))
    text = _PMID_MENTION.sub("the study", text)
    return " ".join(text.split()), list(dict.fromkeys(pmids))
