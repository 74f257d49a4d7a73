"""Claims about another population than their evidence (biocite.populations): what is caught, and what is
left to the model."""

from __future__ import annotations

import pytest

from biocite.populations import mentions_animals, other_population, studied_in_animals

ADULT_TRIAL = [
    "We randomized 1,203 adults aged 40 to 75 years with type 2 diabetes to metformin or placebo.",
    "Metformin reduced HbA1c by 0.8% compared with placebo.",
    "In adults with type 2 diabetes, metformin improves glycaemic control.",
]
MOUSE_STUDY = [
    "We fed mice a high-fat diet for 12 weeks.",
    "Metformin lowered fasting glucose and hepatic fat.",
]
MEN_COHORT = [
    "We followed 22,071 male physicians for five years.",
    "Aspirin reduced myocardial infarction in men.",
]


@pytest.mark.parametrize(
    ("claim", "sentences", "axis", "described", "index"),
    [
        ("In children with type 2 diabetes, metformin improves glycaemic control.", ADULT_TRIAL, "age",
         "adults, not children", 0),
        ("Metformin lowered glucose in paediatric patients.", ADULT_TRIAL, "age", "adults, not children", 0),
        ("Metformin lowered glucose in babies.", ADULT_TRIAL, "age", "adults, not children", 0),
        ("Metformin lowered fasting glucose in patients with obesity.", MOUSE_STUDY, "species",
         "animals, not people", 0),
        ("Aspirin reduced myocardial infarction in women.", MEN_COHORT, "sex", "men, not women", 1),
        ("Metformin lowered fasting glucose in rats.", ADULT_TRIAL, "species", "people, not animals", 0),
    ],
)  # fmt: skip
def test_a_claim_about_the_opposite_group_is_found(
    claim: str, sentences: list[str], axis: str, described: str, index: int
) -> None:
    found = other_population(claim, sentences)
    assert found is not None
    assert (found.axis, found.described, found.index) == (axis, described, index)


@pytest.mark.parametrize(
    ("claim", "sentences"),
    [
        # the claim's own group: nothing to find
        ("In adults with type 2 diabetes, metformin improves glycaemic control.", ADULT_TRIAL),
        # no group named by the claim
        ("Metformin improves glycaemic control in type 2 diabetes.", ADULT_TRIAL),
        # a claim naming both groups
        ("Metformin lowers glucose in children and adults.", ADULT_TRIAL),
        # a passage naming both: an adult trial that mentions children in its background
        ("Metformin lowers glucose in children.", ["Children were excluded.", *ADULT_TRIAL]),
        # the claim's group mentioned by a word of its family, not its name ("paediatric", "infancy")
        ("Metformin lowers glucose in children.", [*ADULT_TRIAL, "Paediatric data are awaited."]),
        # a passage naming neither group
        ("Aspirin reduced myocardial infarction in women.", ["Aspirin reduced myocardial infarction."]),
        # hyphenated words are read whole: "adult-onset" names no group
        ("Adult-onset asthma responds to inhaled steroids in children.", ["Asthma in children responds."]),
        # a claim mentioning the other species' family ("human" alongside "mice")
        ("In mice, as in human tissue, metformin lowers glucose.", ADULT_TRIAL),
    ],
)
def test_what_is_left_to_the_model(claim: str, sentences: list[str]) -> None:
    assert other_population(claim, sentences) is None


def test_a_mixed_sex_population_reported_as_shares_is_not_one_sex() -> None:
    """A share of one sex ("64.4% were male"): the rest were women."""
    for said in ("64.4% were male", "52% of the participants were men", "men (64%)"):
        passage = [f"The mean age was 58.9 years, and {said}.", "Statins lowered mortality."]
        assert other_population("Statins lowered mortality in women.", passage) is None
    assert other_population("Statins lowered mortality in women.", MEN_COHORT) is not None


def test_a_possessive_names_its_group() -> None:
    assert other_population("Metformin improved children's glycaemic control.", ADULT_TRIAL) is not None
    assert other_population("Metformin improved children’s glycaemic control.", ADULT_TRIAL) is not None


def test_an_animal_study_by_its_mesh_check_tags_or_else_by_its_words() -> None:
    rat_study = "In spontaneously hypertensive rats, naloxone reversed the effect of clonidine."
    assert studied_in_animals(rat_study)
    assert not studied_in_animals(rat_study, ["Animals", "Humans", "Rats"])  # the indexers' tags decide
    assert studied_in_animals("Clonidine lowered blood pressure.", ["Animals", "Rats"])
    assert not studied_in_animals("Rats and patients alike responded.")  # people mentioned
    assert not studied_in_animals("Clonidine lowered blood pressure.")  # no one named
    assert mentions_animals("Does edaravone protect the ovaries of rats?")
    assert not mentions_animals("Does edaravone protect the ovaries?")


@pytest.mark.parametrize(
    ("ages", "mentions_adults"),
    [
        ("children aged 1 to 16 years", False),
        ("children aged between 1 and 16 years", False),
        ("infants aged 6-24 months", False),
        ("children aged under 5", False),
        ("children aged 2 months to 18 years", False),
        ("patients aged from 6 weeks to 70 years", True),
        ("patients aged 40 to 75 years", True),
        ("patients aged 12 years and older", True),
        ("children aged 12 and over", True),
        ("the aged", True),
    ],
)
def test_an_age_range_of_childhood_mentions_no_adults(ages: str, mentions_adults: bool) -> None:
    """The word "aged" is a word of the adults' family, but not before ages that all fall in childhood: a paediatric
    trial that gives its ages is another population than adults."""
    passage = [f"We randomised children: {ages} received atropine.", "Atropine reduced hypersalivation."]
    found = other_population("Atropine reduced hypersalivation in adults.", passage)
    assert (found is None) is mentions_adults
