"""Claims that reverse their evidence: the same words, the opposite finding.

The support model's cross-encoder (MiniLM, fine-tuned on a few thousand pairs) reads word overlap well and
word order poorly: `biocite check "Aspirin is superior to warfarin for stroke prevention ..."` against an
abstract saying "warfarin is superior to aspirin in preventing strokes" said supports (0.67; its sentence
0.93). Two checks catch the plainest reversals, each of one claim against one evidence sentence:

- a swapped comparison: the same comparative ("superior to", "more effective than", "higher X than")
  with its two sides exchanged, or the opposite comparative ("less effective than") with the same sides;
- an opposite direction: the claim says something went one way (increased, reduced, improved, worsened)
  and the sentence says only the other way, around the same words.

Both are conservative on purpose: a negation in either sentence, a claim with both directions on one axis,
or fewer than two words shared in what went up or down leave the judgement to the model. `reversal` reads a
whole passage: reversed by one sentence and restated by none. Measured in `bench/reversals.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from biocite.tokenize import STOPWORDS, stem_words

ReversalKind = Literal["swapped comparison", "opposite direction"]

_TOKEN = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*|[,;:()]")
_BOUNDARY = frozenset(",;:()") | {"whereas", "while", "but", "although", "that", "which"}
_NEGATION = frozenset(
    "not no nor neither without never cannot fail failed fails unlikely absence lack lacked".split()
) | {"n't"}
# Direction words by axis, as Snowball stems: +1 one way, -1 the other. Words that also name things
# ("stimulation", "activity", "drug-induced", "prevention") are left out.
_DIRECTION: dict[str, tuple[str, int]] = {
    **{s: ("amount", 1) for s in "increas rise rose risen rais elev higher greater enhanc augment upregul up-regul promot stimul".split()},
    **{s: ("amount", -1) for s in "decreas reduc reduct lower declin diminish attenu suppress inhibit downregul down-regul smaller repress lessen".split()},
    **{s: ("quality", 1) for s in "improv better benefici protect".split()},
    **{s: ("quality", -1) for s in "worsen wors harm deterior detriment impair aggrav exacerb".split()},
}  # fmt: skip
# "lower limb", "higher education": places and levels, not directions
_NOT_DIRECTION_BEFORE = frozenset(
    "limb limbs extremity extremities respiratory urinary back tract abdominal gastrointestinal leg legs "
    "lobe jaw lip eyelid motor education".split()
)
# Comparative markers as (scale, sign): "less effective than" is "more effective than" reversed.
_COMPARATIVE: dict[str, tuple[str, int]] = {
    "more": ("more", 1), "less": ("more", -1), "fewer": ("more", -1),
    "higher": ("high", 1), "lower": ("high", -1),
    "greater": ("large", 1), "larger": ("large", 1), "smaller": ("large", -1),
    "better": ("good", 1), "worse": ("good", -1), "superior": ("good", 1), "inferior": ("good", -1),
    "longer": ("long", 1), "shorter": ("long", -1), "faster": ("fast", 1), "slower": ("fast", -1),
    "stronger": ("strong", 1), "weaker": ("strong", -1),
}  # fmt: skip
_SCOPE = 5  # tokens after (or before) a direction word that say what went that way
_BE = frozenset("is are was were be been being".split())
_SIDE = 8  # tokens of a comparison's side
SHARED = 2  # words the claim and the sentence must share in what went up or down


@dataclass(frozen=True)
class _Sentence:
    words: list[str]  # lower-cased tokens, punctuation marks among them
    stems: list[str]
    negated: bool

    @classmethod
    def of(cls, text: str) -> _Sentence:
        words = _TOKEN.findall(text.lower().replace("’", "'"))
        return cls(words, stem_words(words), any(w in _NEGATION or w.endswith("n't") for w in words))


def _is_content(word: str) -> bool:
    return word not in STOPWORDS and word not in _BOUNDARY and len(word) > 1 and word not in _COMPARATIVE


@dataclass(frozen=True)
class _Comparison:
    scale: tuple[str, ...]  # the marker's scale and the words between it and "than" ("more", "effect")
    sign: int
    left: set[str]
    right: set[str]


def _side(s: _Sentence, indices: range) -> set[str]:
    out: set[str] = set()
    for i in indices:
        if s.words[i] in _BOUNDARY:
            break
        if _is_content(s.words[i]) and s.stems[i] not in _DIRECTION:
            out.add(s.stems[i])
    return out


def _comparisons(s: _Sentence) -> list[_Comparison]:
    """Each "X <comparative> ... than Y" and "X superior/inferior to Y" of the sentence."""
    out = []
    for i, word in enumerate(s.words):
        if word == "than":
            marker = next((j for j in range(i - 1, max(i - 4, -1), -1) if s.words[j] in _COMPARATIVE), None)
        elif word == "to" and i and s.words[i - 1] in ("superior", "inferior"):
            marker = i - 1
        else:
            continue
        if marker is None:
            continue
        scale, sign = _COMPARATIVE[s.words[marker]]
        between = tuple(s.stems[j] for j in range(marker + 1, i) if _is_content(s.words[j]))
        left = _side(s, range(marker - 1, max(marker - 1 - _SIDE, -1), -1))
        right = _side(s, range(i + 1, min(i + 1 + _SIDE, len(s.words))))
        out.append(_Comparison((scale, *between), sign, left, right))
    return out


def _compare(claim: _Sentence, sentence: _Sentence) -> int:
    """+1 the sentence makes the claim's comparison, -1 it makes the reverse, 0 neither (or unsure)."""
    if claim.negated or sentence.negated:
        return 0
    verdicts = set()
    for c in _comparisons(claim):
        for e in _comparisons(sentence):
            if c.scale != e.scale:
                continue
            aligned = bool((c.left & e.left) - e.right) and bool((c.right & e.right) - e.left)
            swapped = bool((c.left & e.right) - e.left) and bool((c.right & e.left) - e.right)
            if aligned != swapped:
                verdicts.add(c.sign * e.sign * (1 if aligned else -1))
    return verdicts.pop() if len(verdicts) == 1 else 0


