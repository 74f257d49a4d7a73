"""Claims that reverse their evidence: the same words, the opposite finding.

The support model's cross-encoder (MiniLM, fine-tuned on a few thousand pairs) reads word overlap well and
word order poorly: `biocite check "Aspirin is superior to warfarin for stroke prevention ..."` against an
abstract saying "warfarin is superior to aspirin in preventing strokes" said supports (0.67; its sentence
0.93). Two checks catch the plainest reversals, each of one claim against one evidence sentence:

- a swapped comparison: the same comparative ("superior to", "more effective than", "higher X than")
  with its two sides exchanged, or the opposite comparative ("less effective than") with the same sides;
- an opposite direction: the claim says something went one way (increased, reduced, improved, worsened,
  shortened) and the sentence says it went the other way, did not go that way ("did not reduce"), or did
  not move ("did not differ", "were similar"), and nowhere that it went the claim's way; or the claim says
  it did not move and the sentence that it did.

Both are conservative on purpose: a negation that governs no direction word (in a comparison: any
negation), a claim of more than three direction words or that says both ways of one thing, or fewer than
two words shared in what moved leave the judgement to the model. `reversal` reads a whole passage. Its two
numbers were chosen on TRAIN data; it is measured in `bench/reversals.py`.

A third check, `denial`, reads a negation that governs no direction word: a claim that denies what a
sentence states ("no significant complications related to anticoagulation" against "a significant complication
rate related to anticoagulation therapy"), when no sentence denies it too. It is measured in the same bench.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from dataclasses import dataclass
from typing import Literal

from biocite.tokenize import STOPWORDS, stem_words

ReversalKind = Literal["swapped comparison", "opposite direction"]

_TOKEN = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*|[,;:()]")
# "up- and down-regulated" is "up-regulated and down-regulated" (else only "down-regulated" is read)
_SUSPENDED = re.compile(r"\b([a-z]+)-\s+(and|or)\s+([a-z]+)-([a-z]+)")
_BOUNDARY = frozenset(",;:()") | {"whereas", "while", "but", "although", "that", "which"}
_NEGATION = frozenset(
    "not no nor neither without never cannot fail failed fails unlikely absence lack lacked".split()
) | {"n't"}
# Direction words by axis, as written: +1 one way, -1 the other. Words that also name a condition or an
# outcome ("impaired glucose tolerance", "elevated troponin", "exacerbations", "harms", "stimulation",
# "drug-induced") are left out.
_DIRECTION: dict[str, tuple[str, int]] = {
    **{w: ("amount", 1) for w in """increase increases increased increasing rise rises rose risen rising raise raises
        raised raising higher greater enhance enhances enhanced enhancing augmented upregulated up-regulated
        upregulates promote promotes promoted promoting""".split()},
    **{w: ("amount", -1) for w in """decrease decreases decreased decreasing reduce reduces reduced reducing reduction
        reductions lower lowers lowered lowering decline declines declined diminished attenuated suppress suppresses
        suppressed inhibit inhibits inhibited downregulated down-regulated downregulates smaller repressed
        lessened""".split()},
    **{w: ("quality", 1) for w in "improve improves improved improving improvement improvements better beneficial protective".split()},
    **{w: ("quality", -1) for w in "worsen worsens worsened worsening worse harmful deteriorated detrimental aggravated exacerbated".split()},
    **{w: ("duration", 1) for w in "prolong prolongs prolonged prolonging lengthen lengthened".split()},
    **{w: ("duration", -1) for w in "shorten shortens shortened shortening".split()},
}  # fmt: skip
# No change: words that say so on their own, and words that say so under a negation ("did not differ", "no
# significant difference", "did not change"). A null move conflicts with a move of the claim on any axis.
_NULL = frozenset("similar comparable unchanged unaffected equivalent identical".split())
_NULL_NEGATED = frozenset(
    "differ differed differs different difference differences change changed changes affect affected alter "
    "altered influence influenced".split()
)
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
_TO_COMPARATIVE = frozenset({"superior", "inferior"})  # "superior (symptom control) to"
_COORDINATORS = frozenset("but and whereas while yet".split())
_SCOPE = 5  # tokens after (or before) a direction word that say what went that way
_BE = frozenset("is are was were be been being".split())
_REMAIN = frozenset("remain remains remained stayed".split())
_AUXILIARY = frozenset("did does do has have had could would".split())
_PREPOSITIONS = frozenset("in by from to among at after during over with for within across between".split())
# stems of what a no-change word may be said of without saying that a finding did not move
_RELATION = frozenset("associ relationship relat correl link strength effect magnitud".split())
_SIDE = 8  # tokens of a comparison's side
_NEGATED_WITHIN = 3  # a negation this many words before a direction word negates it
# chosen on TRAIN (Citation-Integrity SUPPORT claims, PubMedQA train conclusions, restatements flipped by the
# support data's TRAIN word pairs: bench/reversals.py)
SHARED = 2  # words the claim and the sentence must share in what went up or down
MAX_MOVES = 3  # direction words a claim may have and be read


@dataclass(frozen=True)
class _Sentence:
    words: list[str]  # lower-cased tokens, punctuation marks among them
    stems: list[str]
    negations: list[int]  # positions of negation words

    @classmethod
    def of(cls, text: str) -> _Sentence:
        text = _SUSPENDED.sub(r"\1-\4 \2 \3-\4", text.lower().replace("’", "'"))
        words = _outside_parentheses(_TOKEN.findall(text))
        negations = [i for i, w in enumerate(words) if w in _NEGATION or w.endswith("n't")]
        return cls(words, stem_words(words), negations)

    def terms(self, j: int) -> set[str]:
        """The stem of word j, and of its parts when hyphenated ("90-day" also matches "90 days")."""
        parts = [p for p in self.words[j].split("-") if p] if "-" in self.words[j] else []
        return {self.stems[j], *stem_words(parts)}

    @property
    def negated(self) -> bool:
        return bool(self.negations)

    def negates(self, i: int) -> int | None:
        """The negation word that governs the word at i ("did not reduce", "no reduction", "failed to
        increase"): one of the _NEGATED_WITHIN words before it, in the same clause."""
        for j in range(i - 1, max(i - 1 - _NEGATED_WITHIN, -1), -1):
            if self.words[j] in _BOUNDARY:
                return None
            if j in self.negations:
                return j
        return None


def _outside_parentheses(words: list[str]) -> list[str]:
    """The words, less what stands in parentheses: "a decrease (3.3 times) in HIF-1alpha" moved HIF-1alpha."""
    out, depth = [], 0
    for w in words:
        depth += (w == "(") - (w == ")")
        if depth <= 0 and w not in ("(", ")"):
            out.append(w)
        depth = max(depth, 0)
    return out


def _is_content(word: str) -> bool:
    return word not in STOPWORDS and word not in _BOUNDARY and len(word) > 1 and word not in _COMPARATIVE


@dataclass(frozen=True)
class _Comparison:
    scale: tuple[str, ...]  # the marker's scale and the words between it and "than" ("more", "effect")
    sign: int
    left: set[str]
    right: set[str]


def _side(s: _Sentence, indices: range, with_parts: bool = False) -> set[str]:
    """Content stems of the words at `indices` (and of hyphenated parts, `with_parts`), up to a clause boundary."""
    out: set[str] = set()
    for i in indices:
        if s.words[i] in _BOUNDARY:
            break
        if _is_content(s.words[i]) and s.words[i] not in _DIRECTION:
            out.update(s.terms(i) if with_parts else {s.stems[i]})
    return out


def _comparisons(s: _Sentence) -> list[_Comparison]:
    """Each "X <comparative> ... than Y" and "X superior/inferior ... to Y" of the sentence."""
    out: list[_Comparison] = []
    for i, word in enumerate(s.words):
        if word not in ("than", "to"):
            continue
        markers = _COMPARATIVE if word == "than" else _TO_COMPARATIVE
        marker = next((j for j in range(i - 1, max(i - 4, -1), -1) if s.words[j] in markers), None)
        if marker is None:
            continue
        scale, sign = _COMPARATIVE[s.words[marker]]
        between = tuple(s.stems[j] for j in range(marker + 1, i) if _is_content(s.words[j]))
        left = _side(s, range(marker - 1, max(marker - 1 - _SIDE, -1), -1)) or _elided_side(s, marker, out)
        right = _side(s, range(i + 1, min(i + 1 + _SIDE, len(s.words))))
        out.append(_Comparison((scale, *between), sign, left, right))
    return out


def _elided_side(s: _Sentence, marker: int, earlier: list[_Comparison]) -> set[str]:
    """The subject of "..., but (was) inferior to Y", which the sentence wrote once, before: the content words
    before the coordinator, less what earlier comparisons compared with. Empty when the subject is not elided.
    (`biocite check "As-needed budesonide-formoterol was superior to budesonide maintenance ..." --pmid
    29768149` said supports 0.88 against "... budesonide-formoterol was superior to terbutaline ... but inferior
    to budesonide maintenance therapy".)"""
    j = marker - 1
    while j >= 0 and (s.words[j] in _BE or s.words[j] in _AUXILIARY or s.words[j].endswith("ly")):
        j -= 1
    if j < 0 or s.words[j] not in _COORDINATORS:
        return set()
    before = {s.stems[k] for k in range(j) if _is_content(s.words[k]) and s.words[k] not in _DIRECTION}
    return before - set().union(*(e.right for e in earlier))


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


# "A increased Y compared with C" is a comparison written with a direction word: the sentence "Y with A was lower
# than with C" reverses it (`biocite check "As-needed budesonide-formoterol increased severe exacerbations
# compared with terbutaline." --pmid 29768149` said supports 0.91 against "... were lower than the rate with
# terbutaline").
_COMPARED_WITH = (("compared", "with"), ("compared", "to"), ("relative", "to"), ("versus",), ("vs",))
_SCALE_AXIS = {"more": "amount", "high": "amount", "large": "amount", "good": "quality", "long": "duration"}


@dataclass(frozen=True)
class _ComparedMove:
    axis: str
    sign: int
    subject: set[str]  # what the claim says moved one way ("budesonide-formoterol")
    comparator: set[str]  # what it was compared with ("terbutaline")
    moved: set[str]  # what moved ("severe exacerbations")


def _compared_moves(s: _Sentence) -> list[_ComparedMove]:
    """Each "A <direction word> Y compared with / versus C" of the sentence."""
    out = []
    for i, word in enumerate(s.words):
        if word not in _DIRECTION or s.negates(i) is not None:
            continue
        for k in range(i + 1, min(i + 1 + _SIDE, len(s.words))):
            if s.words[k] in _BOUNDARY:
                break
            marker = next((m for m in _COMPARED_WITH if tuple(s.words[k : k + len(m)]) == m), None)
            if marker is None:
                continue
            axis, sign = _DIRECTION[word]
            subject = _side(s, range(i - 1, max(i - 1 - _SIDE, -1), -1), with_parts=True)
            comparator = _side(s, range(k + len(marker), min(k + len(marker) + _SIDE, len(s.words))), True)
            out.append(_ComparedMove(axis, sign, subject, comparator, _side(s, range(i + 1, k), True)))
            break
    return out


def _compare_move(claim: list[_ComparedMove], sentence: _Sentence) -> int:
    """+1 a "than" comparison of the sentence says what one of the claim's compared moves says, -1 the reverse, 0
    neither: the claim's subject on one side, its comparator on the other, what moved in the sentence."""
    if not claim or sentence.negated:
        return 0
    terms = {t for j in range(len(sentence.words)) for t in sentence.terms(j)}
    verdicts = set()
    for c in claim:
        if not c.moved & terms:
            continue
        for e in _comparisons(sentence):
            if _SCALE_AXIS.get(e.scale[0]) != c.axis:
                continue
            # "higher with A than with C": the words between the comparative and "than" are A's side
            left = e.left | set(e.scale[1:])
            left, right = left | _parts(left), e.right | _parts(e.right)
            aligned = bool((c.subject & left) - right) and bool((c.comparator & right) - left)
            swapped = bool((c.subject & right) - left) and bool((c.comparator & left) - right)
            if aligned != swapped:
                verdicts.add(c.sign * e.sign * (1 if aligned else -1))
    return verdicts.pop() if len(verdicts) == 1 else 0


def _parts(stems: set[str]) -> set[str]:
    """The parts of hyphenated stems ("budesonide-contain" -> "budesonid", "contain")."""
    return set(stem_words([p for t in stems if "-" in t for p in t.split("-") if p]))


def _predicative(s: _Sentence, i: int) -> bool:
    """The word at i is said of its subject ("mortality was similar", "remained unchanged"), not an
    attribute ("similar responses in brain reward circuitries": alike, not unchanged)."""
    before = [w for w in s.words[max(i - 3, 0) : i] if not w.endswith("ly")]
    return bool(before) and before[-1] in _BE | _REMAIN


def _verbal(s: _Sentence, i: int, negation: int | None) -> bool:
    """A no-change word said of its subject: "mortality was similar", "mortality did not differ" (not
    "no difference in mortality")."""
    start = negation if negation is not None else i
    before = [w for w in s.words[max(start - 2, 0) : start] if not w.endswith("ly")]
    return bool(before) and before[-1] in _BE | _REMAIN | _AUXILIARY


def _said_of_a_relation(s: _Sentence, i: int) -> bool:
    """ "The association between job strain and heart disease is similar in men and women": no change across
    groups in a relation, not a finding that did not move."""
    for j in range(i - 1, -1, -1):
        if s.words[j] in _BOUNDARY:
            return False
        if s.stems[j] in _RELATION:
            return True
    return False


def _object(s: _Sentence, i: int, subject_side: bool | None = None) -> set[str]:
    """What the word at i says moved: the words after it ("reduced the risk of stroke", "a reduction in
    stroke"), or before it when a form of "to be" (and an adverb) precedes it ("stroke was significantly
    reduced") or `subject_side` says so, up to a clause boundary."""
    if subject_side is None:
        before = [w for w in s.words[max(i - 2, 0) : i] if not w.endswith("ly")]
        after = next((w for w in s.words[i + 1 :] if not w.endswith("ly")), None)
        passive = bool(before) and before[-1] in _BE
        # "mortality decreased (significantly) in the treated group": what moved is the subject
        intransitive = (s.words[i].endswith("ed") or s.words[i] in ("rose", "risen")) and (
            after is None or after in _BOUNDARY or after in _PREPOSITIONS
        )
        subject_side = passive or intransitive
    indices = (
        range(i - 1, max(i - 1 - _SCOPE, -1), -1)
        if subject_side
        else range(i + 1, min(i + 1 + _SCOPE, len(s.words)))
    )
    out: set[str] = set()
    for j in indices:
        if s.words[j] in _BOUNDARY or (s.words[j] in _BE and not subject_side):
            break
        word = s.words[j]
        if _is_content(word) and word not in _DIRECTION and j not in s.negations and not word.endswith("ly"):
            out.update(s.terms(j))
    return out


State = tuple[int, bool]  # a direction word's sign, and whether a negation governs it


@dataclass(frozen=True)
class _Move:
    axis: str | None  # None: no change, whatever the axis
    state: State
    moved: frozenset[str]  # content stems of what the direction word says moved


def _moves(s: _Sentence) -> list[_Move] | None:
    """The sentence's direction and no-change words, each with what it says moved; None when a negation of
    the sentence governs none of them ("It is not true that X reduced Y": the sentence is not read)."""
    out, governing = [], set()
    for i, word in enumerate(s.words):
        negation = s.negates(i)
        if (word in _NULL and negation is None and _predicative(s, i)) or (
            word in _NULL_NEGATED and negation is not None
        ):
            governing.update([negation] if negation is not None else [])
            verbal = _verbal(s, i, negation)
            if not (verbal and _said_of_a_relation(s, i)):
                out.append(_Move(None, (0, False), frozenset(_object(s, i, subject_side=verbal))))
            continue
        if word not in _DIRECTION or (word in _COMPARATIVE and "than" in s.words[i : i + 4]):
            continue
        if i + 1 < len(s.words) and s.words[i + 1] in _NOT_DIRECTION_BEFORE:
            continue
        axis, sign = _DIRECTION[word]
        if negation is not None:
            governing.add(negation)
        out.append(_Move(axis, (sign, negation is not None), frozenset(_object(s, i))))
    return out if governing == set(s.negations) else None


def _plain(moves: list[_Move]) -> list[_Move]:
    """The claim's moves that no other of its moves contradicts about the same thing ("up- and
    down-regulated genes" says both of genes: neither is read); none when it has more than MAX_MOVES (a
    list of findings, left to the model)."""
    if len(moves) > MAX_MOVES:
        return []
    return [
        m
        for m in moves
        if not any(_same_axis(o, m) and _conflict(m.state, o.state) and m.moved & o.moved for o in moves)
    ]


def _conflict(claim: State, sentence: State) -> bool:
    """ "reduced" vs "increased", "reduced" vs "did not differ" (sign 0), "reduced" vs "did not reduce".
    ("did not reduce" vs "increased" or vs "similar": no.)"""
    (a, a_negated), (b, b_negated) = claim, sentence
    if a_negated or b_negated:
        return a == b != 0 and a_negated != b_negated
    return a != b


def _same_axis(a: _Move, b: _Move) -> bool:
    return a.axis == b.axis or a.axis is None or b.axis is None


def _direction(claim: list[_Move], sentence: _Sentence) -> list[int]:
    """For each of the claim's moves: +1 the sentence moves the same thing the same way, -1 only the
    opposite way or not at all, 0 neither (or unsure: a negation that governs no direction word, fewer than
    SHARED words of what moved in common)."""
    theirs = _moves(sentence)
    out = []
    for ours in claim:
        same = [m for m in theirs or [] if _same_axis(m, ours) and len(ours.moved & m.moved) >= SHARED]
        if any(m.state == ours.state for m in same):
            out.append(1)
        else:
            out.append(-1 if any(_conflict(ours.state, m.state) for m in same) else 0)
    return out


@dataclass(frozen=True)
class Reversal:
    index: int  # the sentence that reverses the claim
    kind: ReversalKind


def reversal(claim: str, sentences: Sequence[str]) -> Reversal | None:
    """The first sentence that reverses the claim: a comparison that one sentence reverses and none makes,
    or a direction word of the claim that one sentence reverses and none restates."""
    c = _Sentence.of(claim)
    moves = _plain(_moves(c) or [])
    restated = [False] * len(moves)
    reversed_at: list[int | None] = [None] * len(moves)
    swapped_at: int | None = None
    compared_moves = [] if c.negated else _compared_moves(c)  # read once for the whole passage
    for i, text in enumerate(sentences):
        s = _Sentence.of(text)
        compared = _compare(c, s) or _compare_move(compared_moves, s)
        if compared > 0:
            return None
        if compared < 0 and swapped_at is None:
            swapped_at = i
        for k, verdict in enumerate(_direction(moves, s)):
            restated[k] = restated[k] or verdict > 0
            if verdict < 0 and reversed_at[k] is None:
                reversed_at[k] = i
    if swapped_at is not None:
        return Reversal(swapped_at, "swapped comparison")
    reversed_by = [at for at, ok in zip(reversed_at, restated, strict=True) if at is not None and not ok]
    return Reversal(min(reversed_by), "opposite direction") if reversed_by else None


# --- denials -----------------------------------------------------------------------------------------------
# A claim that denies what a sentence states, with no direction word to read: `biocite check "Therapeutic
# anticoagulation in the trauma patient is safe, with no significant complications related to anticoagulation
# therapy." --pmid 18847643` said supports 0.90 against "Trauma patients have a significant complication rate
# related to anticoagulation therapy" (a generated sentence the verifier kept).
_QUALIFIER = frozenset({"without"})  # "patients without diabetes" names people, it denies nothing
_DENIAL_SCOPE = 6  # tokens after a negation (in its clause) that say what it denies
_SUBJECT_SCOPE = 4  # ... and before it, when it follows "was", "did" ("X was not associated with Y")
_SLACK = 4  # words of the sentence between those it shares with the denial, beyond the denial's own
# content words a denial and a sentence must share (and at least two thirds of the denial's)
DENIED_SHARED = 3
# a sentence that asks, sets out to learn, supposes or says what was studied or how states nothing of the kind ("To
# study whether X", "We hypothesized that X", "X may reduce Y", "A difference in X was studied in ...", "Data was
# analyzed using SPSS and ROC curves were generated for BD as a predictor of mortality")
_STATES_NOTHING = re.compile(
    r"\b(?:whether|hypothes\w*|aims?|aimed|objectives?|purpose|unknown|unclear|controvers\w*|concerns?|may|"
    r"might|to (?:study|determine|assess|evaluate|investigate|examine|explore|test)|studied|examines?|examined|"
    r"determined|(?:was|were|we) (?:analy[sz]ed|generated|performed|used|calculated|collected))\b|\?",
    re.IGNORECASE,
)
_NOT_SIGNIFICANT = re.compile(r"\b(?:non-?significant|insignificant)\b")
# clauses read apart: "X have a significant complication rate, and predicting which will remains unclear"
_CLAUSE = re.compile(r"[;:]\s+|,\s+(?=(?:and|but|whereas|while|although|though)\b)")


@dataclass(frozen=True)
class _Denial:
    # what the negation denies: each content word's stems (`_Sentence.terms`), the head first
    words: tuple[frozenset[str], ...]
    # of those, what it is said of ("X" of "X was not associated with Y")
    subject: tuple[frozenset[str], ...]

    @property
    def needed(self) -> int:
        """Words a sentence must state: DENIED_SHARED, and two thirds of the denial's."""
        return max(DENIED_SHARED, -(-2 * len(self.words) // 3))


def _denied(s: _Sentence, n: int) -> _Denial | None:
    """What the negation at n denies; None when it governs a direction or no-change word (the direction rule
    reads those) or another negation, or opens a contrast ("not only", "but not")."""
    if (n + 1 < len(s.words) and s.words[n + 1] == "only") or (n and s.words[n - 1] in ("but", "and", "or")):
        return None
    words: list[frozenset[str]] = []
    for j in _after(s, n):
        word = s.words[j]
        if word in _DIRECTION or word in _NULL or word in _NULL_NEGATED or j in s.negations:
            return None
        if _names(word):
            words.append(frozenset(s.terms(j)))
    subject: list[frozenset[str]] = []
    if _after_a_verb(s, n):
        for j in range(n - 2, max(n - 2 - _SUBJECT_SCOPE, -1), -1):
            if s.words[j] in _BOUNDARY or j in s.negations:
                break
            if _names(s.words[j]):
                subject.append(frozenset(s.terms(j)))
    return _Denial((*words, *subject), tuple(subject)) if words else None


def _after(s: _Sentence, n: int) -> list[int]:
    """The positions after the negation at n that it governs: up to _DENIAL_SCOPE, in its clause."""
    out = []
    for j in range(n + 1, min(n + 1 + _DENIAL_SCOPE, len(s.words))):
        if s.words[j] in _BOUNDARY:
            break
        out.append(j)
    return out


def _after_a_verb(s: _Sentence, n: int) -> bool:
    """The negation at n follows "was", "did" ...: it is said of the subject before them."""
    return n > 0 and s.words[n - 1] in _BE | _AUXILIARY


def _names(word: str) -> bool:
    """A content word that names what is denied (not an adverb)."""
    return _is_content(word) and not word.endswith("ly")


def _denials(s: _Sentence) -> list[_Denial]:
    return [d for n in s.negations if s.words[n] not in _QUALIFIER and (d := _denied(s, n))]


def _governed(s: _Sentence) -> set[int]:
    """Positions that a negation of the sentence governs (its scope, in its clause), the qualifier's too."""
    out: set[int] = set()
    for n in s.negations:
        out.update(_after(s, n))
        if _after_a_verb(s, n):
            out.update(range(max(n - 1 - _SUBJECT_SCOPE, 0), n))
    return out


def _matched(denied: Sequence[frozenset[str]], terms: Set[str]) -> int:
    return sum(bool(w & terms) for w in denied)


def _states(s: _Sentence, governed: set[int], denial: _Denial) -> bool:
    """The sentence states what the denial names, outside the scope of its negations (`governed`) and in one
    phrase (within the denial's length plus _SLACK words): `needed` of its words, its head (the first) and
    subject among them."""
    stems = frozenset().union(*denial.words)
    at = [
        j for j in range(len(s.words)) if j not in governed and _is_content(s.words[j]) and s.terms(j) & stems
    ]
    width = len(denial.words) + _SLACK
    for k, start in enumerate(at):
        window = {t for j in at[k:] if j - start <= width for t in s.terms(j)}
        if (
            _matched(denial.words, window) >= denial.needed
            and denial.words[0] & window  # its head: "associated" of "not associated with RSA"
            and (not denial.subject or _matched(denial.subject, window))
        ):
            return True
    return False


def _denies(s: _Sentence, ours: list[_Denial]) -> bool:
    """A denial of the sentence shares DENIED_SHARED words with one of the claim's, or the sentence calls what it
    shares with one non-significant ("ROC for BD as a predictor of mortality statistically non-significant")."""
    if _NOT_SIGNIFICANT.search(" ".join(s.words)):
        terms = {t for j in range(len(s.words)) for t in s.terms(j)}
        return any(_matched(d.words, terms) >= DENIED_SHARED for d in ours)
    theirs = [frozenset().union(*d.words) for d in _denials(s)]
    return any(_matched(d.words, stems) >= DENIED_SHARED for d in ours for stems in theirs)


def denial(claim: str, sentences: Sequence[str]) -> int | None:
    """The first sentence that states what the claim denies, when none denies it too (clauses that ask, set out
    to learn, suppose or say how a study was done are not read)."""
    ours = _denials(_Sentence.of(claim))
    if not ours:
        return None
    stated: int | None = None
    for i, text in enumerate(sentences):
        for clause in _CLAUSE.split(text):
            if _STATES_NOTHING.search(clause):
                continue
            s = _Sentence.of(clause)
            if _denies(s, ours):
                return None
            if stated is None:
                governed = _governed(s)
                stated = i if any(_states(s, governed, d) for d in ours) else None
    return stated
