"""Designators (issue 12, entity coverage): "type 1" is not "type 2", nor "stage II" "stage III".

A classifying noun and the number, roman numeral or capital letter after it name one population or
condition: "type 1 diabetes", "stage III colon cancer", "grade IV glioma", "phase I trials", "type A
dissection", "class II obesity", "group B streptococcus". Coverage read the noun and the disease alone, so
a question on type 1 diabetes was covered by type 2 trials and one on stage III cancer by stage II results:
the substitution issue 12 forbids. Here a question's designator is one token ("type 2"), and an abstract
covers it only when it names the same designation:

- roman and arabic numerals are one ("type II" is "type 2"); hyphens and plurals do not matter ("type-2",
  "stages II and III", "stage II/III": each of them);
- an abstract's sub-stage covers its stage ("stage IIIB" is stage III), a range covers what it spans
  ("stages I-III", "grade 2 to 4"), but not the reverse: "stage III" does not cover "stage IIIB";
- diabetes is written by its initials as often as in words: "T2DM", "T2D" and "NIDDM" designate type 2,
  "T1DM", "T1D" and "IDDM" type 1 (MeSH headings, read with the abstract, say "Diabetes Mellitus, Type 2").
"""

from __future__ import annotations

import re
from functools import lru_cache

CLASSIFIERS = {
    "type": "type", "types": "type", "subtype": "subtype", "subtypes": "subtype",
    "stage": "stage", "stages": "stage", "grade": "grade", "grades": "grade",
    "phase": "phase", "phases": "phase", "class": "class", "classes": "class",
    "genotype": "genotype", "genotypes": "genotype", "serotype": "serotype", "serotypes": "serotype",
    "category": "category", "categories": "category", "group": "group", "groups": "group",
}  # fmt: skip
_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "x": 10}
# as a question writes them: digits, roman numerals, one capital letter ("a" is an article, "I" a pronoun
# only outside a designation); each with an optional sub-stage letter ("IIIB", "2a")
_QUESTION_DESIGNATOR = re.compile(r"(?:\d{1,2}|[IVX]{1,4}|[ivx]{1,4})[a-cA-C]?|[A-E]")
_TEXT_DESIGNATOR = r"(?:\d{1,2}|[ivx]{1,4})[a-c]?|[a-e]"
_CONNECTORS = frozenset({"and", "or", "to", "through", "/", ",", "-", "–"})
_RANGE = frozenset({"to", "through", "-", "–"})
_DIABETES_INITIALS = {"t1d": "1", "t1dm": "1", "iddm": "1", "t2d": "2", "t2dm": "2", "niddm": "2"}

_JOINT_TEXT = r"\s*(?:-|–|/|,|\band\b|\bor\b|\bto\b|\bthrough\b)\s*"
_JOINT = re.compile(rf"({_JOINT_TEXT})")
_IN_TEXT = re.compile(
    rf"\b({'|'.join(sorted(CLASSIFIERS, key=len, reverse=True))})[\s-]+"
    rf"((?:{_TEXT_DESIGNATOR})(?:{_JOINT_TEXT}(?:{_TEXT_DESIGNATOR}))*)\b"
)

Designation = tuple[str, str]  # (classifier, canonical designator): ("stage", "3b")


def canonical(designator: str) -> str | None:
    """'IIIb' -> '3b', '02' -> '2', 'A' -> 'a'; None for what is no designator ('vx')."""
    low = designator.casefold()
    if re.fullmatch(r"[a-e]", low):
        return low
    m = re.fullmatch(r"(\d{1,2}|[ivx]{1,4})([a-c]?)", low)
    if not m:
        return None
    number = str(int(m.group(1))) if m.group(1).isdigit() else _ROMAN.get(m.group(1))
    return f"{number}{m.group(2)}" if number is not None else None


def merge(words: list[str]) -> list[str]:
    """The question's words with each classifier and its designators as one token: ["type", "2"] ->
    ["type 2"], ["stages", "II", "and", "III"] -> ["stages II III"], ["type-2"] -> ["type 2"]."""
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        head, sep, tail = word.partition("-")
        if sep and head.casefold() in CLASSIFIERS and _is_designator(tail):
            out.append(f"{head} {tail}")
            i += 1
            continue
        if word.casefold() not in CLASSIFIERS:
            out.append(word)
            i += 1
            continue
        found, j = [], i + 1
        while j < len(words):
            if _is_designator(words[j]):
                found.append(words[j])
            elif not (found and words[j].casefold() in _CONNECTORS and j + 1 < len(words)
                      and _is_designator(words[j + 1])):  # fmt: skip
                break
            j += 1
        out.append(" ".join([word, *found]) if found else word)
        i = j if found else i + 1
    return out


def _is_designator(word: str) -> bool:
    return bool(_QUESTION_DESIGNATOR.fullmatch(word)) and canonical(word) is not None


def of_token(token: str) -> list[Designation]:
    """The designations a merged question token names, any of which the evidence may have ("stage II III":
    stage 2 or stage 3); [] for any other word."""
    classifier, *designators = token.split()
    kind = CLASSIFIERS.get(classifier.casefold())
    if kind is None or not designators:
        return []
    return [(kind, c) for d in designators if (c := canonical(d))]


@lru_cache(maxsize=4096)
def in_text(text: str) -> frozenset[Designation]:
    """Every designation an abstract names, sub-stages also as their stage and ranges as what they span."""
    low = text.casefold()
    found: set[Designation] = set()
    for word in re.findall(r"\b(t[12]dm?|n?iddm)\b", low):
        found.add(("type", _DIABETES_INITIALS[word]))
    for m in _IN_TEXT.finditer(low):
        kind = CLASSIFIERS[m.group(1)]
        parts = _JOINT.split(m.group(2))
        values = [canonical(p) for p in parts[::2]]
        for k, value in enumerate(values):
            if value is None:
                continue
            found.add((kind, value))
            if value[-1].isalpha() and value[:-1]:  # "3b" is stage 3 too
                found.add((kind, value[:-1]))
            before = values[k - 1] if k else None
            if before is not None and parts[2 * k - 1].strip() in _RANGE:
                found.update((kind, str(n)) for n in _span(before, value))
    return frozenset(found)


def _span(low: str, high: str) -> range:
    a, b = re.match(r"\d+", low), re.match(r"\d+", high)
    return range(int(a.group()), int(b.group()) + 1) if a and b else range(0)


def covered(asked: list[Designation], text: str) -> bool:
    """Whether the text names one of the asked designations."""
    return bool(set(asked) & in_text(text))
