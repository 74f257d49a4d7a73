"""Claims that reverse their evidence (biocite.reversals): what is caught, and what is left to the model."""

from __future__ import annotations

import pytest

from biocite.reversals import denial, reversal

WARFARIN = (
    "Overall, in high-risk patients, warfarin is superior to aspirin in preventing strokes, with a relative "
    "risk reduction of 36%."
)
HBA1C = "Metformin reduced HbA1c levels in patients with type 2 diabetes by 1.2% at 24 weeks."
BUDESONIDE_CONCLUSION = (
    "In patients with mild asthma, as-needed budesonide-formoterol provided superior asthma-symptom control to "
    "as-needed terbutaline, assessed according to electronically recorded weeks with well-controlled asthma, but "
    "was inferior to budesonide maintenance therapy."
)
BUDESONIDE_RESULT = (
    "With respect to the mean percentage of weeks with well-controlled asthma per patient, budesonide-formoterol "
    "was superior to terbutaline (34.4% vs. 31.1% of weeks; P=0.046) but inferior to budesonide maintenance "
    "therapy (34.4% and 44.4%, respectively)."
)


@pytest.mark.parametrize(
    ("claim", "sentence", "kind"),
    [
        ("Aspirin is superior to warfarin for stroke prevention.", WARFARIN, "swapped comparison"),
        ("Warfarin is inferior to aspirin in preventing strokes.", WARFARIN, "swapped comparison"),
        (
            "Surgery was less effective than radiotherapy for local control.",
            "Surgery was more effective than radiotherapy for local control of the tumour.",
            "swapped comparison",
        ),
        ("Metformin increased HbA1c levels in type 2 diabetes.", HBA1C, "opposite direction"),
        (
            "Serum ferritin levels were lower after the infusion.",
            "Serum ferritin levels were higher after the infusion in all 40 patients.",
            "opposite direction",
        ),
        (
            "Exercise worsened quality of life scores in heart failure.",
            "Exercise training improved quality of life scores in heart failure patients.",
            "opposite direction",
        ),
        (  # "exacerbations" is the outcome, not a direction word
            "As-needed budesonide-formoterol increased severe exacerbations compared with terbutaline.",
            "As-needed budesonide-formoterol reduced the rate of severe exacerbations by 64% compared with "
            "as-needed terbutaline.",
            "opposite direction",
        ),
        (  # a negation that governs the direction word
            "As-needed budesonide-formoterol did not reduce severe exacerbations.",
            "As-needed budesonide-formoterol reduced the rate of severe exacerbations by 64%.",
            "opposite direction",
        ),
        (
            "Vitamin D reduced the risk of hip fracture in older women.",
            "Vitamin D supplementation did not reduce the risk of hip fracture in older women.",
            "opposite direction",
        ),
        (  # one direction word of two reversed: each is read with what it says moved
            "A lower PV in PMR increases the risk of prolonged steroid therapy.",
            "A lower PV in PMR decreases the risk of prolonged steroid therapy and late GCA.",
            "opposite direction",
        ),
        (  # what stands in parentheses is not what moved
            "These changes came with an increase (3.3 times) in the HIF-1alpha content of the tumours.",
            "These changes were associated with a decrease (3.3 times) in the HIF-1alpha content of the tumours.",
            "opposite direction",
        ),
        (  # an effect claimed where the study found none
            "Hydrocortisone reduced 90-day mortality in septic shock.",
            "Mortality at 90 days did not differ significantly between groups (27.9% vs 28.8%).",
            "opposite direction",
        ),
        (
            "Budesonide-formoterol increased adverse events compared with terbutaline.",
            "In 1,200 adults with mild asthma, adverse events were similar with budesonide-formoterol and "
            "terbutaline.",
            "opposite direction",
        ),
        (  # a move compared with something, reversed by a "than" comparison (the README demo's abstract)
            "As-needed budesonide-formoterol increased severe exacerbations compared with terbutaline.",
            "Exacerbation rates with the two budesonide-containing regimens were similar and were lower than the "
            "rate with terbutaline.",
            "swapped comparison",
        ),
        (
            "Budesonide-formoterol reduced exacerbations versus budesonide maintenance.",
            "The rate of exacerbations was higher with budesonide-formoterol than with budesonide maintenance.",
            "swapped comparison",
        ),
        (  # the subject written once, before "but" (the README demo's abstract)
            "As-needed budesonide-formoterol was superior to budesonide maintenance for symptom control.",
            BUDESONIDE_CONCLUSION,
            "swapped comparison",
        ),
        (
            "Budesonide-formoterol was superior to budesonide maintenance therapy.",
            BUDESONIDE_RESULT,
            "swapped comparison",
        ),
        (  # what moved comes before an intransitive verb
            "Serum ferritin decreased in the treated group.",
            "Serum ferritin increased in the treated group over 12 weeks.",
            "opposite direction",
        ),
    ],
)
def test_a_reversed_claim_is_caught(claim: str, sentence: str, kind: str) -> None:
    found = reversal(claim, ["The trial enrolled 400 patients.", sentence])
    assert found is not None and found.index == 1 and found.kind == kind


