"""Claims that misstate a number of their evidence: the same quantity, a different value.

`biocite check "As-needed budesonide-formoterol reduced the rate of severe exacerbations by 46% ..."` said
supports (0.79) against "... reduced the annualized rate of severe exacerbations by 64% compared with
terbutaline": the fine-tuned cross-encoder reads the words around a number, hardly the number itself.

A claim's number is *changed* when one evidence sentence states the same quantity with another value and no
sentence of the passage states the claim's value. The same quantity: the same unit ("%", "mg", "days", none)
and at least SHARED content words in common among the WINDOW tokens on either side of the number, in its
clause. Values agree within one unit of the coarser precision ("46%" and "45.8%"), or as a share and a
percentage ("0.46" and "46%").

Conservative on purpose: p-values, confidence levels ("95% CI"), bounds and estimates ("up to 40%", "about
50%"), range ends ("4.8% to 34.6%"), years, numbers inside names ("IL-6", "COVID-19") and reference markers
("(10)") are not read as the claim's values or as the sentence's; a passage that states the claim's value
anywhere, in any sentence and in any role, and a sentence value the claim also states, leave the judgement
to the model. Its two numbers were chosen on TRAIN data; it is measured in `bench/reversals.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from biocite.tokenize import STOPWORDS, stem_words

# a number (thousands commas, decimals, a leading "."), a word, "%", or a clause mark
_TOKEN = re.compile(
    r"(?<![\w.\-/])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\w.]*\d)(?!-?[a-z]*\d)"
    r"|[a-z]+(?:'[a-z]+)?|%|[,;:=<>≤≥~∼≈×]"
)
# "(10)", "[3, 4]": reference markers, not values
_REFERENCE = re.compile(r"[(\[]\d+(?:\s*[,–-]\s*\d+)*[)\]]")
_CLAUSE = frozenset(",;:") | {"whereas", "while", "but", "although", "and"}
_PERCENT = frozenset({"%", "percent"})
# a number after these is a test statistic, a threshold or a power of ten ("P < 0.05", "95% CI", "n = 120",
# "2.5 × 10"), not a finding
_STATISTIC_BEFORE = frozenset("p n < > = ≤ ≥ ci ×".split())
_STATISTIC_AFTER = frozenset("ci confidence credible ×".split())
# a number after these is a bound or an estimate ("up to 40%", "~50%", "above the age of 80"), which a more
# exact value in the evidence does not contradict
_BOUND_BEFORE = frozenset(
    "about approximately nearly almost around roughly over under above below ~ ∼ ≈".split()
)
_BOUND_PAIRS = frozenset(
    tuple(p.split())
    for p in "up to|at least|at most|more than|less than|greater than|fewer than|as many|as much".split("|")
)
# chosen on TRAIN (Citation-Integrity SUPPORT claims, PubMedQA train conclusions and their numbers changed by
# the support data's TRAIN template: bench/reversals.py)
WINDOW = 6  # words either side of a number that say what it measures
SHARED = 2  # of them the claim and the sentence must share


@dataclass(frozen=True)
class _Number:
    value: float
    decimals: int
    unit: str | None  # "%", a unit or counted word ("mg", "days", "patients"), None for a bare number
    context: frozenset[str]  # content stems of the words around it, in its clause
    read: bool  # a value of a finding (not a statistic, a bound, a range end, a year)


def _is_number(token: str) -> bool:
    return token[0].isdigit() or token[0] == "."


def _numbers(text: str) -> list[_Number]:
    text = re.sub(r"(?<=\d)·(?=\d)", ".", _REFERENCE.sub(" ", text))  # "11·7%" (Lancet style) is 11.7%
    tokens = _TOKEN.findall(text.lower().replace("’", "'").replace("–", "-"))
    stems = stem_words(tokens)
    out = []
    for i, token in enumerate(tokens):
        if not _is_number(token):
            continue
        value = float(token.replace(",", ""))
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        unit = (
            "%" if after in _PERCENT else stems[i + 1] if after.isalpha() and after not in STOPWORDS else None
        )
        # a year (or as good as one: "COVID-19" is "coronavirus disease 2019") is no finding's value
        year = value.is_integer() and 1900 <= value <= 2030
        decimals = len(token.split(".")[1]) if "." in token else 0
        read = not year and not _not_a_value(tokens, i)
        out.append(_Number(value, decimals, unit, _context(tokens, stems, i) - {unit}, read))
    return out


def _not_a_value(tokens: list[str], i: int) -> bool:
    """Token i is a test statistic, a threshold, a power of ten, a bound or an estimate: not read."""
    before = tokens[max(i - 2, 0) : i]
    after = tokens[i + 1 : i + 3]
    # "above the age of 80": a bound word up to three tokens before
    bound = bool(_BOUND_BEFORE & set(tokens[max(i - 3, 0) : i])) or tuple(before) in _BOUND_PAIRS
    statistic = bool(_STATISTIC_BEFORE & set(before)) or bool(_STATISTIC_AFTER & set(after))
    return bound or statistic or _range_end(tokens, i)


def _range_end(tokens: list[str], i: int) -> bool:
    """Token i ends a range ("in 4.8% to 34.6% of patients", "between 5 and 10 days"), which bounds a value;
    "from 44% to 57%" is a change, two values."""
    if "between" in tokens[max(i - 4, 0) : i]:
        return True

    def number_at(j: int) -> bool:
        return 0 <= j < len(tokens) and _is_number(tokens[j])

    # the other end: "to" next to this number (or to its unit), a number next to "to"
    for to, other in ((i + 1, i + 2), (i + 2, i + 3), (i - 1, i - 2), (i - 1, i - 3)):
        if 0 <= to < len(tokens) and tokens[to] == "to" and number_at(other):
            first = min(i, other)
            return first == 0 or tokens[first - 1] != "from"
    return False


def _context(tokens: list[str], stems: list[str], i: int) -> frozenset[str]:
    """Content stems of the WINDOW tokens before and after token i, up to a clause mark."""
    out: set[str] = set()
    for step in (-1, 1):
        j = i + step
        while 0 <= j < len(tokens) and abs(j - i) <= WINDOW:
            token = tokens[j]
            if token in _CLAUSE:
                break
            if token.isalpha() and len(token) > 2 and token not in STOPWORDS:
                out.add(stems[j])
            j += step
    return frozenset(out)


def _agree(a: _Number, b: _Number) -> bool:
    """Within one unit of the coarser precision of the two (46 and 45.8, 7.76 and 7.7, not 46 and 47), or
    as a share and a percentage."""
    if abs(a.value - b.value) < 10 ** -min(a.decimals, b.decimals):
        return True
    return a.value == round(b.value * 100, a.decimals) or b.value == round(a.value * 100, b.decimals)


@dataclass(frozen=True)
class NumberChange:
    index: int  # the sentence that states the quantity with another value
    claimed: float
    stated: float


def changed_number(claim: str, sentences: Sequence[str]) -> NumberChange | None:
    """The first sentence that states one of the claim's quantities with another value, when no sentence
    of the passage states the claim's value and the claim does not state the sentence's."""
    ours = _numbers(claim)
    claimed = [n for n in ours if n.read]
    if not claimed:
        return None
    theirs = [_numbers(s) for s in sentences]
    stated = [n for group in theirs for n in group]
    for number in claimed:
        if any(_agree(number, n) for n in stated):
            continue
        for index, group in enumerate(theirs):
            for n in group:
                if (
                    n.read
                    and n.unit == number.unit
                    and len(n.context & number.context) >= SHARED
                    and not any(_agree(n, other) for other in ours)
                ):
                    return NumberChange(index, number.value, n.value)
    return None