def _object(s: _Sentence, i: int) -> set[str]:
    """What the direction word at i says went up or down: the words after it ("reduced the risk of
    stroke", "a reduction in stroke"), or before it when a form of "to be" precedes it ("stroke was
    reduced"), up to a clause boundary."""
    passive = any(s.words[j] in _BE for j in range(max(i - 2, 0), i))
    indices = (
        range(i - 1, max(i - 1 - _SCOPE, -1), -1)
        if passive
        else range(i + 1, min(i + 1 + _SCOPE, len(s.words)))
    )
    out: set[str] = set()
    for j in indices:
        if s.words[j] in _BOUNDARY or (s.words[j] in _BE and not passive):
            break
        if _is_content(s.words[j]) and s.stems[j] not in _DIRECTION:
            out.add(s.stems[j])
    return out


def _directions(s: _Sentence) -> dict[str, dict[int, set[str]]]:
    """axis -> sign -> the content stems of what the sentence's direction words of that sign say moved."""
    out: dict[str, dict[int, set[str]]] = {}
    for i, stem in enumerate(s.stems):
        if stem not in _DIRECTION or (s.words[i] in _COMPARATIVE and "than" in s.words[i : i + 4]):
            continue
        if i + 1 < len(s.words) and s.words[i + 1] in _NOT_DIRECTION_BEFORE:
            continue
        axis, sign = _DIRECTION[stem]
        out.setdefault(axis, {}).setdefault(sign, set()).update(_object(s, i))
    return out


def _direction(claim: _Sentence, sentence: _Sentence) -> int:
    """+1 the sentence moves what the claim says moved the claim's way, -1 only the opposite way, 0 neither
    (or unsure: a negation, both directions in the claim, fewer than SHARED words of what moved in common)."""
    if claim.negated or sentence.negated:
        return 0
    found = set()
    theirs = _directions(sentence)
    for axis, signs in _directions(claim).items():
        if len(signs) != 1 or axis not in theirs:
            continue
        ((sign, scope),) = signs.items()
        if not scope:
            continue
        if len(scope & theirs[axis].get(sign, set())) >= SHARED:
            found.add(1)
        elif len(scope & theirs[axis].get(-sign, set())) >= SHARED:
            found.add(-1)
    return found.pop() if len(found) == 1 else 0


@dataclass(frozen=True)
class Reversal:
    index: int  # the sentence that reverses the claim
    kind: ReversalKind


def reversal(claim: str, sentences: Sequence[str]) -> Reversal | None:
    """The first sentence that reverses the claim, when one does and none restates it the claim's way."""
    c = _Sentence.of(claim)
    first: Reversal | None = None
    for i, text in enumerate(sentences):
        s = _Sentence.of(text)
        for kind, verdict in (
            ("swapped comparison", _compare(c, s)),
            ("opposite direction", _direction(c, s)),
        ):
            if verdict > 0:
                return None
            if verdict < 0 and first is None:
                first = Reversal(i, kind)  # type: ignore[arg-type]
    return first
