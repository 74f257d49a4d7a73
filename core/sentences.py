"""Sentence splitting of abstracts with exact character offsets.

pysbd (rule-based, with abbreviation handling for "e.g.", "vs.", "et al.", "P<.05", decimals) proposes
the sentences; a few repairs undo its false splits that are common in abstracts: a lone "." (from
"..") becomes part of the sentence before it, and a piece that starts with a plain lowercase word
("aureus", "per"), with ",;)]" or follows text that does not end a sentence ("(Arm | 2)") is joined to
the previous sentence. Section boundaries of structured abstracts are always sentence boundaries.

pysbd was preferred over nupunkt 0.8 (which is ~40x faster) after comparing both on 1,200 corpus
abstracts: nupunkt misses boundaries after unit abbreviations ("for 48 h. The", "7-10 min. Next"),
which are frequent in biomedical text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

import pysbd

from biocite.records import Document, Section, Sentence

# Raised whenever the same abstract would split differently; an index built with an older splitter re-splits
# the documents `SPLIT_CHANGES` says may change on its next `biocite index build` (its embeddings are kept).
# 2: a label glued to the sentence before it starts a sentence; "AIM" and "RESULT(S)" are labels. 3: labels
# joined or cut short by "&" ("BACKGROUND & AIMS:", "MATERIALS & A retrospective study").
SPLITTER_VERSION = 3
# What each version changed, as a test on an abstract that is False wherever it splits (and sections) exactly as the
# version before (None: any abstract may change). An index of an older splitter re-splits only the documents that
# a newer version may change: version 3 touches abstracts with an "&" alone, where a full re-split of PubMed's
# tens of millions of abstracts takes days on 2 cores.
SPLIT_CHANGES: dict[int, Callable[[str], bool] | None] = {2: None, 3: lambda abstract: "&" in abstract}


def may_split_differently(abstract: str, since: int | None) -> bool:
    """Whether the splitters after version `since` (None: one older than version 2) may split `abstract`
    differently from it."""
    if since is None:
        return True
    changes = [test for version, test in SPLIT_CHANGES.items() if version > since]
    return any(test is None or test(abstract) for test in changes)


_ENDS_SENTENCE = re.compile(r"[.!?][\"'”’)\]]*$")
_JOIN_START = re.compile(r"[,;)\]]|[a-z]+\b(?![-\d])")
_HAS_WORD = re.compile(r"\w")


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False, char_span=False)


# pysbd's time grows faster than the text's length (a 25 MB abstract never finished); longer regions are
# cut into pieces of at most this many characters at a sentence-like boundary, so splitting is linear.
PIECE_CHARS = 4000
_PIECE_CUT = re.compile(r"[.!?][\"'”’)\]]*\s+(?=[A-Z0-9(\[])")


def _pieces(text: str) -> list[tuple[int, int]]:
    """(start, end) pieces of `text`, each <= PIECE_CHARS, cut after a sentence end (else at a space)."""
    pieces: list[tuple[int, int]] = []
    start = 0
    while len(text) - start > PIECE_CHARS:
        window = text[start : start + PIECE_CHARS]
        cuts = [m.end() for m in _PIECE_CUT.finditer(window, PIECE_CHARS // 2)]
        cut = cuts[-1] if cuts else (window.rfind(" ", PIECE_CHARS // 2) + 1 or PIECE_CHARS)
        pieces.append((start, start + cut))
        start += cut
    pieces.append((start, len(text)))
    return pieces


def _raw_spans(text: str, offset: int) -> list[tuple[int, int]]:
    """pysbd's sentences of `text` as tight (start, end) spans, shifted by `offset`."""
    if len(text) > PIECE_CHARS:
        return [span for lo, hi in _pieces(text) for span in _piece_spans(text[lo:hi], offset + lo)]
    return _piece_spans(text, offset)