@pytest.mark.parametrize(
    ("claim", "sentences"),
    [
        # the same finding, said either way round
        ("Warfarin is superior to aspirin in preventing strokes.", [WARFARIN]),
        ("Aspirin is inferior to warfarin in preventing strokes.", [WARFARIN]),
        ("Metformin lowered HbA1c levels in type 2 diabetes.", [HBA1C]),
        # a negation on either side is the model's to read
        ("Metformin did not increase HbA1c levels.", [HBA1C]),
        ("Metformin increased HbA1c levels.", ["Metformin did not reduce HbA1c levels in these patients."]),
        # not reducing is not increasing
        ("Metformin did not reduce HbA1c levels.", ["Metformin increased HbA1c levels slightly."]),
        # a negation that governs no direction word: the sentence is not read
        ("Metformin increased HbA1c levels.", ["It is not true that metformin reduced HbA1c levels."]),
        # the opposite direction about something else
        ("Metformin increased lactate levels.", [HBA1C]),
        # another comparison ("higher costs" is not "higher mortality")
        (
            "Drug A had higher mortality than drug B.",
            ["Drug B had higher costs than drug A in the first year."],
        ),
        # one sentence reverses the claim, another restates it: not a reversal of the passage
        (
            "Metformin increased HbA1c levels in type 2 diabetes.",
            [HBA1C, "At 52 weeks metformin increased HbA1c levels in type 2 diabetes again."],
        ),
        # a claim that says both of the same thing is not read ("up- and down-regulated genes")
        ("We defined up- and down-regulated genes after infection.", ["Upregulated genes after infection."]),
        # no change said of a relation across groups, or "similar" as "alike", is not a null finding
        (
            "Job strain increased the risk of incident coronary heart disease.",
            [
                "The association between job strain and incident coronary heart disease was similar in men and women."
            ],
        ),
        (
            "Obese individuals show attenuated reward responses.",
            ["Obesity and addiction may arise from similar reward responses in the brain."],
        ),
        # "did not reduce" and "similar" agree
        (
            "Hydrocortisone did not reduce mortality at 90 days.",
            ["Mortality at 90 days was similar in both arms."],
        ),
        # a move compared with something, said as a "than" comparison the same way round, or of something else
        (
            "As-needed budesonide-formoterol reduced severe exacerbations compared with terbutaline.",
            ["Exacerbation rates with budesonide-formoterol were lower than the rate with terbutaline."],
        ),
        (
            "As-needed budesonide-formoterol reduced severe exacerbations compared with terbutaline.",
            ["Costs with budesonide-formoterol were higher than the costs with terbutaline."],
        ),
        # the elided subject's comparison said the same way round, and what the sentence compared with first
        ("Budesonide-formoterol was inferior to budesonide maintenance therapy.", [BUDESONIDE_CONCLUSION]),
        ("Budesonide maintenance therapy was superior to budesonide-formoterol.", [BUDESONIDE_RESULT]),
        ("Terbutaline was superior to budesonide maintenance therapy.", [BUDESONIDE_RESULT]),
        ("Budesonide maintenance was superior to as-needed terbutaline.", [BUDESONIDE_CONCLUSION]),
        # "lower limb" is a place
        ("Higher limb pain was reported.", ["Lower limb pain was reported by 12 patients."]),
    ],
)
def test_agreement_negation_and_other_topics_are_left_to_the_model(claim: str, sentences: list[str]) -> None:
    assert reversal(claim, sentences) is None


TRAUMA = (
    "Trauma patients have a significant complication rate related to anticoagulation therapy, and predicting "
    "which patients will develop a complication remains unclear."
)


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        # a generated sentence the verifier kept (support model: supports 0.90)
        (
            "Therapeutic anticoagulation in the trauma patient is safe, with no significant complications "
            "related to anticoagulation therapy.",
            TRAUMA,
        ),
        # "not" put after the auxiliary of what the sentence states
        (
            "Metformin was not associated with lactic acidosis in older adults.",
            "Metformin was associated with lactic acidosis in older adults (OR 2.1).",
        ),
    ],
)
def test_a_claim_denying_what_a_sentence_states_is_caught(claim: str, sentence: str) -> None:
    assert denial(claim, ["The trial enrolled 400 patients.", sentence]) == 1


@pytest.mark.parametrize(
    ("claim", "sentences"),
    [
        # the sentence denies it too
        (
            "Metformin was not associated with lactic acidosis in older adults.",
            ["Metformin was not associated with lactic acidosis in older adults (OR 1.1)."],
        ),
        # one sentence states it, another denies it as the claim does
        (
            "There were no significant complications related to anticoagulation therapy.",
            [
                TRAUMA,
                "After the change of protocol there were no significant complications related to anticoagulation therapy.",
            ],
        ),
        # sentences that ask, set out to learn or suppose state nothing
        (
            "Skewed X-inactivation is not associated with recurrent spontaneous abortion.",
            ["We studied whether skewed X-inactivation is associated with recurrent spontaneous abortion."],
        ),
        (
            "Recorded lectures do not reduce attendance of live lectures.",
            ["There is concern that recorded lectures may reduce student attendance of live lectures."],
        ),
        # the sentence names the same things without stating what was denied (its head, "associated")
        (
            "Skewed X-inactivation is not associated with recurrent spontaneous abortion.",
            ["The rate of extreme skewing in the recurrent spontaneous abortion population was 8.6%."],
        ),
        # a methods line names what a finding denies without stating it; a non-significant result denies it too
        (
            "The study found that BD was not a predictor of mortality in patients with severe TBI.",
            [
                "Data was analyzed using SPSS and ROC was generated for BD as a predictor of mortality.",
                "Area under ROC for BD as a predictor of mortality statistically non-significant.",
            ],
        ),
        # a qualifier, a contrast, and a negated direction (the direction rule's) are no denials
        ("Patients without diabetes had fewer infections.", ["Patients with diabetes had more infections."]),
        (
            "Ketoprofen but not acetaminophen impaired platelet function.",
            ["Acetaminophen impaired platelet function."],
        ),
        ("Metformin did not reduce HbA1c levels.", [HBA1C]),
    ],
)
def test_agreement_and_mere_mentions_are_no_denial(claim: str, sentences: list[str]) -> None:
    assert denial(claim, sentences) is None
