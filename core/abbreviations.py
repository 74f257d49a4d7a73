"""Abbreviations an abstract or a question defines in parentheses: "metastatic spinal cord compression (MSCC)".

One owner for the short-form test (Schwartz and Hearst, 2003), shared by the agent's key concepts
(`agent.coverage.defined_abbreviations`) and the support model's word-for-word rule (`support.verbatim_index`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

PARENTHESISED = re.compile(r"\(\s*([^\W_][\w-]{0,11})\s*\)")


def abbreviated_from(short: str, long_form: str) -> int:
    """Where in `long_form` the words `short` abbreviates start, or -1 (Schwartz and Hearst's test, 2003:
    each letter and digit of the short form, right to left, is found in the long form in order, and the
    first one starts a word of it)."""
    short, long_form = short.casefold(), long_form.casefold()
    j = len(long_form) - 1
    for i in range(len(short) - 1, -1, -1):
        c = short[i]
        if not c.isalnum():
            continue
        while j >= 0 and (long_form[j] != c or (i == 0 and j > 0 and long_form[j - 1].isalnum())):
            j -= 1
        if j < 0:
            return -1
        j -= 1
    return j + 1


def definitions(text: str) -> Iterator[tuple[str, str]]:
    """(short form, the words before it that it abbreviates), both as written, for each parenthesised word of
    two letters or more that passes `abbreviated_from`: "type 2 diabetes mellitus (T2DM)"; "homemade alcohol
    (Raksi)" is a name, not an abbreviation."""
    for match in PARENTHESISED.finditer(text):
        short = match.group(1)
        before = " ".join(text[: match.start()].split()[-min(len(short) + 5, 2 * len(short)) :])
        start = abbreviated_from(short, before)
        if sum(c.isalpha() for c in short) >= 2 and start >= 0:
            yield short, before[start:]


def long_forms(text: str) -> dict[str, str]:
    """The abbreviations `text` defines, short form -> the words it abbreviates: "Elderly patients with
    metastatic spinal cord compression (MSCC)" gives {"MSCC": "metastatic spinal cord compression"}. The first
    definition of a short form counts, and a short form needs an upper-case letter (not "(i.e.)")."""
    found: dict[str, str] = {}
    for short, long_form in definitions(text):
        if any(c.isupper() for c in short):
            found.setdefault(short, long_form.strip())
    return found