def _piece_spans(text: str, offset: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    cursor = 0
    for piece in _segmenter().segment(text):
        piece = piece.strip()
        if not piece:
            continue
        start = text.find(piece, cursor)
        if start < 0:  # pysbd altered the text: keep the rest as one sentence rather than lose it
            rest = text[cursor:]
            if rest.strip():
                lead = len(rest) - len(rest.lstrip())
                spans.append((offset + cursor + lead, offset + len(text.rstrip())))
            return spans
        cursor = start + len(piece)
        spans.append((offset + start, offset + cursor))
    return spans


def _repair(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join pieces that pysbd split off by mistake to the sentence before them."""
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if out:
            prev = text[out[-1][0] : out[-1][1]]
            piece = text[start:end]
            if not _HAS_WORD.search(piece) or not _ENDS_SENTENCE.search(prev) or _JOIN_START.match(piece):
                out[-1] = (out[-1][0], end)
                continue
        out.append((start, end))
    return out


def _regions(doc: Document) -> list[tuple[int, int]]:
    """Consecutive regions of the abstract, cut at every section start and end and before every label glued
    to the sentence before it."""
    n = len(doc.abstract)
    cuts = {0, n, *glued_label_starts(doc.abstract)}
    for section in doc.sections:
        cuts.update(c for c in (section.start, section.end) if 0 <= c <= n)
    points = sorted(cuts)
    return list(zip(points, points[1:], strict=False))


def sentence_spans(doc: Document) -> list[tuple[int, int]]:
    """(start, end) offsets into doc.abstract of each sentence, in order."""
    spans: list[tuple[int, int]] = []
    for lo, hi in _regions(doc):
        region = doc.abstract[lo:hi]
        if region.strip():
            spans.extend(_repair(doc.abstract, _raw_spans(region, lo)))
    return spans


def split_sentences(doc: Document) -> list[Sentence]:
    """Sentences of doc.abstract (not the title): doc.abstract[s.start:s.end] == s.text."""
    return [
        Sentence(pmid=doc.pmid, index=i, start=start, end=end, text=doc.abstract[start:end])
        for i, (start, end) in enumerate(sentence_spans(doc))
    ]


BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")


def split_text(text: str) -> list[str]:
    """Sentences of free text (pysbd, rule based); line breaks and bullets always end a sentence."""

    segmenter = pysbd.Segmenter(language="en", clean=False)
    out: list[str] = []
    for line in text.splitlines():
        line = BULLET.sub("", line).strip()
        if line:
            out.extend(s.strip() for s in segmenter.segment(line) if s.strip())
    return out


# An abstract's metadata, not its content: trial registration, funding and disclosures, keyword / MeSH lists,
# level of evidence, copyright. Such a sentence names the topic's words ("Medical Subject Headings (MeSH):
# mammography screening, telephone counseling, ...") but reports nothing, so it is never evidence.
_METADATA_SECTION = re.compile(
    r"REGIST|FUNDING|SOURCES? OF SUPPORT|^SUPPORT$|DISCLOSURE|CONFLICTS? OF INTEREST|COMPETING|KEY ?WORDS|"
    r"INDEX TERMS|\bMESH\b|LEVEL OF EVIDENCE|COPYRIGHT|ACKNOWLEDG",
    re.IGNORECASE,
)
_METADATA_LEAD = re.compile(
    r"\W*(?:key ?words?|index terms|mesh(?: terms| headings)?|medical subject headings|"
    r"clinical ?trials?\.gov|prospero|funding|sources? of (?:funding|support)|financial disclosures?|"
    r"disclosures?|conflicts? of interests?|competing interests?|level of evidence|acknowledge?ments?)"
    r"\b[^:.;]{0,30}:"  # a label and its colon: "Disclosure rates were low (12%)." is a finding
    r"|\W*(?:clinical )?trials? regist|\W*(?:date of )?registration(?: numbers?| identifiers?)?\s*:"
    r"|\W*funded by\b"  # NEJM's closing "(Funded by AstraZeneca; SYGMA 1 ClinicalTrials.gov number, NCT...)"
    r"|\W*(?:copyright|©|\(c\)\s*(?:19|20)\d\d)",
    re.IGNORECASE,
)
_REGISTRY_ID = re.compile(r"\b(?:NCT\d{8}|ISRCTN\d{6,}|ACTRN\d{10,}|ChiCTR[-\w]+|CRD\d{8,}|UMIN\d{6,})\b")
_REGISTERED = re.compile(r"\bregist(?:er|ry|ration)", re.IGNORECASE)
MAX_WORDS_BEFORE_REGISTRATION = 14
# A registration split off its label ("GOV IDENTIFIER: NCT03932253.", "https://clinicaltrials.gov/ct2/show/NCT...",
# "NCT00816829."): every word is the identifier, a link or query fragment, or a registry label word.
_REGISTRY_WORD = re.compile(
    r"\W*(?:clinicaltrials\.gov|gov|identifiers?|id|numbers?|no|trial|registration|registered|eudract)\W*",
    re.IGNORECASE,
)


def _only_a_registration(text: str) -> bool:
    words = text.split()
    return bool(_REGISTRY_ID.search(text)) and all(
        _REGISTRY_ID.search(w)
        or any(c in w for c in "=/&?")
        or _REGISTRY_WORD.fullmatch(w)
        or not w.strip(".,;:()")
        for w in words
    )


def is_metadata(text: str, section_label: str | None = None) -> bool:
    """Whether a sentence is an abstract's metadata (see above), by its section's label or its own words."""
    if section_label and _METADATA_SECTION.search(section_label):
        return True
    if _METADATA_LEAD.match(text) or "all rights reserved" in text.lower() or _only_a_registration(text):
        return True
    registered = _REGISTERED.search(text)
    # "This trial is registered with ClinicalTrials.gov, NCT02332668", not a finding glued to a registration
    # by a missing space ("... durable responses in UM.Trial registration: NCT02697630")
    lead_words = len(text[: registered.start()].split()) if registered else 0
    return bool(registered and _REGISTRY_ID.search(text) and lead_words <= MAX_WORDS_BEFORE_REGISTRATION)


# A section label written into the text: 851 of the embedded corpus's abstracts (JSONL) are stored as plain text
# with their labels inline ("CONCLUSIONS: Pharmacokinetic differences ..."), so a quoted sentence starts with one;
# the readers make them sections (`inline_sections`), as PubMed XML's labelled AbstractText parts are. A label
# cut short in the source ends in "/" ("QUESTIONS/ We asked whether", from "QUESTIONS/PURPOSES:") or in "&"
# ("MATERIALS & A retrospective study", from "MATERIALS & METHODS:"; then a sentence's words follow).
_LABEL_WORD = r"[A-Z][A-Z&/-]+(?:\(S\))?"  # "RESULT(S)" too
_LABEL_JOIN = r"(?:,|\s+&)?\s+"  # "DESIGN, SETTING" and "BACKGROUND & AIMS"
# the first word of a two-word label that a source cut after its "&" ("MRSA & Staphylococcus ..." is no label)
_CUT_AT_AMPERSAND = r"(?:MATERIALS?|METHODS?|PATIENTS?|SUBJECTS?|PARTICIPANTS?|BACKGROUND|DESIGN|SETTING)\s+&"
_INLINE_LABEL = re.compile(
    rf"(?:{_LABEL_WORD}{_LABEL_JOIN}){{0,5}}"
    rf"(?:{_LABEL_WORD}(?::|(?<=/))|{_CUT_AT_AMPERSAND}(?=\s+(?:[A-Z][a-z]|[A-Z]\s+[a-z]|\d)))\s+(?=\S)"
)
MIN_LABEL_LETTERS = 4  # "HR: 0.5" is no label
# the corpus's one shorter label (46 times; no other 3-letter word opens a sentence with ": ")
SHORT_LABELS = frozenset({"AIM"})


def _is_label(match: re.Match[str]) -> bool:
    """A matched label has enough letters to be one ("HR: " has not) or is a known short one."""
    label = match.group().strip().rstrip(":")
    return sum(c.isalpha() for c in label) >= MIN_LABEL_LETTERS or label in SHORT_LABELS


def without_inline_label(text: str) -> str:
    """The sentence without a leading section label written into its text ("CONCLUSIONS: X" -> "X")."""
    match = _INLINE_LABEL.match(text)
    return text[match.end() :] if match and _is_label(match) else text


# A sentence that opens on a word pointing back to the one before ("It was related significantly to ...",
# "However, its role ...", "This may be a result of ..."): quoted alone, the reader cannot tell what it is about.
# "It is concluded that", "It is not clear whether" and "This study", "These findings" (a noun after the
# demonstrative) name their subject and do not count.
_CONNECTIVE = (
    r"(?:(?:however|moreover|furthermore|thus|therefore|hence|in addition|in contrast|nevertheless|conversely|"
    r"additionally|also|finally|overall|importantly|interestingly|similarly|consequently|indeed)\s*,?\s+)?"
)
_IMPERSONAL_IT = r"(?!\s+(?:is|was|has\s+been|seems|appears)\s+(?:not\s+)?\w+\s+(?:that|to|whether|if)\b)"
_DEMONSTRATIVE_VERB = (
    r"(?:is|was|are|were|may|might|could|can|would|should|will|has|have|had|did|does|do|suggests?|shows?|"
    r"indicates?|impl(?:y|ies|ied)|demonstrates?|means|meant|poses?|posed|leads?|led|resulted|"
    r"remains?|appears?|seems?|reflects?|explains?|supports?|confirms?|highlights?|provides?|raises?|makes?|"
    r"allows?|enables?)"
)
_REFERS_BACK = re.compile(
    _CONNECTIVE
    + r"(?:(?:it|they|he|she)\b"
    + _IMPERSONAL_IT
    + r"|(?:its|their|his|her)\s|(?:this|these|that|those)\s+"
    + _DEMONSTRATIVE_VERB
    + r"\b)",
    re.IGNORECASE,
)


def refers_back(text: str) -> bool:
    """Whether the sentence opens on a pronoun whose referent is in the sentence before."""
    return bool(_REFERS_BACK.match(text.strip()))


# A statement of what a study set out to do ("The aim of this study was to evaluate ...", "We investigated
# whether ...", "To compare ..."): it reports no finding, so it can show none. Held-out generate answers
# (PubMedQA dev, questions 1-120 of the held-out part) quoted only such a sentence under 9 of 202 sentences;
# 4 of them stated a finding ("The study found that the APT with HDM was not specific for atopic
# dermatitis", quoting the aim; the abstract concludes it is "probably more specific for AD").
_STUDY = r"(?:study|trial|work|paper|analysis|review|investigation|survey|project|research|report)"
_AIM = re.compile(
    r"\b(?:aims?|purposes?|objectives?|goals?)\s+of\s+(?:this|the|our|the\s+present)\s+(?:[\w,-]+\s+){0,3}?"
    + _STUDY
    + r"\b"
    r"|^(?:the\s+|our\s+)?(?:aims?|purposes?|objectives?|goals?)\s+(?:was|were|is|are)\s+to\b"
    r"|^(?:we|this|the\s+present|our)\s+(?:[\w,-]+\s+){0,4}?(?:aimed|aims|sought|seeks|set\s+out|"
    r"(?:was|were|is|are)\s+(?:designed|conducted|undertaken|performed))\s+to\b"
    r"|^(?:in\s+order\s+)?to\s+(?:further\s+|better\s+|directly\s+|critically\s+|prospectively\s+|"
    r"retrospectively\s+)?(?:evaluate|assess|investigate|examine|determine|compare|analy[sz]e|explore|describe|"
    r"identify|test|study|clarify|verify|establish|characteri[sz]e|define|ascertain|quantify|estimate|measure|"
    r"elucidate|understand|develop|validate|correlate|consider|confirm|demonstrate|probe|address|learn|gain)\b"
    r"|^(?:we|this\s+(?:[\w,-]+\s+){0,3}?" + _STUDY + r")\s+(?:investigated|examined|evaluated|assessed|"
    r"explored|asked|tested|investigates|examines|evaluates|assesses|explores|asks|tests)\s+(?:whether|if|how)\b",
    re.IGNORECASE,
)
_REPORTS = re.compile(r"\b(?:found|find|finds|showed|shown|shows|revealed|demonstrated|conclud\w*)\b|\bp\s*[<=>]|"
                      r"\d\s*%", re.IGNORECASE)  # fmt: skip


# Under its own aim label ("OBJECTIVE: ...", "QUESTIONS/ ...") a sentence in which the study speaks of itself
# ("To quantify ...", "We studied ...", "This study measured ...") states the aim whatever its verb: a held-out
# answer stated "cup-cage reconstruction ... provides initial stability" as the finding of "QUESTIONS/ This study
# measured acetabular component stability ...". A case report's "To report a case of X caused by Y" states the
# case, so it is not one.
_AIM_LABEL = re.compile(r"\b(?:AIMS?|OBJECTIVES?|PURPOSES?|QUESTIONS?|GOALS?|HYPOTHES[EI]S)\b")
_STUDY_SPEAKS = re.compile(
    r"(?:(?:in\s+order\s+)?to|we|(?:this|the|our)\s+(?:[\w,()-]+\s+){0,3}?" + _STUDY + r")"
    r"\s+(?!(?:report|present)s?\b)\S",
    re.IGNORECASE,
)


def states_aim(text: str) -> bool:
    """Whether the sentence states what a study set out to do, reporting no finding."""
    text = text.strip()
    stripped = without_inline_label(text)  # "OBJECTIVE: To compare ..." -> "To compare ..."
    if _REPORTS.search(stripped):
        return False
    under_aim_label = bool(_AIM_LABEL.search(text[: len(text) - len(stripped)]))
    return bool(_AIM.search(stripped)) or (under_aim_label and bool(_STUDY_SPEAKS.match(stripped)))


# A sentence that opens by calling for more research reports no finding, although it closes the abstract (the
# findings model reads closing sentences as answer-bearing): "Further studies are needed to ...", "Prospective
# studies are needed in ...", "More research is needed into ...", "It remains to be determined whether ...".
_CALL_OPENERS = (
    r"(?:however|therefore|thus|hence|finally|nevertheless|nonetheless|in\s+conclusion|in\s+addition)"
)
_CALL_FOR_RESEARCH = re.compile(
    rf"^(?:{_CALL_OPENERS},?\s+)?(?:(?:further|future|additional|more|larger|prospective|longitudinal|"
    r"randomi[sz]ed|long-term|well-designed|multicentre|multicenter|controlled|confirmatory)\s+)+"
    r"(?:[\w-]+\s+){0,3}?(?:studies|study|research|trials?|investigations?|work|evaluations?|follow-up)\b"
    rf"|^(?:{_CALL_OPENERS},?\s+)?it\s+remains\s+to\s+be\b",
    re.IGNORECASE,
)


_CALL_VERB = re.compile(
    r"\b(?:needed|required|necessary|warranted|should|must|recommended|planned|will|would|remains?)\b",
    re.IGNORECASE,
)


# ... or whose subject is research and whose verb says it is needed, with no verb of a finding before it:
# "Studies with larger populations are needed to confirm these results.", "A randomised placebo-controlled
# trial of dexmedetomidine is warranted.", "We conclude that further, comparative, more comprehensive, long-term,
# and controlled studies are required." (the findings model had read the last as the answer of a diabetic-foot
# question and left out the sentence before it, the study's conclusion). "Paclitaxel is an effective regimen
# and continued study is warranted" reports a finding first, and is not one.
_CALL_PREAMBLE = re.compile(
    rf"^(?:(?:{_CALL_OPENERS}|clearly|consequently|overall|in\s+summary|"
    r"(?:we|the\s+authors)\s+(?:believe|conclude|think|feel|suggest)\s+that),?\s+)+",
    re.IGNORECASE,
)
_NOT_A_VERB = (
    r"(?!(?:is|are|was|were|be|been|may|might|can|could|should|will|would|has|have|had|did|does|do|not|but|so|"
    r"although|though|while|whereas)\b)"
)
# what may follow the research noun before "is needed": nothing, or a phrase that opens with a preposition or a
# comma ("Studies with larger populations are needed"; not "Our data suggest a role ..., which are required")
_RESEARCH_QUALIFIER = (
    r"(?:,|\s+(?:of|in|with|at|on|to|for|by|across|including|involving|among|using|from|into|between|about|"
    rf"regarding|that|which)\b)(?:,?\s+{_NOT_A_VERB}[\w/()'-]+){{0,14}}?"
)
_RESEARCH_NEEDED = re.compile(
    rf"^(?:{_NOT_A_VERB}[\w/()'-]+,?\s+){{0,14}}?"
    r"(?<!\bto\s)(?:studies|study|research|trials?|investigations?|evaluations?|validation|work|data)\b"
    rf"(?:{_RESEARCH_QUALIFIER})?,?"
    r"\s+(?:is|are|will\s+be|would\s+be|remains?)\s+(?:still\s+|also\s+|therefore\s+|clearly\s+|urgently\s+)?"
    r"(?:needed|required|necessary|warranted)\b",
    re.IGNORECASE,
)


def calls_for_research(text: str) -> bool:
    """Whether the sentence opens by calling for more research ("Further studies are needed ...", not
    "Randomised trials showed no benefit."): no finding."""
    text = without_inline_label(text.strip())
    if _CALL_FOR_RESEARCH.match(text) and _CALL_VERB.search(text) and not _REPORTS.search(text):
        return True
    rest = _CALL_PREAMBLE.sub("", text)
    return bool(_RESEARCH_NEEDED.match(rest) and not _REPORTS.search(rest))


# The same label where the abstract or one of its sentences opens ("... was studied. METHODS: We ...").
_LABEL_OPENING = re.compile(r"(?:^|(?<=[.?!] ))" + _INLINE_LABEL.pattern)


# A label glued to the end of the sentence before it, with no space: 45 abstracts of the embedded corpus keep
# such remnants ("... are high.QUESTIONS/ This study measured ...", "... is unknown.AIM: To evaluate ..."), which
# would hold background and aim in one sentence. The label always starts a sentence.
_GLUED_LABEL = re.compile(r"(?<=[A-Za-z0-9%)\]][.?!])" + _INLINE_LABEL.pattern)


def glued_label_starts(abstract: str) -> list[int]:
    """Offsets of the labels in `abstract` that are glued to the sentence before them."""
    return [m.start() for m in _GLUED_LABEL.finditer(abstract) if _is_label(m)]


# A label whose colon a source lost, two spaces left in its place ("RESULTS  The mother presented ..."): 16
# abstracts of the embedded corpus, and 2 more with a lone "CONCLUSIONS  " near their end. Collapsing the spaces
# would leave "RESULTS The mother", no label any more, so the readers give it its colon back first
# (`with_label_colons`): every such label where the abstract opens with one and has two or more, as with
# `inline_sections`; elsewhere only a common heading (". AIDS  patients ..." is no label, nor "(PWCR  15q11)").
_SPACED_LABEL = re.compile(
    rf"(?:^|(?<=[.?!] )|(?<=[.?!]  ))(?:{_LABEL_WORD}{_LABEL_JOIN}){{0,5}}{_LABEL_WORD}(?=  +\S)"
)
_COMMON_HEADING = re.compile(
    r"BACKGROUND|INTRODUCTION|OBJECTIVES?|AIMS?|PURPOSES?|METHODS?|RESULTS?|FINDINGS|CONCLUSIONS?|INTERPRETATION"
)


def with_label_colons(abstract: str) -> str:
    """`abstract` with a colon after each label that a source wrote with two spaces instead ("RESULTS  X" ->
    "RESULTS:  X"): all of them when it opens with one and has two or more, else the common headings only."""
    found = [m for m in _SPACED_LABEL.finditer(abstract) if _is_label(m)]
    if len(found) < 2 or found[0].start() != 0:
        found = [m for m in found if _COMMON_HEADING.fullmatch(m.group())]
    for match in reversed(found):
        abstract = f"{abstract[: match.end()]}:{abstract[match.end() :]}"
    return abstract


def inline_sections(abstract: str) -> list[Section]:
    """The sections of a plain-text abstract that writes its labels inline ("BACKGROUND: ... METHODS: ..."),
    each from its label to the next; none unless the abstract opens with a label and has two or more."""
    found = [m for m in _LABEL_OPENING.finditer(abstract) if _is_label(m)]
    if len(found) < 2 or found[0].start() != 0:
        return []
    ends = [m.start() - 1 for m in found[1:]] + [len(abstract)]
    return [
        Section(label=m.group().rstrip().rstrip(":"), start=m.start(), end=end)
        for m, end in zip(found, ends, strict=True)
    ]


def section_label(doc: Document, start: int) -> str | None:
    """The label of the section of `doc` that holds the character offset `start` of its abstract, if any."""
    return next((s.label for s in doc.sections if s.start <= start < s.end), None)


def is_metadata_sentence(doc: Document, sentence: Sentence) -> bool:
    """Whether one of `doc`'s sentences is metadata, by its own words or the label of the section it sits in."""
    return is_metadata(sentence.text, section_label(doc, sentence.start))
