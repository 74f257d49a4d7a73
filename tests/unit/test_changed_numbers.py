"""Claims that misstate a number of their evidence (biocite.changed_numbers): what is caught, and what is
left to the model."""

from __future__ import annotations

import pytest

from biocite.changed_numbers import changed_number

ASTHMA = [
    "We randomized 3849 patients with mild asthma to as-needed terbutaline or budesonide-formoterol.",
    "As-needed budesonide-formoterol reduced the annualized rate of severe exacerbations by 64% compared "
    "with terbutaline (0.07 vs 0.20; rate ratio 0.36; P < 0.001).",
    "Median follow-up was 52 weeks.",
]


@pytest.mark.parametrize(
    ("claim", "claimed", "stated"),
    [
        (
            "Budesonide-formoterol reduced the rate of severe exacerbations by 46% compared with terbutaline.",
            46,
            64,
        ),
        ("The rate ratio was 0.63 with budesonide-formoterol.", 0.63, 0.36),
        ("Median follow-up was 26 weeks.", 26, 52),
        (  # written out as "percent"
            "Severe exacerbations fell by 46 percent compared with terbutaline.",
            46,
            64,
        ),
    ],
)
def test_a_quantity_stated_with_another_value_is_found(claim: str, claimed: float, stated: float) -> None:
    found = changed_number(claim, ASTHMA)
    assert found is not None
    assert (found.claimed, found.stated) == (claimed, stated)
    assert found.index == (2 if "follow-up" in claim else 1)


@pytest.mark.parametrize(
    "claim",
    [
        # the value as stated, rounded, or as a share
        "Budesonide-formoterol reduced the rate of severe exacerbations by 64% compared with terbutaline.",
        "Budesonide-formoterol reduced the rate of severe exacerbations by 64.2% compared with terbutaline.",
        "The rate ratio for severe exacerbations was 36% with budesonide-formoterol.",
        # bounds and estimates: a more exact value does not contradict them
        "Budesonide-formoterol reduced the rate of severe exacerbations by more than 50% compared with "
        "terbutaline.",
        "Budesonide-formoterol reduced the rate of severe exacerbations by about 60%.",
        # p-values, confidence levels, years, names with numbers, reference markers
        "The reduction in severe exacerbations was significant (P < 0.05).",
        "The rate of severe exacerbations was reduced in 2018 by budesonide-formoterol.",
        "IL-6 and COVID-19 severe exacerbations were reduced by budesonide-formoterol.",
        "Severe exacerbations were reduced by budesonide-formoterol (12).",
        # a number the evidence states nowhere for that quantity: left to the model
        "Budesonide-formoterol reduced hospital admissions by 30%.",
        # the claim states the evidence's value too (two studies' values side by side)
        "Budesonide-formoterol reduced the rate of severe exacerbations by 64% in one trial and by 46% "
        "compared with terbutaline in another.",
    ],
)
def test_numbers_that_agree_or_are_not_read_leave_the_claim_to_the_model(claim: str) -> None:
    assert changed_number(claim, ASTHMA) is None


def test_a_value_stated_anywhere_in_the_passage_is_not_changed() -> None:
    """Another sentence states the claim's value: the passage reports both, so no rule decides."""
    passage = [*ASTHMA, "In the per-protocol population severe exacerbations fell by 46% with terbutaline."]
    claim = "Budesonide-formoterol reduced the rate of severe exacerbations by 46% compared with terbutaline."
    assert changed_number(claim, passage) is None


def test_lancet_decimal_points_are_read_as_decimals() -> None:
    sentence = ["3325 (11·7%) reported at least one systemic effect after the first dose."]
    assert (
        changed_number("11.7% reported at least one systemic effect after the first dose.", sentence) is None
    )
    assert changed_number("17% reported at least one systemic effect after the first dose.", sentence)


def test_a_range_is_a_bound_and_a_change_is_two_values() -> None:
    evidence = ["Mortality in patients with cirrhosis and COVID-19 was 32% at 30 days."]
    ranged = "Mortality was reported in 4.8% to 34.6% of patients with cirrhosis and COVID-19."
    assert changed_number(ranged, evidence) is None
    change = ["The prevalence of achieving an A1C below target increased from 44% to 57% in ten years."]
    assert changed_number(
        "The prevalence of achieving an A1C below target increased from 44% to 60%.", change
    )
