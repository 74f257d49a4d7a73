"""Claims that add a clause their evidence never mentions (biocite.added_clauses): what is caught, and what is
left to the model."""

from __future__ import annotations

import pytest

from biocite.added_clauses import added_clause, trailing_clauses

TRIAL = [
    "We randomized 1,203 adults aged 40 to 75 years with type 2 diabetes to metformin or placebo.",
    "Metformin reduced HbA1c by 0.8% compared with placebo after 12 months.",
    "Gastrointestinal adverse events were more common with metformin, especially in elderly patients.",
]


@pytest.mark.parametrize(
    ("claim", "clause"),
    [
        ("Metformin reduced HbA1c, and it also halved all-cause mortality.", "and it also halved all-cause mortality"),
        ("Metformin reduced HbA1c, whereas the opposite held in postmenopausal women.",
         "whereas the opposite held in postmenopausal women"),
        ("Metformin reduced HbA1c, as shown previously by genome-wide sequencing of twins.",
         "as shown previously by genome-wide sequencing of twins"),
        ("Metformin reduced HbA1c, especially in Japan, which in turn explained most cardiovascular deaths.",
         "which in turn explained most cardiovascular deaths"),
    ],
)  # fmt: skip
def test_a_clause_no_sentence_mentions_is_found(claim: str, clause: str) -> None:
    found = added_clause(claim, TRIAL)
    assert found is not None and found.clause == clause


@pytest.mark.parametrize(
    "claim",
    [
        "Metformin reduced HbA1c compared with placebo.",  # no trailing clause
        "Metformin reduced HbA1c, especially in elderly patients.",  # the passage names them
        "Metformin reduced HbA1c, and adverse events were more common.",  # the passage says so
        "Metformin reduced HbA1c, notably in Japan.",  # one or two content words say too little
        "Metformin reduced HbA1c, particularly in Japanese men.",  # the opener is no content word
        "Metformin, an old drug, reduced HbA1c.",  # an apposition opens with no conjunction
        "Metformin reduced HbA1c, although these findings need to be interpreted with caution.",  # no claim
    ],
)
def test_a_clause_the_evidence_mentions_or_too_short_to_tell_is_left_to_the_model(claim: str) -> None:
    assert added_clause(claim, TRIAL) is None


def test_trailing_clauses_split_at_a_comma_and_a_conjunction_only() -> None:
    assert trailing_clauses("A rose, and B fell, whereas C held.") == ["and B fell", "whereas C held"]
    assert trailing_clauses("A and B rose.") == []  # no comma: one clause
