"""Opposite qualifiers (issue 12, entity coverage): "acute pancreatitis" is not "chronic pancreatitis".

A qualifier and the word after it name one condition or site: acute / chronic, left / right, upper / lower,
primary / secondary, benign / malignant, proximal / distal, anterior / posterior, medial / lateral, unilateral
/ bilateral, systolic / diastolic, ischaemic / haemorrhagic. Coverage asks only for a concept's rarest term,
so an abstract on chronic pancreatitis covered a question on acute pancreatitis, and one on chronic kidney
disease a question on acute kidney injury. An abstract that names the word with the opposite qualifier and
never with the asked one ("chronic kidney", no "acute kidney") is on the other condition: it does not cover
the concept. An abstract naming both, or the word alone, still does.

Some qualifiers follow their word, hyphened to it: HIV-positive / HIV-negative, castration-resistant /
castration-sensitive, methicillin-resistant / methicillin-susceptible (`POST_PAIRS`). They are read after a
word of the concept, hyphens as spaces, as the question's chunks are read (a word with a digit stays one term:
"HER2-negative" must be written as such already). The opposite must be written right after the same word in
the abstract, so a predicate ("Is the test sensitive?") hardly ever meets one ("test resistant"). A chunk
without a rare term is a concept for its qualifier only when the qualifier stands between words
("methicillin-sensitive Staphylococcus aureus keratitis"): "who test negative for H. pylori" (a BioGen
question) is a predicate.
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


# Not "dependent" / "independent": mostly a property of an effect ("dose-dependent neurotoxicity", "age-dependent
# sensitivity"), where the abstract that says "dependent" answers a question on "independent".
POST_PAIRS = [("positive", "negative"), ("resistant", "sensitive"), ("resistant", "susceptible")]


def _opposites(pairs: list[tuple[str, str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for a, b in pairs:
        out.setdefault(_stem(a), set()).add(_stem(b))
        out.setdefault(_stem(b), set()).add(_stem(a))
    return out


OPPOSITES = _opposites(PAIRS)
POST_OPPOSITES = _opposites(POST_PAIRS)
QUALIFIERS = set(OPPOSITES) | set(POST_OPPOSITES)  # stems that say which condition, not what it is


def _post_qualified(words: list[str]) -> list[tuple[str, str]]:
    """(word, qualifier) stems of each qualifier after a word of the concept ("HIV antibody-negative" reads as
    HIV, antibody, negative: antibodi, negat)."""
    stems = [_stem(w) for w in words]
    return [(w, q) for w, q in zip(stems, stems[1:], strict=False) if q in POST_OPPOSITES]


def qualified(words: list[str], *, chunk: bool = False) -> bool:
    """Whether a word of the concept but its last is a qualifier, or one after its first is a qualifier of
    the word before (the cheap test before the text is read). For a `chunk` without a rare term, which the
    qualifier would make a concept, one after its word must also come before another: "methicillin-
    susceptible Staphylococcus", not "who test negative"."""
    if any(_stem(w) in OPPOSITES for w in words[:-1]):
        return True
    return bool(_post_qualified(words[:-1] if chunk else words))


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
    for word, qualifier in _post_qualified(words):
        if f" {word} {qualifier} " in stem_flat:
            continue
        others = [o for o in sorted(POST_OPPOSITES[qualifier]) if f" {word} {o} " in stem_flat]
        if others:  # "methicillin resistant" named, "methicillin susceptible" never
            return f"{word} {others[0]}"
    return None
