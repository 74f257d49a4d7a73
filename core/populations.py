"""Claims about another population than their evidence: children vs adults, women vs men, people vs animals.

`biocite check "In children with type 2 diabetes, metformin improves glycaemic control." --text "<a trial of
1,203 adults ...>"` said supports (0.94), and so did "In mice ..." (0.93): the fine-tuned cross-encoder reads
what was done and found, hardly in whom. A clinician applying an adult trial to children, or a mouse study to
patients, is making the error a citation check exists to catch.

On each axis (age, sex, species) a claim that names one group only ("children") is about *another
population* than a passage that names the opposite group ("adults") and nowhere names the claim's group, nor
any word of its family ("paediatric", "infants", "adolescents"). The verdict is then neutral, not
contradicted: the evidence is silent about the claim's population, it does not say the opposite.

Conservative on purpose: a claim naming both groups ("children and adults"), a passage naming both (an
adult trial that mentions children in its background), and a passage naming neither ("patients") leave the
judgement to the model, and so does "In pregnant women ..." against that adult trial (0.97): no passage names
the opposite of pregnancy. "aged" mentions adults unless the ages after it all fall in childhood ("children
aged 1 to 16 years"). Hyphenated words are read whole ("adult-onset", "male-pattern" are not groups). It
is measured in `bench/populations.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_TOKEN = re.compile(r"[a-z]+(?:['-][a-z]+)*")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# axis -> group -> (the words and two-word phrases that NAME it, more words that MENTION it). A claim is about
# a group when it names it and names no other group of the axis; a passage names the other group when a
# sentence names it, and mentions the claim's group when any word of either set occurs in it.
Group = tuple[frozenset[str], frozenset[str]]
AXES: dict[str, dict[str, Group]] = {
    "age": {
        "children": (
            _words(
                "child children paediatric pediatric kids boys girls schoolchildren infants neonates newborns "
                "babies toddlers preschoolers adolescents teenagers"
            ),
            _words(
                "childhood kid boy girl school-age school-aged infant infancy neonate neonatal newborn baby "
                "toddler preschool adolescent adolescence teenager teens youth youths juvenile juveniles pubertal "
                "paediatrics pediatrics young_people students"
            ),
        ),
        "adults": (
            _words(
                "adults elderly older_adults older_people older_persons older_patients older_individuals "
                "older_women older_men"
            ),
            _words(
                "adult geriatric seniors octogenarians nonagenarians middle-aged postmenopausal aged older"
            ),
        ),
    },
    "sex": {
        "women": (
            _words("women woman girls mothers pregnant postmenopausal premenopausal"),
            _words(
                "female females girl mother pregnancy pregnancies maternal perimenopausal menopausal wives "
                "sex gender"
            ),
        ),
        "men": (
            _words("men man boys fathers"),
            _words("male males boy father paternal husbands sex gender"),
        ),
    },
    "species": {
        "people": (
            _words(
                "patients people persons humans participants volunteers outpatients inpatients women men "
                "children adults infants"
            ),
            _words("patient human individuals subjects clinical"),
        ),
        "animals": (
            _words(
                "mice rats rodents rabbits dogs pigs piglets swine sheep cattle calves monkeys primates macaques "
                "hamsters zebrafish"
            ),
            _words(
                "animal animals mouse murine rat rodent rabbit dog canine pig porcine ovine bovine monkey "
                "macaque rhesus drosophila cats feline horses equine chickens ferrets mink"
            ),
        ),
    },
}


@dataclass(frozen=True)
class PopulationMismatch:
    index: int  # the first sentence naming the passage's group
    axis: str
    claim_group: str
    passage_group: str

    @property
    def described(self) -> str:
        """What a reader is told: "adults, not children"."""
        return f"{self.passage_group}, not {self.claim_group}"


# a share of one sex ("64.4% were male", "women (52%)") reports a population of both
_SEX_SHARE = re.compile(
    r"%\W+(?:\w+\W+){0,4}?(?:fe)?males?\b|%\W+(?:\w+\W+){0,4}?(?:wo)?men\b"
    r"|\b(?:fe)?males?\W+(?:\w+\W+){0,4}?\d[\d.]*\s*%|\b(?:wo)?men\W+(?:\w+\W+){0,4}?\d[\d.]*\s*%",
    re.I,
)


# "aged" before ages all of childhood ("children aged 1 to 16 years", "aged 2 months to 18 years", "aged under 5")
# gives no adults: "aged" is a word of the adults' family, which kept a paediatric trial that gives its ages from
# being another population than adults. Ages reaching adulthood ("aged 40 to 75", "aged 6 weeks to 70 years",
# "aged 12 and over") still mention them.
_AGES = re.compile(
    r"""\baged(?=\s+
        (?:between\s+|from\s+|under\s+|up\s+to\s+|<\s*)?
        (\d+(?:\.\d+)?)\s*(years?|months?|weeks?|days?)?  # the first age and its unit
        (?:\s*(?:-|–|to|and)\s*(\d+(?:\.\d+)?)\s*(years?|months?|weeks?|days?)?)?  # the last age
        (\s*(?:of\s+age\s*)?(?:and|or)\s+(?:over|older|above|more|up))?  # and upwards
    )""",
    re.I | re.X,
)
_ADULTHOOD = 18  # years


def _without_childhood_ages(text: str) -> str:
    def read(m: re.Match[str]) -> str:
        unit = (m[4] if m[3] else m[2]) or "years"  # the unit of the oldest age, as written last
        oldest = max(float(m[1]), float(m[3] or 0))
        reaches_adulthood = bool(m[5]) or (unit.lower().startswith("year") and oldest > _ADULTHOOD)
        return m[0] if reaches_adulthood else ""

    return _AGES.sub(read, text)


def _terms(text: str) -> set[str]:
    """The text's words and its two-word phrases ("older_adults"), lower-cased, hyphenated words whole;
    "sex" when it gives the share of one sex."""
    text = _without_childhood_ages(text)
    tokens = [t.removesuffix("'s") for t in _TOKEN.findall(text.lower().replace("’", "'"))]
    terms = set(tokens) | {f"{a}_{b}" for a, b in zip(tokens, tokens[1:], strict=False)}
    return terms | {"sex"} if _SEX_SHARE.search(text) else terms


def _named(terms: set[str], axis: str) -> set[str]:
    return {group for group, (names, _) in AXES[axis].items() if terms & names}


def _mentioned(terms: set[str], axis: str, group: str) -> bool:
    names, more = AXES[axis][group]
    return bool(terms & (names | more))


def other_population(claim: str, sentences: Sequence[str]) -> PopulationMismatch | None:
    """The first axis on which the claim names one group only and the passage names another and never the
    claim's, with the first sentence naming the passage's group; None when there is none."""
    claim_terms = _terms(claim)
    per_sentence = [_terms(s) for s in sentences]
    for axis in AXES:
        claimed = _named(claim_terms, axis)
        if len(claimed) != 1:
            continue
        (group,) = claimed
        if any(_mentioned(claim_terms, axis, other) for other in AXES[axis] if other != group):
            continue
        if any(_mentioned(t, axis, group) for t in per_sentence):
            continue
        for i, terms in enumerate(per_sentence):
            if others := _named(terms, axis):
                return PopulationMismatch(i, axis, group, sorted(others)[0])
    return None


def studied_in_animals(text: str, mesh: Sequence[str] = ()) -> bool:
    """An animal study: by its MeSH check tags when it has them (Animals and not Humans, as NLM's indexers
    tag it), else by its words (it names animals and mentions no people: on the 1,000 corpus abstracts with
    MeSH, 18 of the 32 tagged animal-only found, 1 false: `bench/populations.py`)."""
    if mesh:
        return "Animals" in mesh and "Humans" not in mesh
    terms = _terms(text)
    return "animals" in _named(terms, "species") and not _mentioned(terms, "species", "people")


def mentions_animals(text: str) -> bool:
    """The text names or mentions animals ("in rats", "murine")."""
    return _mentioned(_terms(text), "species", "animals")
