"""What tells a condition from its neighbour in entity coverage: designators (agent/designators.py: type 1 is
not type 2, stage II is not stage III), opposite qualifiers (agent/opposites.py: acute is not chronic) and the organ
(nasal polyps are not colonic polyps)."""

from __future__ import annotations

import pytest

from biocite.agent import designators
from biocite.agent.coverage import DocumentFrequencies, DocumentTerms, covers, key_concepts
from biocite.agent.graph import Agent
from biocite.records import Document
from biocite.tokenize import tokenize
from tests.unit.agent_fakes import agent_settings
from tests.unit.test_answering import TokenDocsRetriever


def _df(*texts: str, n_other: int = 100) -> DocumentFrequencies:
    return DocumentFrequencies.from_token_lists(
        [tokenize(t, stem=True) for t in texts] + [["filler"]] * n_other
    )


def _doc(abstract: str, mesh: tuple[str, ...] = ()) -> DocumentTerms:
    return DocumentTerms.of(Document(pmid="1", title="", abstract=abstract, mesh=list(mesh)))


@pytest.mark.parametrize(
    ("words", "merged"),
    [
        (["type", "2", "diabetes"], ["type 2", "diabetes"]),
        (["type-2", "diabetes"], ["type 2", "diabetes"]),
        (["stages", "II", "and", "III"], ["stages II III"]),
        (["phase", "I", "trials"], ["phase I", "trials"]),
        (["type", "A", "dissection"], ["type A", "dissection"]),
        (["group", "B", "streptococcus"], ["group B", "streptococcus"]),
        (["Can", "I", "take", "a", "type", "of", "drug"], ["Can", "I", "take", "a", "type", "of", "drug"]),
    ],
)
def test_a_classifier_and_its_designators_are_one_token(words: list[str], merged: list[str]) -> None:
    assert designators.merge(words) == merged


def test_the_designations_an_abstract_names() -> None:
    assert designators.in_text("Stage IIIB NSCLC") == {("stage", "3b"), ("stage", "3")}  # and its stage
    assert designators.in_text("stages I-III") == {("stage", "1"), ("stage", "2"), ("stage", "3")}  # a range
    assert designators.in_text("grade 3/4 toxicity") == {("grade", "3"), ("grade", "4")}  # a list
    assert designators.in_text("patients with T2DM") == {("type", "2")}
    assert designators.in_text("Group A streptococcal pharyngitis") == {("group", "a")}
    assert designators.in_text("Diabetes Mellitus, Type 1;") == {("type", "1")}  # a MeSH heading
    assert designators.in_text("a type of drug, phase Ib") == {("phase", "1b"), ("phase", "1")}


def test_type_1_diabetes_is_not_covered_by_type_2_trials() -> None:
    df = _df("metformin type 2 diabetes", "insulin type 1 diabetes", n_other=20)
    concepts = key_concepts("Does metformin reduce mortality in type 1 diabetes?", df, 0.03, 0.5, 0.5, 0.5)
    t1d = next(c for c in concepts if "diabetes" in c.text)
    assert (t1d.text, t1d.role) == ("type 1 diabetes", "setting")
    assert not covers(t1d, _doc("Metformin reduced mortality in type 2 diabetes."))
    assert not covers(t1d, _doc("Metformin in NIDDM.", ("Diabetes Mellitus, Type 2",)))
    assert covers(t1d, _doc("Metformin added to insulin in type I diabetes."))  # roman numerals
    assert covers(t1d, _doc("Adults with T1DM and diabetes of long standing."))
    # the designator says which diabetes; the disease is still asked ("type 1 collagen" is no diabetes)
    assert not covers(t1d, _doc("Type 1 collagen was measured."))


def test_stage_iii_is_covered_by_its_sub_stages_and_ranges_only() -> None:
    df = _df("stage III colon cancer chemotherapy", n_other=20)
    (stage,) = [c for c in key_concepts("Is chemotherapy useful in stage III colon cancer?", df, 0.03, 0.5, 0.5)
                if "stage" in c.text]  # fmt: skip
    assert not covers(stage, _doc("Adjuvant chemotherapy in stage II colon cancer."))
    assert covers(stage, _doc("Adjuvant chemotherapy in stage IIIB colon cancer."))
    assert covers(stage, _doc("Patients with stage I-III colon cancer were randomised."))
    assert covers(stage, _doc("Stages II and III colon cancer."))


def test_a_designator_after_its_noun_still_asks_for_the_noun() -> None:
    """ "Atelosteogenesis type I" was covered by an abstract on achondrogenesis type IB (a type I)."""
    df = _df("atelosteogenesis", "achondrogenesis type IB", n_other=20)
    (concept,) = key_concepts("Is atelosteogenesis type I caused by DTDST?", df, 0.03)[:1]
    assert concept.text == "atelosteogenesis type I"
    assert not covers(concept, _doc("Achondrogenesis type IB is caused by DTDST mutations."))
    assert covers(concept, _doc("Atelosteogenesis type I is caused by DTDST mutations."))
    assert not covers(concept, _doc("Atelosteogenesis type II is caused by DTDST mutations."))


