"""Opposite qualifiers (issue 12, entity coverage): "acute pancreatitis" is not "chronic pancreatitis".

A qualifier and the word after it name one condition or site: acute / chronic, left / right, upper / lower,
primary / secondary, benign / malignant, proximal / distal, anterior / posterior, medial / lateral, unilateral
/ bilateral, systolic / diastolic, ischaemic / haemorrhagic. Coverage asks only for a concept's rarest term,
so an abstract on chronic pancreatitis covered a question on acute pancreatitis, and one on chronic kidney
disease a question on acute kidney injury. An abstract that names the word with the opposite qualifier and
never with the asked one ("chronic kidney", no "acute kidney") is on the other condition: it does not cover
the concept. An abstract naming both, or the word alone, still does.
"""

from __future__ import annotations

from functools import lru_cache

from biocite.tokenize import tokenize

PAIRS = [
    ("acute", "chronic"), ("left", "right"), ("upper", "lower"), ("primary", "secondary"),
    ("benign", "malignant"), ("proximal", "distal"), ("anterior", "posterior"), ("medial", "lateral"),
    ("unilateral", "bilateral"), ("systolic", "diastolic"), ("ischemic", "hemorrhagic"),
    ("ischaemic", "haemorrhagic"), ("ischemic", "haemorrhagic"), ("ischaemic", "hemorrhagic"),
]  # fmt: skip


@lru_cache(maxsize=1 << 14)
def _stem(word: str) -> str:
    tokens = tokenize(word.casefold(), stem=True)
    return tokens[0] if tokens else word.casefold()


def _opposites() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for a, b in PAIRS:
        out.setdefault(_stem(a), set()).add(_stem(b))
        out.setdefault(_stem(b), set()).add(_stem(a))
    return out


OPPOSITES = _opposites()


def qualified(words: list[str]) -> bool:
    """Whether a word of the concept but its last is a qualifier (the cheap test before the text is read)."""
    return any(_stem(w) in OPPOSITES for w in words[:-1])


def named_instead(words: list[str], stem_flat: str) -> str | None:
    """The first qualified word of the concept (`words`, as the question writes them) that the text (its stems
    in order, spaced: `DocumentTerms.stem_flat`) names only with the opposite qualifier, as the text names it
    ("chronic kidney"); None when there is none."""
    stems = [_stem(w) for w in words]
    for qualifier, word in zip(stems, stems[1:], strict=False):
        if qualifier not in OPPOSITES or f" {qualifier} {word} " in stem_flat:
            continue
        others = [o for o in sorted(OPPOSITES[qualifier]) if f" {o} {word} " in stem_flat]
        # "acute and chronic pancreatitis", "left or right colectomy" name both
        both = any(
            f" {qualifier} {joint} {o} {word} " in stem_flat for o in others for joint in ("and", "or")
        )
        if others and not both:
            return f"{others[0]} {word}"
    return None