def test_the_agent_says_type_1_diabetes_is_not_covered_by_type_2_trials() -> None:
    """The answer cites the metformin trials, says type 1 diabetes is not covered, and gives no bottom line."""
    abstracts = {
        "801": ("Metformin in type 2 diabetes", "Metformin reduced all-cause mortality in 800 adults with type 2 "
                "diabetes."),
        "802": ("Metformin and mortality", "In type 2 diabetes, metformin lowered mortality by 20 percent."),
        **{str(900 + i): (f"Filler {i}", f"Unrelated filler abstract number {i} on asthma.") for i in range(8)},
    }  # fmt: skip
    bars = ("agent.min_evidence=1", "agent.min_top_relevance=0.1", "agent.min_relevance=0.05")
    agent = Agent(agent_settings(*bars, "agent.max_setting_df=0.3"), retriever=TokenDocsRetriever(abstracts))
    answer = agent.ask("Does metformin reduce mortality in type 1 diabetes?", mode="extractive")
    assert not answer.abstained and answer.not_covered == ["type 1 diabetes"]
    assert answer.verdict == "insufficient"
    type_2 = agent.ask("Does metformin reduce mortality in type 2 diabetes?", mode="extractive")
    assert not type_2.abstained and not type_2.not_covered


# --- opposite qualifiers (agent/opposites.py) ---------------------------------------------------------------


def test_acute_kidney_injury_is_not_covered_by_an_abstract_on_chronic_kidney_disease() -> None:
    df = _df("acute kidney injury", "chronic kidney disease", "acute pancreatitis", "chronic pancreatitis")
    aki = next(
        c
        for c in key_concepts("Is NIV useful in acute kidney injury?", df, 0.03, 0.5, 0.5)
        if "acute" in c.text
    )
    assert not covers(aki, _doc("Chronic kidney disease progressed in 300 patients."))
    assert covers(
        aki, _doc("Acute kidney injury occurred in 30 of 300 patients with chronic kidney disease.")
    )
    assert covers(aki, _doc("Acute renal failure occurred in 30 patients."))  # its other name
    pancreatitis = key_concepts("Does octreotide help in acute pancreatitis?", df, 0.03, 0.5, 0.5)[-1]
    assert not covers(pancreatitis, _doc("Octreotide relieved pain in chronic pancreatitis."))
    assert covers(pancreatitis, _doc("Octreotide in acute and chronic pancreatitis."))  # both named


def test_a_qualified_chunk_is_a_concept_although_no_term_is_rare() -> None:
    """ "Chronic renal failure during desferrioxamine" had no concept for "chronic renal failure" (no rare
    term, no role), so an abstract on acute renal failure answered it."""
    df = _df(*["renal failure acute chronic"] * 30, "desferrioxamine", n_other=20)
    concepts = key_concepts("Does desferrioxamine cause chronic renal failure?", df, 0.03)
    (renal,) = [c for c in concepts if "renal" in c.text]
    assert not covers(renal, _doc("Desferrioxamine caused acute renal failure in 3 patients."))
    assert covers(renal, _doc("Desferrioxamine and chronic renal failure."))
    assert covers(renal, _doc("Renal failure after desferrioxamine."))  # the qualifier is not asked for


def test_a_qualifier_after_its_word_is_not_covered_by_the_opposite_only() -> None:
    common = ["susceptible sensitive resistant positive negative breast cancer"] * 40  # no rare qualifier
    df = _df("trastuzumab her2 positive", "methicillin resistant staphylococcus", *common)
    concepts = key_concepts(
        "Does trastuzumab prolong survival in HER2-negative breast cancer?", df, 0.03, 0.5, 0.5
    )
    her2 = next(c for c in concepts if "HER2" in c.text)
    assert not covers(her2, _doc("Trastuzumab prolonged survival in HER2-positive breast cancer."))
    assert covers(her2, _doc("HER2-negative and HER2-positive breast cancer were both studied."))
    mssa = next(
        c
        for c in key_concepts(
            "Is cefazolin effective for methicillin-susceptible Staphylococcus?", df, 0.03, 0.5, 0.5
        )
        if "methicillin" in c.text
    )
    assert not covers(mssa, _doc("Vancomycin for methicillin-resistant Staphylococcus aureus bacteraemia."))
    assert covers(mssa, _doc("Cefazolin for methicillin-susceptible Staphylococcus aureus."))


def test_the_organ_of_a_condition_must_be_named_too() -> None:
    """ "Do nasal polyps run in families?" quoted "... monitored for the later appearance of colonic polyps": only the
    rarest term of a concept was required, and "polyps" is rarer than "nasal"."""
    df = _df("polyps", "nasal septum", "nasal spray", "nasal packing", n_other=100)
    (polyps, *_) = key_concepts("Do nasal polyps run in families?", df, 0.03, 0.5, 0.5)
    assert polyps.text == "nasal polyps" and polyps.terms[0] == "polyp"
    assert not covers(polyps, _doc("Children were monitored for the later appearance of colonic polyps."))
    assert covers(polyps, _doc("Nasal polyps recurred in 12 patients."))
    assert covers(polyps, _doc("Polyps of the nose recurred in 12 patients."))  # the organ's noun
