"""Issue 12: question types, key-concept coverage, synthesis checks, the findings and verdict models' shape,
and the agent's bottom line / abstention on an uncovered concept (fake index, no model downloads)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from biocite.agent.aspects import labelled_phrases, training_questions
from biocite.agent.coverage import (
    DocumentFrequencies,
    DocumentTerms,
    asked_outcome,
    asked_setting,
    asked_subject,
    carried_concepts,
    covers,
    derivational_core,
    disease_replaces_outcome,
    evidence_caveats,
    in_place_of,
    key_concepts,
    never_indexed,
    off_topic,
    prefix_base,
    read_as,
    respelling_notes,
    specificity,
    time_horizon,
    uncited_concepts,
)
from biocite.agent.evidence import (
    ANSWER_BEARING,
    ScoredSentence,
    content_terms,
    covering_picks,
    lexical_overlap,
)
from biocite.agent.findings import ARTIFACT_VERSION as FINDINGS_VERSION
from biocite.agent.findings import (
    QUANTITY_ANSWER,
    FindingsModel,
    cue_features,
    findings_or_all,
    overlaps_long_answer,
    with_asked_quantity,
)
from biocite.agent.graph import Agent, bottom_line_sentence, enforce_guarantees
from biocite.agent.synthesis import (
    acceptable_query,
    copied_from,
    distinct_parts,
    drops_hedge,
    is_fragment,
    new_terms,
    numbers_in,
    polish,
    question_as_finding,
)
from biocite.agent.verdict import (
    HARMS,
    LABELS,
    VerdictModel,
    asks_about_safety,
    asks_of_harms,
    evidence_features,
    fit_verdict,
    llm_features,
    on_harms,
    question_type,
    reading_order,
    speaks_of_harm,
)
from biocite.errors import ModelError
from biocite.heads import LinearModel
from biocite.other_names import asked_names, other_names, search_names, with_other_names
from biocite.pubmedqa import load_questions, split_questions
from biocite.records import Answer, AnswerSentence, Citation, Document, Evidence, Sentence, Span
from biocite.tokenize import american_spelling, tokenize
from tests.conftest import DATA
from tests.unit.agent_fakes import (
    ABSTRACTS,
    FakeDocs,
    FakeRetriever,
    agent_settings,
    fake_model,
    overlap_judge,
)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Does metformin reduce weight in type 2 diabetes?", "yes/no"),
        ("Chronic functional somatic symptoms: a single syndrome?", "yes/no"),
        ("Young-Burgess classification of pelvic ring fractures: does it predict mortality?", "yes/no"),
        ("Which drugs prevent motion sickness?", "list"),
        ("What is the median survival after diagnosis of CJD?", "factoid"),
        ("How does aspirin prevent stroke", "open"),
        # patients' questions: fillers, a context sentence first, requests, "whats"
        ("Also what is the oral option to get rid of scabies?", "factoid"),
        ("I am flying to Brazil next month. What vaccination should I take?", "factoid"),
        ("Ok I will do the blood pressure checks, how often?", "factoid"),
        ("Can you suggest something natural that could help with anxiety?", "open"),
        ("Any thoughts on a mild muscle relaxant?", "open"),
        ("Whats a cluster headache?", "factoid"),
        ("For how long after cataract surgery do I keep using eye drops?", "factoid"),
        ("Can you be diagnosed with shingles more than once?", "yes/no"),
        ("In any case, is abreva still good to use for cold sore treatment?", "yes/no"),
        # a question that starts mid-sentence; an auxiliary alone does not start one
        ("migraines what medication have the least side affects?", "factoid"),
        ("If I took trazodone when would be the best time to take it?", "factoid"),
        ("Alright so I dont know much about Lexapro would you tell me more about it?", "open"),
        ("Back pain could be because Im starting my cycle in 2 days but I dont know?", "yes/no"),
        # how often something happens is a frequency, not yes or no; a comparison or an attribute stays yes/no
        ("Is depression common after delivery?", "factoid"),
        ("Is it common to have an abscess with no pain?", "factoid"),
        ("Is lithium toxicity very rare?", "factoid"),
        ("Are seizures more common in children with fever?", "yes/no"),
        ("Are rare variants associated with autism?", "yes/no"),
        # which of two is a choice ("Bottom line: yes" answered "warfarin or aspirin?"); "A or B" alone is not
        ("Is warfarin or aspirin better for stroke prevention in atrial fibrillation?", "factoid"),
        ("Should I take ibuprofen or acetaminophen for my headache?", "factoid"),
        ("Is it better to take statins in the morning or at night?", "factoid"),
        ("Does surgery or radiation therapy impact survival in small cell cancers?", "yes/no"),
        ("Is aneurysm repair justified for the patients aged 80 or older?", "yes/no"),
        ("Are they the same or different?", "yes/no"),
    ],
)
def test_question_type(question: str, kind: str) -> None:
    assert question_type(question) == kind


def _df(*texts: str, n_other: int = 100) -> DocumentFrequencies:
    lists = [tokenize(t, stem=True) for t in texts] + [["filler"]] * n_other
    return DocumentFrequencies.from_token_lists(lists)


def _doc(title: str, abstract: str) -> DocumentTerms:
    return DocumentTerms.of(Document(pmid="1", title=title, abstract=abstract))


def test_vitamin_d_is_not_covered_by_vitamin_k_evidence() -> None:
    df = _df("vitamin K and fractures", "vitamin D and falls")
    concepts = key_concepts("Does vitamin D reduce fractures in older adults?", df, 0.03)
    assert [c.text for c in concepts] == ["vitamin D", "fractures", "older"]  # "adults" is generic
    assert concepts[-1].label == "older adults"  # ... but shown: "not covered: older" said less
    vitamin_d = concepts[0]
    assert not covers(vitamin_d, _doc("Vitamin K2 and bone", "Vitamin K reduced fractures."))
    assert covers(vitamin_d, _doc("", "Daily vitamin D did not reduce hip fractures."))
    # its hydroxylated forms name it (a cataract study of serum 25-hydroxyvitamin D was read as off vitamin D)
    assert covers(vitamin_d, _doc("", "Serum 25-hydroxyvitamin D and 1,25-dihydroxyvitamin D were measured."))
    assert not covers(vitamin_d, _doc("", "Serum 25-hydroxyvitamin E was measured."))


def test_gestational_diabetes_is_not_covered_by_type_2_diabetes_trials() -> None:
    df = _df("gestational diabetes insulin", "type 2 diabetes metformin")
    concepts = key_concepts("Is metformin safe in gestational diabetes?", df, 0.03)
    assert [c.text for c in concepts] == ["metformin", "gestational diabetes"]
    t2d = _doc("Metformin in type 2 diabetes", "Metformin lowered HbA1c in type 2 diabetes.")
    assert covers(concepts[0], t2d) and not covers(concepts[1], t2d)


@pytest.mark.parametrize(
    ("follow_up", "asks_again", "asked"),
    [
        # the population replaced; the drug and the outcome still asked
        ("And in children?", True, ["children", "budesonide-formoterol", "severe exacerbations"]),
        # "pregnant women" follows "What about" (a subject by position) but names people: the population
        (
            "What about pregnant women?",
            True,
            ["pregnant women", "budesonide-formoterol", "severe exacerbations"],
        ),
        # so does a maternal state ("What about breastfeeding?" had replaced the drug)
        (
            "What about breastfeeding?",
            True,
            ["breastfeeding", "budesonide-formoterol", "severe exacerbations"],
        ),
        ("What about montelukast?", True, ["montelukast", "severe exacerbations", "mild asthma"]),
        # another outcome is asked: the drug and the population stay
        # ... and "it" is the drug, whatever else the follow-up names
        ("Was it well tolerated?", False, ["tolerated", "budesonide-formoterol", "mild asthma"]),
        (
            "Does it reduce hospitalisation?",
            False,
            ["hospitalisation", "budesonide-formoterol", "mild asthma"],
        ),
        # a follow-up that names no entity or outcome asks the outcome before again (it had been dropped)
        ("Does it work in children?", False, ["children", "budesonide-formoterol", "severe exacerbations"]),
        (
            "How often does that happen?",
            False,
            ["budesonide-formoterol", "severe exacerbations", "mild asthma"],
        ),
        (
            "And in bronchiectasis?",
            True,
            ["bronchiectasis", "budesonide-formoterol", "severe exacerbations"],
        ),
    ],
)
def test_a_follow_up_asks_what_it_does_not_replace_of_its_context(
    follow_up: str, asks_again: bool, asked: list[str]
) -> None:
    df = _df("budesonide formoterol severe exacerbations mild asthma children pregnant women breastfeeding")
    bars = (0.03, 0.5, 0.5, 0.5)
    context = key_concepts(
        "Does as-needed budesonide-formoterol reduce severe exacerbations in mild asthma?", df, *bars
    )
    own = key_concepts(follow_up, df, *bars)
    refers_back = "it" in follow_up.split()
    carried = carried_concepts(own, context, asks_again=asks_again, refers_back=refers_back)
    assert [c.label for c in own + carried] == asked
    # what "And for COPD?" replaces is not read when "COPD" is too common to be a concept: nothing is carried
    assert carried_concepts([], context, asks_again=True, refers_back=False) == []
    # "How about the side effects?" names no concept, but asks of harms: another outcome, of the drug and people
    harms = carried_concepts([], context, asks_again=True, refers_back=False, asks_of_harms=True)
    assert [c.label for c in harms] == ["budesonide-formoterol", "mild asthma"]


def test_a_younger_age_after_for_takes_the_place_of_the_elderly() -> None:
    """ "And for younger patients?" after a question in the elderly kept the elderly and dropped the surgery."""
    df = _df("keyhole surgery elderly younger patients")
    bars = (0.03, 0.5, 0.5, 0.5)
    context = key_concepts("Is keyhole surgery safe in the elderly?", df, *bars)
    own = key_concepts("And for younger patients?", df, *bars)
    carried = carried_concepts(own, context, asks_again=True, refers_back=False)
    assert [c.label for c in own + carried] == ["younger patients", "keyhole surgery"]


def test_another_of_a_kind_the_question_before_named_takes_its_place() -> None:
    """ "What about hip replacement?" after a question on bleeding after knee replacement asks of tranexamic acid
    and bleeding after hip replacement: it had been read as another entity, and the knee was kept."""
    df = _df("tranexamic acid bleeding knee replacement hip aspirin ankle wrist fractures")
    bars = (0.03, 0.5, 0.5, 0.5)
    context = key_concepts("Does tranexamic acid reduce bleeding after knee replacement?", df, *bars)
    own = in_place_of(key_concepts("What about hip replacement?", df, *bars), context)
    assert [c.place for c in own] == ["setting"]
    carried = carried_concepts(own, context, asks_again=True, refers_back=False)
    assert [c.label for c in own + carried] == ["hip replacement", "tranexamic acid", "bleeding"]
    aspirin = key_concepts("What about aspirin?", df, *bars)  # no kind asked before: as read
    assert in_place_of(aspirin, context) == aspirin
    hepatitis = key_concepts("Does interferon help in hepatitis B?", df, *bars)
    vitamin = key_concepts("What about vitamin B?", df, *bars)  # a letter says which, not what kind
    assert in_place_of(vitamin, hepatitis) == vitamin
    wrist = key_concepts("Does vitamin C prevent pain after wrist fractures?", df, *bars)
    assert [c.place for c in in_place_of(key_concepts("What about ankle fractures?", df, *bars), wrist)] == [
        "setting"
    ]


def test_what_about_x_read_as_another_outcome_asks_x_at_the_outcome_bar() -> None:
    """ "What about falls?", read by the aspect model as naming an outcome, makes "falls" the asked outcome: its
    place and role, with the outcome's looser document-frequency bar (here "falls" is in 5 % of the abstracts:
    above the subject's bar, within the outcome's), so the context's entity is carried and its outcome is not."""
    df = _df("vitamin supplementation fractures older people", *["falls"] * 5)
    bars = (0.001, 0.1, 0.2, 0.02)
    assert key_concepts("What about falls?", df, *bars) == []  # too common to be the entity asked about
    (falls,) = key_concepts("What about falls?", df, *bars, subject_is_outcome=True)
    assert (falls.text, falls.place, falls.role) == ("falls", "outcome", "outcome")
    context = key_concepts("Does vitamin supplementation prevent fractures in older people?", df, *bars)
    carried = carried_concepts([falls], context, asks_again=True, refers_back=False)
    assert [c.label for c in carried] == ["vitamin supplementation", "older people"]


@pytest.mark.parametrize(
    ("context", "replaces_outcome"),
    [
        # "What about fractures?": the setting names people, no disease
        ("Does vitamin D prevent falls in older people?", True),
        ("Does aspirin prevent myocardial infarction?", True),  # "What about stroke?"
        ("Does obesity increase the risk of breast cancer?", True),  # a disease as the entity is no condition
        ("Does metformin lower HbA1c in type 2 diabetes?", False),  # "What about gestational diabetes?"
        ("Is atropine needed with ketamine sedation?", False),  # no outcome: a condition, added
        ("Does rehabilitation improve exercise capacity in COPD?", False),  # a disease by its abbreviation
        ("Does tranexamic acid reduce mortality in trauma?", False),  # "What about postpartum haemorrhage?"
    ],
)
def test_a_disease_after_what_about_replaces_the_condition_named_before_else_the_outcome(
    context: str, replaces_outcome: bool
) -> None:
    """Before, a disease after "What about" was always the condition: "What about fractures?" after a question on
    vitamin D and falls in older people asked of falls in fractures, and quoted vitamin K and vitamin C trials."""
    words = "vitamin falls older people aspirin myocardial infarction obesity breast cancer metformin hba1c type 2"
    df = _df(
        words + " diabetes atropine ketamine sedation rehabilitation exercise capacity copd tranexamic trauma"
    )
    concepts = key_concepts(context, df, 0.03, 0.5, 0.5, 0.5)
    assert disease_replaces_outcome(concepts) is replaces_outcome


@pytest.mark.parametrize(
    ("follow_up", "horizon", "abstract", "covered"),
    [
        ("What about the long term?", "long term", "Long-term HbA1c fell.", True),
        ("What about the long term?", "long term", "A long trial; short-term HbA1c fell.", False),
        ("And at one year?", "one year", "HbA1c fell in 1-year follow-up.", True),
        ("What about after 5 years?", "5 years", "Five years later HbA1c was lower.", True),
        ("What about at 12 months?", "12 months", "At 12-month follow-up HbA1c was lower.", True),
        ("What about at 12 months?", "12 months", "At 2 months HbA1c was lower.", False),
        ("What about long-term follow-up?", "long term", "Over the long term HbA1c was lower.", True),
    ],
)
def test_a_time_horizon_is_covered_by_its_words_as_one_phrase(
    follow_up: str, horizon: str, abstract: str, covered: bool
) -> None:
    """Not by "long" and "term" anywhere in the abstract; a count as a word or digits, a unit in either number."""
    concept = time_horizon(follow_up)
    assert concept is not None and (concept.text, concept.role) == (horizon, "time")
    assert covers(concept, DocumentTerms(abstract)) is covered


def test_a_disease_asked_in_named_only_in_the_mesh_headings_is_a_caveat() -> None:
    """ "Do statins reduce deaths after a heart attack?" leaned yes from a statins-in-stroke study whose only
    heart attack is the heading "Myocardial Infarction" (a comorbidity)."""
    question = "Do statins reduce deaths after a heart attack?"
    concepts = key_concepts(question, _df("statins deaths heart attack"), 0.03, 0.5, 0.5, 0.5)
    assert [(c.text, c.place) for c in concepts][-1] == ("heart attack", "setting")
    stroke = Document(
        pmid="11340218",
        title="",
        abstract="Stroke patients on statin treatment were compared with referent patients not on statins.",
        mesh=["Myocardial Infarction", "Stroke"],
    )
    assert evidence_caveats(question, [stroke], concepts) == [
        "the cited abstracts name heart attack only in their MeSH headings (PMID 11340218: Myocardial "
        "Infarction), not in their text"
    ]
    # a disease the text names otherwise ("type 2 diabetes") is no such caveat, whatever its headings
    question = "Does gastric bypass work in diabetes mellitus?"
    df = _df("gastric bypass diabetes mellitus", *["diabetes"] * 3)  # "mellitus" its rarest word
    concepts = key_concepts(question, df, 0.03, 0.5, 0.5, 0.5)
    bypass = Document(
        pmid="20011163",
        title="",
        abstract="Gastric bypass is emerging as an option in obese patients with type 2 diabetes.",
        mesh=["Diabetes Mellitus, Type 2", "Gastric Bypass"],
    )
    assert (concepts[-1].text, concepts[-1].place) == ("diabetes mellitus", "setting")
    assert evidence_caveats(question, [bypass], concepts) == []


def test_the_aspect_model_learns_from_each_questions_asked_entity_and_outcome() -> None:
    """Its silver labels: the asked subject (0) unless it names a disease or people, and the asked outcome (1)."""
    rows = labelled_phrases(
        [
            "Does aspirin prevent strokes in older adults?",
            "Is breast cancer associated with obesity?",  # a disease as the subject: no entity's example
            "What is the prognosis?",
        ]
    )
    assert rows == [("aspirin", 0), ("strokes", 1), ("obesity", 1)]
    # the TRAIN part of the PubMedQA split, never a held-out question
    held_out = {q.question for q in split_questions(load_questions())[1]}
    assert len(training_questions()) > 500 and not held_out & set(training_questions())


def test_a_group_of_people_named_only_in_the_mesh_headings_is_a_caveat() -> None:
    """The budesonide-formoterol trial enrolled patients aged 12 and over and is indexed under "Child": it
    covers "children", and the answer says how."""
    df = _df("budesonide formoterol children")
    question = "Does budesonide-formoterol reduce exacerbations in children?"
    concepts = key_concepts(question, df, 0.03, 0.5, 0.5, 0.5)
    trial = Document(
        pmid="29768149",
        title="Inhaled combined budesonide-formoterol as needed in mild asthma",
        abstract="Patients 12 years of age or older with mild asthma were randomised.",
        mesh=["Adolescent", "Adult", "Asthma", "Child"],
    )
    assert evidence_caveats(question, [trial], concepts) == [
        "the cited abstracts name children only in their MeSH headings (PMID 29768149: Child), not in their text"
    ]
    in_text = trial.model_copy(update={"pmid": "2", "abstract": "Children with mild asthma were randomised."})
    assert evidence_caveats(question, [trial, in_text], concepts) == []
    # no group of people asked, none said
    assert evidence_caveats("Does budesonide-formoterol reduce exacerbations?", [trial], concepts[:1]) == []


def test_evidence_all_in_another_group_of_people_is_a_caveat() -> None:
    """ "And in adults?" after a question of ketamine sedation in children was answered from the trial in
    children with nothing said: "adults" is too common to be a key concept."""
    trial = Document(
        pmid="10901305",
        title="Ketamine sedation for the reduction of children's fractures in the emergency department.",
        abstract="Ketamine reliably and safely provided sedation for the reduction of children's fractures.",
    )
    children = "Is ketamine sedation safe for fracture reduction in children?"
    said = ["every cited study is in children: none of them mentions adults"]
    assert evidence_caveats("Is ketamine sedation safe for fracture reduction in adults?", [trial]) == said
    # a chat follow-up is read by its own words first: its completed question names both groups
    standalone = f"And in adults? (context: {children})"
    assert evidence_caveats(standalone, [trial], follow_up="And in adults?") == said
    assert evidence_caveats(standalone, [trial]) == []
    assert evidence_caveats(children, [trial]) == []
    in_adults = trial.model_copy(
        update={"pmid": "2", "title": "", "abstract": "Ketamine sedation in adults."}
    )
    assert evidence_caveats("Is ketamine sedation safe in adults?", [trial, in_adults]) == []
    # an age range is no mention of adults: the atropine trial "in children aged between 1 and 16 years"
    ages = Document(
        pmid="3", title="", abstract="Children aged between 1 and 16 years were randomised to atropine."
    )
    assert evidence_caveats("Is atropine needed with ketamine in adults?", [ages]) == said
    # a range reaching adulthood is a mention of them, in a trial that names children only in its background
    grown = ages.model_copy(
        update={"abstract": "Unlike children, patients aged 18 to 80 years were randomised."}
    )
    assert evidence_caveats("Is atropine needed with ketamine in adults?", [grown]) == []


def test_an_asked_outcome_named_only_in_the_mesh_headings_is_a_caveat() -> None:
    """ "Are statins associated with an increased risk of diabetes?" leaned yes from a statins-in-stroke study
    whose only "diabetes" is its heading "Diabetes Mellitus" (a comorbidity): the answer now says so. The drug
    named only in a heading is no such caveat (the coverage check reads what the abstracts are about)."""
    question = "Are statins associated with an increased risk of diabetes?"
    concepts = key_concepts(question, _df("statins diabetes"), 0.03, 0.5, 0.5, 0.5)
    assert [(c.text, c.place) for c in concepts] == [("statins", "subject"), ("diabetes", "outcome")]
    stroke = Document(
        pmid="11340218",
        title="",
        abstract="Stroke patients on statin treatment were compared with referent patients not on statins.",
        mesh=["Diabetes Mellitus", "Hydroxymethylglutaryl-CoA Reductase Inhibitors", "Stroke"],
    )
    assert evidence_caveats(question, [stroke], concepts) == [
        "the cited abstracts name diabetes only in their MeSH headings (PMID 11340218: Diabetes Mellitus), not in "
        "their text"
    ]
    in_text = stroke.model_copy(update={"abstract": "New-onset diabetes was more frequent on statins."})
    assert evidence_caveats(question, [in_text], concepts) == []


def test_a_drug_is_covered_by_its_other_name() -> None:
    """ "Does ciclosporin cause hypertension?" abstained ("no indexed abstract mentions 'ciclosporin'") over 19
    abstracts on cyclosporine; a British clinician's "lignocaine" is the abstracts' "lidocaine"."""
    df = _df("cyclosporine hypertension", "lidocaine propofol", "bupivacaine")
    ciclosporin = key_concepts("Does ciclosporin cause hypertension?", df, 0.03)[0]
    assert ciclosporin.text == "ciclosporin"
    assert covers(ciclosporin, _doc("", "Cyclosporine raised blood pressure in transplant recipients."))
    assert covers(ciclosporin, _doc("", "Cyclosporin A raised blood pressure."))
    assert not covers(ciclosporin, _doc("", "Tacrolimus raised blood pressure."))
    lignocaine = key_concepts("Does lignocaine reduce propofol injection pain?", df, 0.03)[0]
    assert covers(lignocaine, _doc("", "Lidocaine reduced the pain of propofol injection."))
    assert not covers(lignocaine, _doc("", "Bupivacaine reduced the pain of propofol injection."))
    assert other_names("paracetamol") == ("acetaminophen",) and "paracetamol" in other_names("acetaminophen")
    assert other_names("aspirin") == ("acetylsalicylic",) and other_names("insulin") == ()
    assert other_names("glucophage") == ("metformin",)  # a brand name


def test_a_condition_is_covered_by_its_other_name() -> None:
    """ "Does aspirin prevent heart attacks?" said "not covered: heart attacks" while quoting "Aspirin reduces
    the risk for myocardial infarction": no shipped abstract says "heart attack"."""
    df = _df("myocardial infarction", "heart failure", "acute renal failure", n_other=4)
    attacks = key_concepts("Does aspirin prevent heart attacks?", df, 0.0, 0.5)[-1]
    assert attacks.text == "heart attacks"
    assert covers(attacks, _doc("", "Aspirin reduces the risk for myocardial infarction in men."))
    assert not covers(attacks, _doc("", "Aspirin did not worsen heart failure."))
    aki = key_concepts("Does furosemide prevent acute kidney injury?", df, 0.0, 0.5)[-1]
    assert covers(aki, _doc("", "Acute renal failure followed rifampicin in two patients."))
    # a one-word lay name is the medical word wherever it stands in a concept ("flu vaccination")
    flu = next(
        c for c in key_concepts("Does flu vaccination protect the elderly?", df, 0.03) if "flu" in c.text
    )
    assert covers(flu, _doc("", "Influenza vaccination reduced hospital admissions in the elderly."))
    assert not covers(flu, _doc("", "Pneumococcal vaccination reduced hospital admissions in the elderly."))
    notes = respelling_notes([flu], {0}, [Document(pmid="1", abstract="Influenza vaccination worked.")])
    assert notes == ["read 'flu' as 'influenza', its medical name"]


def test_death_and_a_head_injury_are_covered_by_mortality_and_a_traumatic_brain_injury() -> None:
    """ "Does base deficit predict death after head injury?" abstained, "not covered: death; head injury", over
    the study "Base deficit ... predict mortality in patients with severe traumatic brain injury"."""
    df = _df("base deficit", "mortality", "traumatic brain injury", "death", n_other=20)
    concepts = key_concepts("Does base deficit predict death after head injury?", df, 0.1, 0.2, 0.2)
    title = "Is base deficit a predictor of mortality in patients with severe traumatic brain injury?"
    assert [c.text for c in concepts if covers(c, _doc("", title))] == [
        "base deficit",
        "death",
        "head injury",
    ]
    assert not any(covers(c, _doc("", "Hip fractures in older women.")) for c in concepts)
    assert search_names("Does base deficit predict death after head injury?") == [
        "traumatic brain injury",
        "mortality",
    ]


def test_a_group_of_people_and_an_older_condition_name_are_covered_by_their_other_names() -> None:
    """`biocite ask "Can isoniazid cause seizures in newborns?"` (2026-12-02) said "not covered: newborns" over
    "Neonatal pyridoxine responsive convulsions due to isoniazid therapy", then "not covered: seizures"."""
    df = _df("isoniazid", "neonatal convulsions", "children", *["seizures"] * 3, n_other=20)
    concepts = key_concepts("Can isoniazid cause seizures in newborns?", df, 0.1, 0.2)
    newborns = next(c for c in concepts if c.text == "newborns")
    seizures = next(c for c in concepts if c.text == "seizures")
    title = "Neonatal pyridoxine responsive convulsions due to isoniazid therapy."
    assert covers(newborns, _doc("", title)) and covers(seizures, _doc("", title))
    assert not covers(newborns, _doc("", "Isoniazid caused convulsions in adults."))
    notes = respelling_notes(concepts, set(range(len(concepts))), [Document(pmid="1", abstract=title)])
    assert "read 'newborns' as 'neonatal', another name of the same group of people" in notes
    assert "read 'seizures' as 'convulsions', another name of the same condition" in notes
    assert search_names("Is ibuprofen safe for kids?") == ["children"]  # the lay name adds the written one


def test_search_adds_the_other_names_a_query_names() -> None:
    assert sorted(search_names("Does aspirin prevent heart attacks?")) == [
        "acetylsalicylic",
        "myocardial infarction",
    ]
    assert search_names("Does ciclosporin cause hypertension?") == ["cyclosporine"]  # one term, not two
    assert search_names("hypertension in adults") == []  # a lay name is added for a medical one, not back
    assert search_names("paracetamol or acetaminophen overdose") == []  # names it has are not added again
    # a longer name wins over the names inside it: the stomach flu is gastroenteritis, not influenza
    assert search_names("Is abdominal cramping normal with the stomach flu?") == ["gastroenteritis"]
    assert search_names("How long does flu last?") == ["influenza"]
    assert "colorectal cancer" in search_names("Does aspirin prevent bowel cancer?")  # the UK's lay name
    assert search_names("Can vitamin C stop CRPS after a broken wrist?") == [
        "wrist fracture",
        "distal radius fracture",
    ]
    # abstracts write the bone's adjective: "Is setting a broken nose without surgery good enough?" abstained
    assert search_names("Is setting a broken nose without surgery good enough?") == [
        "nose fracture",
        "nasal fracture",
    ]
    # a flu jab is a vaccine, not the flu; the gullet is written "oesophagus" or "esophageal"
    assert search_names("Does the flu jab cause Guillain-Barre?") == ["influenza vaccination"]  # one stem
    assert "esophagus" in search_names("Is a fragile gullet lining a sign of eosinophilic esophagitis?")
    # the embedding reads a patient's words with the written names, not a drug's other spelling
    assert (
        with_other_names("Can Abilify make people gamble?")
        == "Can Abilify make people gamble? (aripiprazole)"
    )
    assert with_other_names("Does ciclosporin cause hypertension?") == "Does ciclosporin cause hypertension?"
    # a brand name searches its generic name, not back
    assert search_names("Can Abilify make people gamble?") == ["aripiprazole"]
    assert search_names("Does aripiprazole cause gambling?") == []
    assert search_names("Do teenagers who die young smoke?") == ["mortality", "adolescents"]
    # a verb of the phrase stems as its participle: "raise potassium" is "raised potassium" (hyperkalaemia)
    assert "hyperkalaemia" in search_names("Does suxamethonium raise potassium?")
    # a phrasal lay name needs its particle: "first-pass imaging" is no fainting, "tonsils" no tonsillectomy
    assert "syncope" in search_names("Does passing out after a concussion mean worse memory?")
    assert search_names("Does steady-state imaging improve first-pass imaging?") == []
    assert search_names("What are the side effects of having your tonsils out?") == ["tonsillectomy"]
    assert search_names("What are tonsils and adenoids?") == []
    assert search_names("Are knock-out mice safe?") == []  # a compound's "out" is no particle
    assert asked_names("Do kidney stones pass on their own?") == asked_names("Do kidney stones form?")


def test_a_name_inside_a_longer_one_is_not_read_as_its_other_name() -> None:
    """K-QA: "Is it normal to have really bad abdominal cramping with the stomach flu?" (gastroenteritis)."""
    df = _df("influenza vaccination", "gastroenteritis in children", "stomach ulcer", n_other=4)
    concept = next(
        c for c in key_concepts("Is cramping normal with the stomach flu?", df, 0.0, 0.5) if "flu" in c.text
    )
    assert covers(concept, _doc("", "Abdominal cramps were common in viral gastroenteritis."))
    assert not covers(concept, _doc("", "Influenza caused fever and cough in most patients."))
    assert frozenset({"flu"}) not in [
        name for name, _ in asked_names("Is cramping normal with the stomach flu?")
    ]


def test_initials_cover_a_spelt_out_concept() -> None:
    df = _df("chronic obstructive pulmonary disease")
    concept = key_concepts("Does chronic obstructive pulmonary disease shorten survival?", df, 0.03)[0]
    assert concept.text == "chronic obstructive pulmonary disease"
    assert covers(concept, _doc("", "Patients with COPD died earlier."))


def test_the_second_of_an_association_between_two_things_is_the_asked_outcome() -> None:
    """ "Is there an association between sleep duration and obesity in children?" had no concept "obesity" (in 1 %
    of the abstracts, above the key-concept bar), and a study of sex differences in sleep answered it."""
    df, bars = _df("sleep duration obesity children statin cataract", n_other=20), (0.001, 0.2, 0.2, 0.2)
    question = "Is there an association between sleep duration and obesity in children?"
    concepts = key_concepts(question, df, *bars)
    assert [(c.text, c.place) for c in concepts] == [
        ("sleep duration", "subject"),
        ("obesity", "outcome"),
        ("children", "setting"),
    ]
    # the first thing in two chunks ("statin | use")
    statin = key_concepts("Is there an association between statin use and cataract?", df, *bars)
    assert [(c.text, c.place) for c in statin] == [("statin", "subject"), ("cataract", "outcome")]
    # with no association before it, "and" opens no outcome
    plain = key_concepts("Are sleep duration and obesity common in children?", df, *bars)
    assert [c.place for c in plain if c.text == "obesity"] in ([], [""])


def test_a_measurement_is_no_concept() -> None:
    """ "My child has a fever of 39C, should I give ibuprofen or paracetamol?" abstained: "no indexed abstract
    mentions '39C'"."""
    df = _df("ibuprofen paracetamol fever")
    question = "My child has a fever of 39C, should I give ibuprofen or paracetamol?"
    assert [c.text for c in key_concepts(question, df, 0.03)] == [
        "child",
        "fever",
        "ibuprofen",
        "paracetamol",
    ]
    assert [c.text for c in key_concepts("Is 5mg of warfarin safe at 38.5C?", _df("warfarin"), 0.03)] == [
        "warfarin"
    ]


def test_a_statistics_abbreviation_is_no_concepts_initials() -> None:
    """ "Does caffeine intake during pregnancy cause low birth weight?" was answered "yes" from a folate study that
    never mentions caffeine: "caffeine intake" was covered by its "95% CI"."""
    df = _df("caffeine intake pregnancy", "critically ill")
    caffeine = key_concepts("Does caffeine intake during pregnancy cause low birth weight?", df, 0.03)[0]
    assert caffeine.text == "caffeine intake"
    folate = "Low folate intake raised the risk of low birth weight (AOR: 8.3; 95% CI: 1.8, 38.6)."
    assert not covers(caffeine, _doc("", folate))
    ill = key_concepts("Is meropenem dosing different in critically ill patients?", df, 0.03)[-1]
    assert ill.text == "critically ill"
    assert not covers(ill, _doc("", "Mortality was lower (OR 0.8, 95% CI 0.6-1.0)."))


def test_an_abbreviation_is_covered_by_its_spelt_out_form() -> None:
    concept = key_concepts("Can interventions increase mammography use among HMO women?", _df("x"), 0.03)[-1]
    assert concept.text == "HMO women"
    assert covers(concept, _doc("", "Women in a health maintenance organization were randomised."))
    assert not covers(concept, _doc("", "Women in a hospital were randomised."))
    # initials across a stop word are chance: "positive effects the" is no PET
    pet = key_concepts("Is PET useful in lymphoma?", _df("x"), 0.03)[0]
    assert pet.text == "PET" and not covers(pet, _doc("", "Rituximab had positive effects the first year."))


def test_an_abbreviated_outcome_needs_its_other_terms_too() -> None:
    """ "NIH" is in the abstract, "facial" is not: the abbreviation covers its own term, not the outcome."""
    df = _df("NIH funding success", "facial funding", "facial", "facial", n_other=4)
    outcome = key_concepts("Is the h-index predictive of facial NIH funding success?", df, 0.0, 0.5)[-1]
    assert outcome.outcome and outcome.terms[0] == "nih" and "facial" in outcome.terms
    assert not covers(outcome, _doc("", "The h-index predicted NIH funding success of radiologists."))
    assert covers(outcome, _doc("", "The h-index predicted NIH funding success of facial surgeons."))


@pytest.mark.parametrize(
    ("question", "concepts"),
    [
        ("is it okay to take imodium long term?", ["imodium long term"]),
        ("Is Valtrex the same thing as valacyclovir?", ["Valtrex", "valacyclovir"]),
        ("Is there anything youd recommend for the throat pain", ["throat pain"]),
        ("how does someone with familial hypercholesterolemia differ?", ["familial hypercholesterolemia"]),
        ("So ringworm doesnt itch?", ["ringworm", "itch"]),
        # how a patient says a drug is stopped (BioGen 2024 topics)
        ("What are side effects for suddenly stopping metoprolol?", ["metoprolol"]),
        ("What happens when abruptly discontinuing the medication?", ["discontinuing", "medication"]),
    ],
)
def test_words_of_conversation_are_never_key_concepts(question: str, concepts: list[str]) -> None:
    """Patients write as they speak; "okay", "thing", "anything", "someone", "doesnt" are rare in abstracts
    (here every word is in none) but name nothing the evidence must cover."""
    assert [c.text for c in key_concepts(question, _df("x"), 0.03)] == concepts


def test_absent_entity_is_always_a_key_concept() -> None:
    concepts = key_concepts(
        "Does tirzepatide reduce asthma exacerbations?", _df("asthma exacerbations"), 0.03
    )
    assert concepts[0].text == "tirzepatide"


def test_the_asked_outcome_is_a_concept_below_the_key_concept_bar() -> None:
    """'fractures' (in 2 of 4 documents) is too common for a key concept but is what was asked."""
    df = _df("vitamin D and fractures", "hip fractures", "vitamin K", "liver fibrosis", n_other=0)
    question = "Does vitamin D supplementation prevent fractures in older adults?"
    assert [c.text for c in key_concepts(question, df, 0.3)] == ["vitamin D supplementation", "older"]
    concepts = key_concepts(question, df, 0.3, 0.5)
    assert [(c.text, c.outcome) for c in concepts] == [
        ("vitamin D supplementation", False), ("fractures", True), ("older", False)
    ]  # fmt: skip
    falls = key_concepts("Does vitamin D reduce the risk of fractures?", df, 0.3, 0.5)[-1]
    assert falls.text == "fractures" and falls.outcome  # across "the risk of"
    assert asked_outcome("Can vitamin C prevent complex regional pain syndrome in wrist fractures?") == (
        "complex regional pain syndrome"
    )
    assert asked_outcome("Is metformin safe in gestational diabetes?") is None
    assert asked_outcome("What will mutation in runx2 affect in the future?") is None  # a time


def test_an_association_names_the_asked_outcome() -> None:
    """`biocite ask "Is metformin associated with lactic acidosis?"` (2026-12-01) answered "leaning yes" from
    metformin abstracts on hepatotoxicity and nephrotoxicity: "lactic acidosis", too common for a key concept,
    was checked by no bar. The object of "associated with", "linked to", "related to", "correlate with" and "a
    risk factor for" is the asked outcome; a hyphened "-related" with no link word names none."""
    assert asked_outcome("Is metformin associated with lactic acidosis?") == "lactic acidosis"
    assert asked_outcome("Is hormone therapy linked to breast cancer?") == "breast cancer"
    assert asked_outcome("Are statins related to diabetes?") == "diabetes"
    assert asked_outcome("Does the leukocyte count correlate with the severity of injury?") == "severity"
    assert asked_outcome("Is smoking a risk factor for bladder cancer?") == "bladder cancer"
    assert asked_outcome("Is HIV-related salivary gland disease common?") is None
    df = _df("metformin hepatotoxicity", "lactic acidosis", "lactic acid", "acidosis", n_other=2)
    concepts = key_concepts("Is metformin associated with lactic acidosis?", df, 0.2, 0.5, 0.0, 0.5)
    assert [(c.text, c.outcome) for c in concepts] == [("metformin", False), ("lactic acidosis", True)]
    hepatotoxicity = _doc("Metformin and the liver", "Metformin-associated hepatotoxicity is rare.")
    assert not covers(concepts[1], hepatotoxicity)


def test_a_verb_of_effect_ends_the_subject_and_names_the_outcome() -> None:
    """`biocite ask "Does acupuncture relieve chronic low back pain?"` (2026-12-01) said "yes" (0.76) from a study
    of acupuncture for vocal fold lesions: the question was one chunk, the subject "acupuncture relieve chronic
    low back pain", covered by its rarest term. "relieve", "alleviate", "inhibit", "treat" ... end the subject
    and name the outcome, as written: "accelerated partial breast radiation" is no outcome."""
    assert asked_outcome("Does acupuncture relieve chronic low back pain?") == "chronic low back pain"
    assert asked_outcome("Does caffeine alleviate headache?") == "headache"
    assert asked_outcome("Does aspirin inhibit platelet aggregation?") == "platelet aggregation"
    assert asked_outcome("Does metformin treat polycystic ovary syndrome?") == "polycystic ovary syndrome"
    assert asked_outcome("Is surgery a contraindication for accelerated partial breast radiation?") is None
    assert asked_subject("Does acupuncture relieve chronic low back pain?") == "acupuncture"
    # `biocite ask "Can lipid emulsion reverse bupivacaine cardiotoxicity?"` had one subject of five words
    reversal = "Can lipid emulsion reverse bupivacaine cardiotoxicity?"
    assert asked_outcome(reversal) == "bupivacaine cardiotoxicity"
    assert asked_outcome("Does caffeine provoke panic attacks?") == "panic attacks"
    # a phrasal verb of effect: "Can stress bring on a heart attack?" named no concept at all
    assert asked_outcome("Can stress bring on a heart attack?") == "heart attack"
    assert asked_subject("Can stress bring on a heart attack?") == "stress"


def test_a_risk_of_heal_and_have_more_name_the_outcome() -> None:
    """`Are newborns at risk of seizures from isoniazid?` (2026-12-07) had the concept "newborns" alone and was
    answered from a study of lithium in pregnancy; "Does H. pylori treatment heal stomach ulcers?" had no
    concept "stomach ulcers". "heal" without its object names nothing."""
    assert asked_outcome("Are newborns at risk of seizures from isoniazid?") == "seizures"
    assert asked_outcome("Is the risk of bleeding higher with warfarin?") == "bleeding"
    # it had been the subject, opened by "What is"
    assert asked_outcome("What is the risk of agranulocytosis with clozapine?") == "agranulocytosis"
    assert asked_outcome("Does H. pylori treatment heal stomach ulcers?") == "stomach ulcers"
    assert asked_outcome("How long does a cornea injury take to heal without medical attention?") is None
    # "have more X": "Do IVF mothers have more caesareans?" had no concept "caesareans"
    assert asked_outcome("Do IVF mothers have more caesareans?") == "caesareans"
    assert asked_outcome("Do smokers get fewer colds?") == "colds"


def test_the_outcome_goes_on_across_with_only_next_to_its_opener() -> None:
    """`Do patients get fewer side effects with apixaban?` (2026-12-07) had the outcome "apixaban": the pending
    outcome went on across "side effects" (no concept) and "with". Right after its opener ("associated with")
    it still goes on; otherwise "with" opens the setting."""
    assert asked_outcome("Do patients get fewer side effects with apixaban?") is None
    assert asked_setting("Do patients get fewer side effects with apixaban?") == "apixaban"
    assert asked_outcome("Does apixaban reduce side effects with aspirin?") is None
    assert asked_setting("Does apixaban reduce side effects with aspirin?") == "aspirin"
    assert asked_outcome("Is obesity associated with asthma?") == "asthma"
    assert asked_outcome("Does warfarin increase the risk of bleeding with aspirin?") == "bleeding"


def test_how_long_asks_an_amount_and_names_no_concept() -> None:
    """`Does leptin in the blood predict how long lung cancer patients live?` (2026-12-07) had the outcome "long
    lung cancer", which the abstract on serum leptin in lung cancer did not cover ("not covered")."""
    assert (
        asked_outcome("Does leptin in the blood predict how long lung cancer patients live?") == "lung cancer"
    )
    # nor the subject: "How long does it take to notice the effects of Wellbutrin?" would have had "notice"
    assert asked_subject("How long does it take to notice the effects of Wellbutrin?") is None
    assert asked_subject("Does a long stay in hospital raise the risk of infection?") == "long stay"


def test_a_relative_clause_names_the_setting() -> None:
    """`Do women who had IVF have more caesareans?` (2026-12-07) had no concept "IVF": after "who had" it had no
    role, and as a word of 0.1 % of abstracts it was no concept of its own. "people who ..." names the people's
    condition or exposure, as "people with ..." does; "WHO" the organisation does not."""
    assert asked_setting("Do women who had IVF have more caesareans?") == "IVF"
    assert asked_outcome("Do women who had IVF have more caesareans?") == "caesareans"
    assert asked_setting("What is the best hypertension treatment for patients who are also diabetic?") == (
        "diabetic"
    )
    who = "Are WHO/UNAIDS/UNICEF-recommended replacement milks for infants appropriate in South Africa?"
    assert asked_subject(who) == "UNAIDS UNICEF"


def test_make_worse_names_the_outcome() -> None:
    """`biocite ask "Does smoking make psoriasis worse?"` (2026-12-02) said "yes, the cited studies support it"
    from a cohort of smokers with melanoma: "psoriasis" (in 8 abstracts, above the key-concept bar) followed no
    outcome verb, so nothing checked it. "make X worse / better" names X as "worsen X" does."""
    assert asked_outcome("Does smoking make psoriasis worse?") == "psoriasis"
    assert asked_outcome("Does stress make eczema better or worse?") == "eczema"
    assert asked_subject("Can alcohol make gout worse?") == "alcohol"
    assert asked_outcome("Does exercise make a difference in depression?") is None  # no worse / better


def test_words_of_how_often_are_not_the_subject() -> None:
    """`biocite ask "How common is brain metastasis in melanoma?"` (2026-12-02) had the subject "common", so
    "brain metastasis" (in 17 abstracts, above the key-concept bar) was checked by nothing."""
    assert asked_subject("How common is brain metastasis in melanoma?") == "brain metastasis"
    assert asked_subject("How often does brain metastasis occur in melanoma?") == "brain metastasis"
    assert asked_subject("What is the incidence of brain metastases in melanoma?") == "brain metastases"
    assert asked_subject("Is it common to have an abscess with no pain?") == "abscess"
    # "any common factors amenable to prevention" (a TRAIN question) names no entity
    assert asked_subject("Are there any common factors amenable to prevention?") is None


def test_words_of_harm_end_the_subject_and_name_the_outcome() -> None:
    """`biocite ask "Does cyclophosphamide harm the bladder?"` (2026-12-01) said "not covered: cyclophosphamide
    harm" over cyclophosphamide bladder cancer studies; "Is acetaminophen toxic to the liver?" had the subject
    "acetaminophen toxic", and "Is quinine in tonic water dangerous?" the setting "tonic water dangerous"."""
    assert asked_subject("Does cyclophosphamide harm the bladder?") == "cyclophosphamide"
    assert asked_outcome("Does cyclophosphamide harm the bladder?") == "bladder"
    assert asked_outcome("Is acetaminophen toxic to the liver?") == "liver"
    assert asked_outcome("Does lithium damage the kidney?") == "kidney"
    assert asked_setting("Is quinine in tonic water dangerous?") == "tonic water"


def test_a_tests_target_condition_is_the_asked_outcome() -> None:
    """`biocite ask --mode extractive "Is ultrasound accurate for diagnosing appendicitis in children?"`
    (2026-12-01) quoted ultrasound studies of limb fractures and penile cancer: "appendicitis" (in 4 of the 5,136
    abstracts, above the key-concept bar) was checked by no bar. The object of "diagnose" or "detect" is the
    asked outcome; "diagnosed with | X" and "detected in | X" still name the population."""
    assert asked_outcome("Is ultrasound accurate for diagnosing appendicitis in children?") == "appendicitis"
    assert asked_outcome("Can MRI detect prostate cancer?") == "prostate cancer"
    assert asked_outcome("Does the Alvarado score help diagnose appendicitis?") == "appendicitis"
    assert asked_outcome("Is survival worse in patients diagnosed with pancreatic cancer?") is None
    assert asked_setting("Is HPV DNA detected in oral cancer?") == "oral cancer"


def test_after_names_the_setting() -> None:
    """`biocite ask "Do beta blockers reduce mortality after myocardial infarction?"` (2026-12-01) quoted a
    review of beta blockers in sepsis: "myocardial infarction" was checked by no bar. "after | X" names the
    condition as "in | X" does (it made no TRAIN source abstract uncovered: bench/agent_concepts.py)."""
    question = "Do beta blockers reduce mortality after myocardial infarction?"
    assert asked_setting(question) == "myocardial infarction"
    assert (
        asked_setting("Should extubation be early in children after congenital cardiac surgery?")
        == "children"
    )
    # a time is no setting (of the 918 PubMedQA, K-QA, BioGen and unanswerable questions, only this one changes)
    assert asked_setting("Is it possible to quit taking amlodipine after taking for many years?") is None
    assert asked_setting("Can medical students help in day surgery?") == "day surgery"


def test_before_and_during_name_the_setting() -> None:
    """`biocite ask "Should beta-blockers be stopped before surgery?"` (2026-12-02) said "uncertain, leaning
    yes" from a review of beta-blockers in sepsis: "surgery" was checked by no bar. "before | X" and "during |
    X" name the time of the setting as "after | X" does; a time of day is none."""
    assert asked_setting("Should beta-blockers be stopped before surgery?") == "surgery"
    assert asked_setting("Is metformin safe during pregnancy?") == "pregnancy"
    assert asked_setting("Does music reduce anxiety during colonoscopy?") == "colonoscopy"
    assert asked_setting("Can I take Claritin during the day?") is None
    assert asked_setting("Can I take Claritin during the night?") is None
    assert asked_setting("Are nurses in night shifts more tired?") == "night shifts"  # not after "in"
    # a verb or a clause after "before" makes it a conjunction: no setting (expert questions, K-QA)
    assert asked_setting("How long would I be on Saxenda before I could move to the next dose?") is None
    assert asked_setting("Do I need to get test results before starting treatment?") is None


def test_for_names_the_setting_when_it_names_a_disease() -> None:
    """`biocite ask --mode extractive "Can you recommend an antibiotic for sinusitis?"` (2026-12-01) quoted
    antibiotics for port catheters and infected mesh: "sinusitis" was checked by no bar. "for | X" names the
    condition when X names a disease (by its ending or a disease noun), and a purpose otherwise; it does not
    take the entity asked about from "Is there a role for | X"."""
    assert asked_setting("Can you recommend an antibiotic for sinusitis?") == "sinusitis"
    assert asked_setting("Is external palliative radiotherapy for gallbladder carcinoma effective?") == (
        "gallbladder carcinoma"
    )
    assert (
        asked_setting("Is amoxicillin effective for the treatment of acute otitis media?")
        == "acute otitis media"
    )
    assert asked_setting("Is sleeve gastrectomy for the management of lymphomas useful?") == "lymphomas"
    assert asked_setting("Are statins effective for primary prevention?") is None  # a purpose
    assert asked_setting("Is the lithotripter for the ureter effective?") is None  # an organ
    assert asked_setting("Is a stoma for everyone?") is None
    assert asked_subject("Is there a role for leukocyte counts in appendicitis?") == "leukocyte counts"


def test_agent_says_the_disease_after_for_is_not_covered() -> None:
    """Antibiotic abstracts on other conditions do not answer for sinusitis: the answer says it is not covered."""
    abstracts = {
        "901": ("Antibiotic prophylaxis for port catheters", "Prophylactic antibiotics did not lower port "
                "infections in 200 patients."),
        "902": ("Infected mesh", "Infected mesh was treated with antibiotics and debridement in 30 patients."),
        "950": ("Sinusitis", "Nasal irrigation relieved chronic sinusitis in 50 adults."),
        **{str(960 + i): (f"Filler {i}", f"Unrelated filler abstract number {i} on asthma.") for i in range(7)},
    }  # fmt: skip
    bars = ("agent.min_evidence=1", "agent.min_top_relevance=0.1", "agent.min_relevance=0.05")
    agent = Agent(agent_settings(*bars, "agent.max_subject_df=0.3"), retriever=TokenDocsRetriever(abstracts))
    answer = agent.ask("Can you recommend an antibiotic for sinusitis?", mode="extractive")
    assert answer.abstained or answer.not_covered == ["sinusitis"]
    assert answer.verdict is None


def test_an_abbreviation_the_question_defines_is_either_name_of_its_concept() -> None:
    """`bench/agent_expert_roles.py` (2026-12-02): "What are the risk factors associated with type 2 diabetes
    mellitus (T2DM) in children ...?" said "not covered: type diabetes mellitus T2DM": its rarest term was
    "t2dm", which abstracts on children with type 2 diabetes need not write. An abbreviation defined in
    parentheses (Schwartz and Hearst's test) is covered by itself or by the words it stands for."""
    df = _df(
        "type 2 diabetes mellitus", "T2DM", "type 1 diabetes", "type 1 diabetes", "diabetes", "type",
        "spontaneous coronary artery dissection", n_other=20,
    )  # fmt: skip
    question = "Does type 2 diabetes mellitus (T2DM) increase in children?"
    diabetes = key_concepts(question, df, 0.1)[0]
    assert (diabetes.text, diabetes.terms, diabetes.abbreviation) == (
        "type 2 diabetes mellitus T2DM",
        ["type 2", "mellitus"],  # the designator is a term of its own (agent/designators.py)
        "t2dm",
    )
    assert diabetes.label == "type 2 diabetes mellitus (T2DM)"  # as the question writes it
    assert covers(diabetes, _doc("", "Youth with type 2 diabetes mellitus were followed."))
    assert covers(diabetes, _doc("", "Youth with T2DM were followed."))
    assert not covers(diabetes, _doc("", "Youth with type 1 diabetes were followed."))
    # no other word is specific: the abbreviation stays the term, and its phrase covers it too
    (scad,) = key_concepts("Who gets spontaneous coronary artery dissection (SCAD)?", df, 0.03)
    assert scad.terms == ["scad"]
    assert covers(scad, _doc("", "Spontaneous coronary artery dissection affects young women."))
    assert not covers(scad, _doc("", "Coronary artery dissection after angioplasty."))
    # a name in parentheses is no abbreviation of the words before it
    raksi = key_concepts("Can homemade alcohol (Raksi) preserve bodies?", _df("Raksi", n_other=20), 0.1)[0]
    assert "raksi" in raksi.terms and raksi.abbreviation == ""


def test_the_subject_and_the_setting_are_concepts_below_the_key_concept_bar() -> None:
    """'tumour size' and 'oesophageal cancer' are in half the documents, far too common for key concepts,
    but they are what was asked: an ovarian cancer abstract must not answer for oesophageal cancer."""
    df = _df("oesophageal cancer survival", "ovarian cancer tumour size", "aspirin", n_other=2)
    question = "Does tumour size predict survival in oesophageal cancer?"
    assert key_concepts(question, df, 0.0, 0.0) == []
    concepts = key_concepts(question, df, 0.0, 0.9, 0.9, 0.9)
    assert [(c.text, c.role) for c in concepts] == [
        ("tumour size", "subject"), ("survival", "outcome"), ("oesophageal cancer", "setting")
    ]  # fmt: skip
    assert [c.text for c in key_concepts(question, df, 0.0, 0.9, 0.9, 0.0)] == [
        "survival",
        "oesophageal cancer",
    ]
    setting = concepts[2]
    assert not covers(setting, _doc("", "In ovarian cancer, tumour size predicted survival."))
    assert covers(setting, _doc("", "Tumor size and survival in esophageal cancer."))  # either spelling


@pytest.mark.parametrize(
    ("question", "subject", "setting"),
    [
        ("Does aspirin prevent colorectal cancer?", "aspirin", None),
        ("Is metformin safe in gestational diabetes?", "metformin", "gestational diabetes"),
        ("Is there evidence that statins reduce mortality in older women?", "statins", "older women"),
        ("Does chemotherapy have a role in the management of nasopharyngeal carcinoma?", "chemotherapy",
         "nasopharyngeal carcinoma"),  # "management" frames the setting
        ("Is there a decrease in mortality with aspirin?", None, "aspirin"),  # "in" after an outcome verb
        # "risk of" names the outcome (`test_a_risk_of_heal_and_have_more_name_the_outcome`)
        ("What is the risk of agranulocytosis with clozapine?", None, "clozapine"),
        ("Cycloplegic autorefraction in young adults: is it mandatory?", None, "young"),
        # a patient's words: counts and dosage forms are not the entity; an opening word opens a sentence
        ("How many pills of ibuprofen can I take?", "ibuprofen", None),
        ("Is there a steroid cream that I can use for the bite on my face?", "steroid", None),
        ("Is there something like ambien which could help?", "ambien", None),
        ("I have gout and my doctor told me to take colchicine, how should I take it?", None, None),
        ("Aortic aneurysm rupture--is the diameter important?", "diameter", None),
        # "in addition to" is an idiom; "in case of" frames the setting
        ("Do elderly patients benefit from surgery in addition to radiotherapy?", "elderly", None),
        ("Is endarterectomy an option in case of insufficient venous material?", "endarterectomy",
         "insufficient venous material"),
        # what is asked about the entity is not the entity; a contraction's ending is no word
        ("What are the side effects of statins?", "statins", None),
        ("Does pretreatment with statins improve outcome after stroke?", "statins", None),
        ("Is overexpression of Ki-67 a prognostic marker in urothelial carcinoma?", "Ki-67",
         "urothelial carcinoma"),
        ("Can't you recommend an antibiotic for sinusitis?", "antibiotic", "sinusitis"),
        # "in vivo" names a method, not a population: the setting is the next "in" chunk
        ("In vivo visualization of pyloric hypertrophy in infants: is there a role?", None, "infants"),
    ],
)  # fmt: skip
def test_the_subject_and_the_setting_of_a_question(question: str, subject: str, setting: str) -> None:
    assert asked_subject(question) == subject and asked_setting(question) == setting


def test_agent_answers_for_the_asked_population_only() -> None:
    """Two metformin abstracts: adults with type 2 diabetes (111) and obese adolescents (444). Asked about
    obese adolescents, the agent cites 444 alone; with the setting check off it also cites the adults'."""
    question = "Does metformin lower body weight in obese adolescents?"
    cited = []
    for bar in ("1.0", "0"):
        settings = agent_settings("agent.min_evidence=1", f"agent.max_setting_df={bar}")
        answer = Agent(settings, retriever=TokenDocsRetriever()).ask(question, mode="extractive")
        cited.append({c.pmid for s in answer.sentences for c in s.citations})
        assert not answer.abstained and answer.not_covered == []
    assert cited[0] == {"444"} and "111" in cited[1]


def test_a_compound_with_a_digit_is_one_word_as_the_index_has_it() -> None:
    """'CA19-9' is 'ca199' in the index: as 'CA19' and '9' it was a word no abstract has, and 'IL-6' was
    'IL', which an abstract on IL-2 covered."""
    df = _df("CA19-9 in pancreatic cancer", "IL-6 in sepsis", "IL-2 in melanoma", n_other=20)
    ca, il6 = (key_concepts(q, df, 0.1)[0] for q in ("Is CA19-9 useful?", "Does IL-6 predict death?"))
    assert (ca.text, ca.terms, ca.unseen) == ("CA19-9", ["ca199"], [])
    assert covers(ca, _doc("", "Serum CA-19-9 was raised.")) and not covers(
        ca, _doc("", "CA 125 was raised.")
    )
    assert il6.terms == ["il6"] and not covers(il6, _doc("", "IL-2 therapy in melanoma."))
    assert [c.words for c in key_concepts("Is long-term aspirin safe?", _df("aspirin"), 0.5)] == [
        ["long", "term", "aspirin"]
    ]  # a compound without a digit is its words, as in the index


def test_mesh_headings_cover_a_concept() -> None:
    """NLM's headings say what an abstract is about when its words do not ("pancreatoduodenectomy for PA")."""
    df = _df("pancreatic cancer", "ovarian cancer", n_other=2)
    setting = key_concepts("Does CA19-9 predict survival in pancreatic cancer?", df, 0.0, 0.0, 1.0)[-1]
    text = "Survival after pancreatoduodenectomy for PA was shorter with a high CA19-9."
    assert setting.role == "setting" and not covers(setting, _doc("", text))
    assert covers(setting, DocumentTerms.of(Document(pmid="1", abstract=text, mesh=["Pancreatic Neoplasms"])))


def test_an_asked_outcome_is_covered_by_all_of_its_terms() -> None:
    """ "muscle pain" was covered by a liver-injury abstract's "abdominal pain"; an organ's Latin adjective and
    its English name are one term ("hepatic" / "liver")."""
    df = _df("liver fibrosis", "hepatic steatosis", "muscle pain", "abdominal pain", n_other=4)
    outcome = key_concepts("Does telmisartan prevent hepatic fibrosis?", df, 0.0, 0.5)[-1]
    assert outcome.outcome and sorted(outcome.terms) == ["fibrosi", "hepat"]
    assert covers(outcome, _doc("", "Telmisartan attenuated liver fibrosis in rats."))
    assert not covers(outcome, _doc("", "Telmisartan attenuated hepatic steatosis in rats."))
    assert not covers(outcome, _doc("", "Telmisartan lowered blood pressure in rats."))
    pain = key_concepts("Do statins cause muscle pain?", df, 0.0, 0.5)[-1]
    assert pain.outcome and sorted(pain.terms) == ["muscl", "pain"]
    assert covers(pain, _doc("", "Muscle pain was reported by 10% of statin users."))
    assert covers(pain, _doc("", "Statin users had more pain in their muscles."))
    assert not covers(pain, _doc("", "She presented with upper abdominal pain after fluvastatin."))
    assert not covers(pain, _doc("", "Statins induced an immune response in muscle fibres."))


def test_letter_compounds_and_age_groups() -> None:
    """TRAIN questions said "not covered" of what their own abstract has: "Los Angeles grades C" (it says "grade
    C"), "high-sensitivity C-reactive protein" (the letter was glued to "sensitivity"), "older patients" (it
    says "elderly")."""
    df = _df("grade C oesophagitis", "C-reactive protein", "elderly", n_other=4)
    grades = key_concepts("Do Los Angeles grades C and D oesophagitis heal?", df, 0.5)[0]
    assert grades.terms[0] == "grades c d" and covers(grades, _doc("", "Healing of grade C oesophagitis."))
    # either grade asked about (agent/designators.py), but not a letter alone nor another grade
    assert covers(grades, _doc("", "Grade D oesophagitis healed."))
    assert not covers(grades, _doc("", "Grade A oesophagitis healed; C was not given."))
    crp = key_concepts("Is high-sensitivity C-reactive protein associated with stroke?", df, 0.5)[0]
    assert crp.terms[0] == "c reactive" and covers(crp, _doc("", "Serum C-reactive protein was raised."))
    assert not covers(crp, _doc("", "High sensitivity C was reactive."))
    assert [c.terms[0] for c in key_concepts("Do regulatory T-cells matter?", df, 0.5)] == ["t cells"]
    older = key_concepts("Is aspirin safe in older patients?", df, 0.0, 0.0, 1.0)[-1]
    assert older.text == "older" and covers(older, _doc("", "Aspirin in the elderly."))
    assert not covers(older, _doc("", "Aspirin in young adults."))
    # "children" are the abstract's pediatric patients; a test's plain name is the one abstracts write
    children = key_concepts("Is ultrasound accurate in children?", _df("pediatric", n_other=4), 0.0, 0.0, 1.0)
    assert children[-1].text == "children"
    assert covers(children[-1], _doc("", "Ultrasound in paediatric fracture diagnosis."))
    assert not covers(children[-1], _doc("", "Child-Pugh class B cirrhosis."))
    ultrasound = key_concepts("Is ultrasound accurate?", _df("ultrasonography", n_other=4), 0.5)[0]
    assert covers(ultrasound, _doc("", "Most underwent abdominal ultrasonography (14.6%)."))
    # "a child" is one of the children asked about; Child-Pugh is no child
    assert covers(children[-1], _doc("Cardiac arrest in a child with cerebral palsy.", ""))
    assert not covers(children[-1], _doc("", "Child's-Pugh score, Child Pugh and Child-Turcotte-Pugh class."))


def test_a_noun_is_covered_by_its_adjective() -> None:
    """`biocite ask "Does levodopa lower blood pressure in Parkinson's disease?"` (2026-12-01) said "not covered:
    blood pressure" over levodopa dyskinesia studies: the index's study of levodopa's hypotensive effect, its
    first hit, is on "parkinsonian patients", so it did not cover the setting and was ranked below them. The
    noun and adjective of one disease or organ cover each other (`WORD_FORMS`); unrelated words that share
    letters do not."""
    common = ("disease", "blood pressure", "beta blockers", "lamotrigine", "valproate", "surgery", "common")
    df = _df("parkinson", "asthma", "epilepsy", "fetus", "metastasis", "hepatitis", "substantia", *common * 3)
    asked = "Does levodopa lower blood pressure in Parkinson's disease?"
    setting = key_concepts(asked, df, 0.0, 0.0, 1.0)[-1]
    assert setting.text == "Parkinson disease"
    assert covers(setting, _doc("Hypotensive effect of levodopa in parkinsonian patients.", ""))
    for asked, written in [
        ("Are beta blockers safe in asthma?", "Propranolol in asthmatic children."),
        ("Is lamotrigine safe in epilepsy?", "Lamotrigine in epileptic patients."),
        ("Is valproate safe in the fetus?", "Fetal valproate syndrome."),
        ("Does surgery help in metastases?", "Resection of metastatic lesions."),
        ("Is it common in myocardium?", "Myocardial fibrosis."),
        ("Is it common in pregnancy?", "Pregnant women were enrolled."),
    ]:
        assert covers(key_concepts(asked, df, 0.0, 0.0, 1.0)[-1], _doc("", written)), asked
    hepatitis = key_concepts("Is it common in hepatitis?", df, 0.0, 0.0, 1.0)[-1]
    assert covers(hepatitis, _doc("", "Chronic hepatitis and other hepatitides."))
    for asked, written in [
        ("Is it common in hepatitis?", "Hepatic fibrosis."),  # an organ is not its inflammation (one stem)
        ("Is it seen in the substantia nigra?", "A substantial loss."),
        ("Is it common in epilepsy?", "Epidural analgesia."),
    ]:
        assert not covers(key_concepts(asked, df, 0.0, 0.0, 1.0)[-1], _doc("", written))


def test_an_organ_poison_is_the_asked_outcome() -> None:
    """`biocite ask "Is vinorelbine cardiotoxic?"` (2026-12-01) had one subject, "vinorelbine cardiotoxic"."""
    assert asked_subject("Is vinorelbine cardiotoxic?") == "vinorelbine"
    assert asked_outcome("Is vinorelbine cardiotoxic?") == "cardiotoxic"
    assert asked_outcome("Are aminoglycosides nephrotoxic in neonates?") == "nephrotoxic"
    assert asked_setting("Are aminoglycosides nephrotoxic in neonates?") == "neonates"
    assert asked_outcome("Is paracetamol toxic to the liver?") == "liver"  # a word of harm, as before


def test_a_compound_joined_by_a_stop_word_is_one_phrase() -> None:
    """`biocite ask "Does hepatitis B immunoglobulin prevent mother-to-infant transmission?"` (2026-12-01) had the
    outcome "mother" (the compound's "to" cut it) and quoted a hospital compliance survey; the index's study of
    mother-to-infant infection was not cited."""
    df = _df("mother to infant infection immunoglobulin", "immunoglobulin", "head to head", n_other=4)
    concepts = key_concepts("Does immunoglobulin prevent mother-to-infant transmission?", df, 0.0, 0.9)
    assert [c.text for c in concepts] == ["mother to infant transmission"]
    assert covers(concepts[0], _doc("Prevention of mother-to-infant infection by hepatitis B virus.", ""))
    assert not covers(concepts[0], _doc("", "Infants of HBsAg positive mothers were vaccinated."))
    design = key_concepts("Is A better in head-to-head trials?", df, 0.5)
    assert "head to head" not in [c.text for c in design]


def test_template_words_are_not_concepts() -> None:
    """ "Is X worthwhile?", "routine", "optimal", "over the last decade" name nothing asked ("sufficient" may:
    "venous insufficiency")."""
    df = _df("frozen section", "worthwhile routine decade optimal guidelines", n_other=4)
    asked = "Is routine frozen-section examination in breast cancer worthwhile over the last decade?"
    assert [c.text for c in key_concepts(asked, df, 0.5)] == ["frozen section examination", "breast cancer"]
    assert [c.text for c in key_concepts("Is an optimal dose of aspirin adequate?", df, 0.5)] == ["aspirin"]


@pytest.mark.parametrize(
    ("question", "concepts"),
    [
        # a verb's noun in -ment is a noun: not cut as "replaces" / "impairs" are
        ("Is aortic valve replacement safe in the very old?", ["aortic valve replacement"]),
        ("Does exercise prevent cognitive impairment?", ["exercise", "cognitive impairment"]),
        ("Does sotalol cause QT prolongation?", ["sotalol", "QT prolongation"]),
        ("Does naltrexone help in alcohol dependence?", ["naltrexone", "alcohol dependence"]),
        # "every" counts, "later" says when: neither is of the asked entity
        (
            "Should every baby with biliary atresia get a Kasai operation?",
            ["baby", "biliary atresia", "Kasai operation"],
        ),
        (
            "Does a leak after rectal surgery affect bowel function later?",
            ["leak", "rectal surgery", "bowel function"],
        ),
        # "damage" heads the asked outcome; after the entity it is the verb
        ("Do statins cause muscle damage?", ["statins", "muscle damage"]),
        ("Does smoking damage the lungs?", ["smoking", "lungs"]),
        # "a good idea" and "soon" are how patients ask, "remove" a verb ("removal" its noun)
        ("Is it a good idea to remove an ovary that has twisted in a child?", ["ovary", "twisted", "child"]),
        ("Is it OK to eat soon after a laparoscopy?", ["laparoscopy"]),
        ("Is early removal of the urinary catheter safe?", ["early removal", "urinary catheter"]),
        # "taken" is a verb; "outlook" says what is asked of the disease, as "prognosis" does
        ("Do statins taken before a stroke help recovery?", ["statins", "stroke", "recovery"]),
        ("Does a high leptin level mean a worse outlook in lung cancer?", ["high leptin", "lung cancer"]),
        # a lay name with a stop word inside, and the phrasal verb "pass out", are one concept each
        ("Does ginkgo help ringing in the ears?", ["ginkgo", "ringing in the ears"]),
        ("Does passing out after a concussion mean worse memory?", ["passing out", "concussion", "memory"]),
        # "caught", "carrying", "letting", "hurt" and "end up" are verbs; "tricky" is how patients ask
        ("Is hepatitis C in Israel mostly caught in hospital?", ["hepatitis C", "Israel", "hospital"]),
        ("Are women in Israel carrying group B strep?", ["women", "Israel", "group B strep"]),
        ("Is letting the wound breathe better?", ["wound"]),
        (
            "Does contamination of the graft hurt transplant results?",
            ["contamination", "graft", "transplant"],
        ),
        ("Do teens who vape end up smoking cigarettes?", ["teens", "vape", "smoking cigarettes"]),
        ("Is Google good for tricky immune cases?", ["Google", "immune"]),
        # "finding" is a verb, and "problems" are what a patient asks of, not what
        ("Is ultrasound better than CT for finding appendicitis?", ["ultrasound", "CT", "appendicitis"]),
        ("Does binge drinking cause problems with motor skills?", ["binge drinking", "motor skills"]),
        ("Does a slow infusion cause fewer side effects?", ["slow infusion"]),
        # "enough" and "the chance of" are how patients ask; "kept" and "call" are verbs
        ("Does high blood pressure lower the chance of back pain?", ["high blood pressure", "back pain"]),
        ("Is insulin kept in the fridge enough?", ["insulin", "fridge"]),
        ("Should general practitioners call patients by their first names?", ["practitioners", "names"]),
        (
            "Do people with migraines pay attention to headache pictures?",
            ["migraines", "attention", "headache pictures"],
        ),
        # "run", "calm" and "heal" are verbs as written ("running" and "wound healing" are things); "sometimes"
        # says how often; a lay name the chunk would cut is one concept ("breathing" is how patients ask)
        ("Do nasal polyps run in families?", ["nasal polyps", "families"]),
        ("Does running cause knee arthritis?", ["running", "knee arthritis"]),
        ("Can music calm patients on a breathing machine?", ["music", "breathing machine"]),
        ("Can a broken elbow sometimes heal without surgery?", ["broken elbow", "surgery"]),
        ("Does honey speed up wound healing?", ["honey", "wound healing"]),
        # "sent" is a verb and "instead" compares
        ("Are people with schizophrenia sent to worse nursing homes?", ["schizophrenia", "nursing homes"]),
        ("Is chemoradiation instead of surgery safe?", ["chemoradiation", "surgery"]),
        # "invading" is a verb: "rectal cancer invading" was not covered by "rectal cancer threatening the prostate"
        (
            "Is partial prostatectomy safe for rectal cancer invading the prostate?",
            ["partial prostatectomy", "rectal cancer", "prostate"],
        ),
    ],
)
def test_a_concept_is_the_noun_phrase_the_question_names(question: str, concepts: list[str]) -> None:
    assert [c.text for c in key_concepts(question, _df("x"), 0.03)] == concepts


def test_a_question_that_opens_after_a_comma_names_its_subject() -> None:
    """ "My mom is 82, is it safe ...?" had no subject, and the surgery passed no bar."""
    assert (
        asked_subject("My mom is 82, is it safe for her to have heart valve surgery?")
        == "heart valve surgery"
    )
    assert asked_subject("I have asthma, can I take ibuprofen?") == "ibuprofen"
    assert asked_subject("If the muscle aches continue, should I be concerned?") is None  # how patients ask


def test_a_plural_abbreviation_is_covered_by_its_singular_and_spelt_out() -> None:
    ppis = key_concepts("Do PPIs cause rebound heartburn?", _df("x"), 0.03)[0]
    assert ppis.text == "PPIs"
    assert covers(ppis, _doc("", "PPI use was stopped after 8 weeks."))
    assert covers(ppis, _doc("", "Rebound acid hypersecretion might occur after proton pump inhibitors."))
    assert not covers(ppis, _doc("", "Statins were stopped after 8 weeks."))
    ppi = key_concepts("Is PPI use linked to fractures?", _df("x"), 0.03)[0]
    assert ppi.text == "PPI" and covers(ppi, _doc("", "PPIs were stopped."))


def test_lay_names_of_babies_are_covered_by_the_abstracts_words() -> None:
    babies = key_concepts("Do premature babies with sepsis benefit from IgM?", _df("x"), 0.03)[0]
    assert babies.text == "premature babies"
    assert covers(babies, _doc("", "Septic preterm infants received IgM-enriched immunoglobulin."))


@pytest.mark.parametrize(
    ("question", "written"),
    [
        ("Can vitamin C stop CRPS after a broken wrist?", "Vitamin C reduces CRPS after wrist fractures."),
        (
            "Does cocaine exposure in the womb cause delinquency?",
            "Intrauterine cocaine exposure was measured.",
        ),
        ("Does a fever reaction to platelets matter?", "A febrile reaction to platelets was recorded."),
        ("Is a tummy tuck safe?", "Seroma is common after abdominoplasty."),
        ("Is keyhole surgery safe in the elderly?", "Laparoscopic fundoplication is safe in the elderly."),
        (
            "Can paramedics use a smaller bag?",
            "Emergency Medical Services (EMS) professionals used a smaller bag.",
        ),
        ("Is gallbladder removal harder in men?", "Laparoscopic cholecystectomy is challenging in men."),
        ("Is stitching the nose better than packing?", "Suturing of the nasal septum was preferred."),
        ("Is a laser best for stones in the ureter?", "The holmium laser for ureteral stones."),
        (
            "Does PRP help after wisdom teeth are pulled?",
            "PRP gel enhanced healing after third molar surgery.",
        ),
        (
            "Is putting off an appendix operation safe?",
            "Appendectomy can be performed as a semielective surgery.",
        ),
        (
            "What are the side effects of having your tonsils out?",
            "Morbidity after tonsillectomy was audited.",
        ),
        (
            "Should a broken collarbone be operated on?",
            "Operative treatment of midshaft clavicular fractures.",
        ),
        (
            "Is bleeding after tonsillectomy worse at night?",
            "Post-tonsillectomy late haemorrhages were counted.",
        ),
        ("Is tiredness in lupus linked to sleep?", "Fatigue in lupus was measured."),
        (
            "Are repeated miscarriages linked to X-inactivation?",
            "Recurrent spontaneous abortion and X-inactivation.",
        ),
        (
            "Does being knocked out in a concussion matter?",
            "Loss of consciousness did not predict test scores.",
        ),
        ("Is saving the leg better than amputation?", "Limb-salvage surgery offers better gait efficiency."),
        (
            "Does heparin prevent pneumonia in patients on a breathing machine?",
            "Nebulized heparin in mechanically ventilated patients.",
        ),
        (
            "Are women helped differently by clot-busting drugs?",
            "Intravenous thrombolysis in women and men.",
        ),
        ("Is having your gallbladder out as a day case safe?", "Day case cholecystectomy is safe."),
        (
            "Could a stiff chest be why people die so fast from fentanyl?",
            "Chest wall rigidity after fentanyl.",
        ),
        ("Do newer birth control pills cause clots?", "Newer oral contraceptives and thromboembolism."),
        (
            "Can a CT scan find cancer that has spread to the bones?",
            "CT for bone metastases of breast cancer.",
        ),
        ("Does living in a city raise the risk of diabetes?", "Urban residence and diabetes."),
        ("Do carers of people with dementia get depressed?", "Depression in family caregivers."),
        (
            "Does secondhand smoke in childhood raise the risk of sick leave?",
            "Environmental tobacco smoke at home and sick leave.",
        ),
        (
            "Does radiotherapy help cancer pressing on the spinal cord?",
            "Radiotherapy for metastatic spinal cord compression.",
        ),
        ("Is keyhole removal of the adrenal gland safe?", "Laparoscopic adrenalectomy is safe."),
        ("Are large lumps of the adrenal gland benign?", "Large adrenal masses were removed."),
        ("Is a bone scan useful before amputation?", "3-phase bone scintigraphy before amputation."),
        ("Do women live longer after surgery for lung cancer?", "Survival of resected lung cancer."),
        ("Is a Whipple operation safe in the elderly?", "Pancreaticoduodenectomy in octogenarians."),
        ("Do joint pains stop when letrozole is stopped?", "Arthralgia with aromatase inhibitors."),
        ("Do warning signs of cancer get checked?", "Alarm symptoms and contact with specialist care."),
        ("Can polyarteritis nodosa go away by itself?", "Spontaneous remission of renal PAN can occur."),
        ("Is leptin in the blood a sign of survival?", "The serum leptin level had no prognostic value."),
        ("Is chemo safe in the elderly?", "Chemotherapy in patients over 80."),
        ("Is a neck artery scan needed?", "Carotid artery stenosis was assessed by duplex."),
        ("Is heart bypass safe after 80?", "Coronary artery bypass grafting in octogenarians."),
        ("Does a steroid inhaler help asthma?", "The effect of inhaled corticosteroids (ICSs) in asthma."),
        ("Do asthmatics feel breathless?", "The perception of dyspnea during bronchoconstriction."),
        ("Is a white cell count useful?", "The leukocyte count at presentation was recorded."),
        (
            "Is poor nutrition a cause of hardening of the arteries?",
            "Arterial calcification is a risk factor in hemodialysis patients.",
        ),
        ("Do GPs give antibiotics?", "Italian primary care physicians prescribe eradication therapy."),
        ("Are stomach ulcers treated?", "Patients with peptic ulcer disease (PUD)."),
        ("Is radiotherapy before surgery useful?", "Pre-operative chemo-radiation in rectal cancer."),
        ("Do statins prevent an irregular heartbeat?", "Statins reduce atrial fibrillation (AF) after CABG."),
        ("Do heart pumps work as a bridge?", "Left ventricular assist devices as a bridge to transplant."),
        ("Do IVF mothers have more caesareans?", "Higher C-section rates after ART."),
    ],
)
def test_lay_names_are_covered_by_the_abstracts_medical_words(question: str, written: str) -> None:
    concepts = key_concepts(question, _df("x"), 0.03)
    lay_names = (
        "broken wrist", "womb", "fever reaction", "tummy tuck", "keyhole surgery", "paramedics",
        "gallbladder removal", "stitching", "ureter", "wisdom teeth", "appendix operation", "tonsils out",
        "broken collarbone", "bleeding", "tiredness", "repeated miscarriages", "knocked out", "saving the leg",
        "breathing machine", "clot busting drugs", "gallbladder out", "stiff chest", "newer birth control pills",
        "spread to the bones", "city", "carers", "secondhand smoke", "cancer pressing on the spinal cord",
        "keyhole removal", "large lumps", "bone scan", "surgery", "Whipple operation", "joint pains",
        "warning signs", "polyarteritis nodosa go away by itself", "blood", "chemo", "neck artery scan",
        "heart bypass", "steroid inhaler", "breathless", "white cell count", "hardening of the arteries",
        "GPs", "stomach ulcers", "irregular heartbeat", "heart pumps", "caesareans",
    )  # fmt: skip
    lay = next(c for c in concepts if c.text in lay_names)
    assert covers(lay, _doc("", written))
    assert not covers(lay, _doc("", "Patients were followed for 12 months."))


def test_women_are_covered_by_maternal_patients_but_pregnancy_is_not_covered_by_women() -> None:
    """An eclampsia trial writes of "maternal" outcomes, not of "women"; a trial in women is no trial in pregnancy."""
    women = key_concepts("Is a C-section better for women with eclampsia?", _df("x"), 0.03, 0.0, 0.5)
    asked = next(c for c in women if c.text == "women")
    assert covers(asked, _doc("", "Maternal event rate was similar in the cesarean arm."))
    assert not covers(asked, _doc("", "Event rates were similar in the cesarean arm."))
    pregnancy = next(
        c for c in key_concepts("Is aspirin safe in pregnancy?", _df("x"), 0.03) if c.text == "pregnancy"
    )
    assert not covers(pregnancy, _doc("", "Aspirin was safe in women aged 40 to 60."))


def test_a_group_of_people_is_read_by_its_written_phrase() -> None:
    """ "read 'GPs' as 'general', another name of the same group of people": the note named the first word of
    "general practitioners"; and an abstract of "primary care physicians" did not cover "GPs"."""
    gps = key_concepts("Do GPs give antibiotics?", _df("x"), 0.03)[0]
    physicians = Document(pmid="1", abstract="Italian primary care physicians prescribe eradication therapy.")
    notes = respelling_notes([gps], {0}, [physicians])
    assert notes == ["read 'GPs' as 'primary care physicians', another name of the same group of people"]


def test_a_brand_name_is_covered_by_its_generic_name() -> None:
    abilify = key_concepts("Can Abilify make people gamble?", _df("x"), 0.03)[0]
    assert abilify.text == "Abilify"
    assert covers(abilify, _doc("", "Aripiprazole: a new risk factor for pathological gambling?"))
    assert not covers(abilify, _doc("", "Olanzapine and pathological gambling."))
    notes = respelling_notes([abilify], {0}, [Document(pmid="1", abstract="Aripiprazole and gambling.")])
    assert "read 'Abilify' as 'aripiprazole', another name of the same drug" in notes


def test_a_patients_word_is_read_as_its_medical_name() -> None:
    """ "read 'keyhole surgery' as 'laparoscopic', another name of the same condition" named a procedure a condition."""
    keyhole = key_concepts("Is keyhole surgery safe in the elderly?", _df("x"), 0.03)[0]
    notes = respelling_notes(
        [keyhole], {0}, [Document(pmid="1", abstract="Laparoscopic fundoplication is safe.")]
    )
    assert notes == ["read 'keyhole surgery' as 'laparoscopic', its medical name"]
    clot = key_concepts("Do clot-busting drugs work in women?", _df("x"), 0.03)[
        0
    ]  # the name inside the concept
    notes = respelling_notes([clot], {0}, [Document(pmid="1", abstract="Thrombolysis in women.")])
    assert notes == ["read 'clot busting' as 'thrombolysis', its medical name"]
    seizures = key_concepts("Do seizures recur?", _df("x"), 0.03)[0]  # two medical names: no patient's word
    notes = respelling_notes([seizures], {0}, [Document(pmid="1", abstract="Convulsions recurred.")])
    assert notes == ["read 'seizures' as 'convulsions', another name of the same condition"]
    # a phrase as the abstract writes it, not as the table does ("c section")
    caesareans = key_concepts("Do IVF mothers have more caesareans?", _df("x"), 0.03)[-1]
    abstract = "Patients after ART treatment suffer from higher C-section rates."
    notes = respelling_notes([caesareans], {0}, [Document(pmid="1", abstract=abstract)])
    assert notes == ["read 'caesareans' as 'C-section', its medical name"]


def test_a_concept_whose_other_name_is_indexed_was_indexed() -> None:
    """ "no indexed abstract mentions 'Lipitor'" was said over six atorvastatin abstracts."""
    lipitor = key_concepts("Does Lipitor cause muscle pain?", _df("x"), 0.03)[0]
    assert not never_indexed(lipitor, _df("atorvastatin and myalgia"))
    assert never_indexed(lipitor, _df("simvastatin and myalgia"))
    tummy_tuck = key_concepts("Is a tummy tuck safe?", _df("x"), 0.03)[0]
    assert not never_indexed(tummy_tuck, _df("seroma after abdominoplasty"))


def test_passing_out_is_covered_by_its_clinical_names() -> None:
    passing_out = key_concepts("Does passing out after a concussion matter?", _df("x"), 0.03)[0]
    assert passing_out.text == "passing out"
    assert covers(
        passing_out, _doc("", "Loss of consciousness did not predict neuropsychological decrements.")
    )
    assert covers(passing_out, _doc("", "Syncope was recorded in 12 patients."))
    assert not covers(passing_out, _doc("", "Patients passing the test out of hours were enrolled."))


def test_agent_says_the_asked_outcome_is_not_covered() -> None:
    """'statin' is a key concept; 'body weight' (2 of 4 abstracts) only passes the outcome bar, and no
    statin abstract mentions it: not covered, no verdict. With the outcome check off it goes unseen."""
    question = "Does statin therapy reduce body weight?"
    on = agent_settings("agent.max_concept_df=0.3", "agent.max_outcome_df=0.6", "agent.min_evidence=1")
    answer = Agent(on, retriever=TokenDocsRetriever()).ask(question, mode="extractive")
    assert not answer.abstained and answer.not_covered == ["body weight"]
    assert answer.verdict == "insufficient" and "body weight" in answer.sentences[0].text
    assert {c.pmid for s in answer.sentences for c in s.citations} == {"222"}  # never a metformin trial
    off = agent_settings("agent.max_concept_df=0.3", "agent.max_outcome_df=0", "agent.min_evidence=1")
    assert Agent(off, retriever=TokenDocsRetriever()).ask(question, mode="extractive").not_covered == []


def _evidence(pmid: str, text: str, answer: float = 0.5) -> Evidence:
    return Evidence(
        pmid=pmid,
        sentence_index=0,
        span=Span(start=0, end=len(text), text=text),
        relevance=0.6,
        answer=answer,
    )


def test_a_sentence_saying_or_is_not_a_finding_but_one_giving_an_odds_ratio_is() -> None:
    """A methods sentence with the word "or" had passed as a finding: the effect-ratio cue is case-blind."""
    methods = _evidence("1", "Patients were excluded if they received vitamin D or phosphate binders.", 0.01)
    ratio = _evidence("2", "Fracture risk was lower with vitamin D (OR 0.8, p=0.04).", 0.01)
    plural = _evidence("3", "Hazard ratios were similar across subgroups.", 0.01)
    background = _evidence("4", "Vitamin D is made in the skin.", 0.01)
    assert findings_or_all([methods, ratio, plural, background]) == [ratio, plural]
    assert findings_or_all([methods, background]) == [methods, background]  # none reports one: all


@pytest.mark.parametrize(
    ("question", "stating", "not_stating"),
    [
        (
            "How many women with synchronous endometrial and ovarian cancer have Lynch syndrome?",
            "Overall, 7% of women in our cohort met criteria for Lynch syndrome.",
            "Limiting genetic evaluation to women with a family history may identify women with Lynch syndrome.",
        ),
        (
            "What dose of atropine is used with ketamine?",
            "Children were randomised to receive 0.01 mg/kg of atropine or placebo.",
            "Atropine reduces hypersalivation.",
        ),
        (
            "How long after laparotomy can patients eat?",
            "Postoperative ileus lasted 3.6 vs. 3.4 days.",
            "Patients (age range, 15-81 years; mean, 52 years) received a regular diet.",  # ages, no time span
        ),
    ],
)
def test_a_question_asking_for_a_quantity_is_answered_by_sentences_stating_one(
    question: str, stating: str, not_stating: str
) -> None:
    """The findings model, taught on yes/no questions, read "Overall, 7% of women ..." as no answer to "How
    many ...?": the conclusion on whom to test led, and the number was never quoted."""
    sentences = [
        Sentence(pmid="1", index=i, start=0, end=1, text=t) for i, t in enumerate((stating, not_stating))
    ]
    probs = np.array([0.1, 0.95])
    assert with_asked_quantity(question, sentences, probs).tolist() == [QUANTITY_ANSWER, ANSWER_BEARING]
    yes_no = (
        "Does atropine reduce hypersalivation with ketamine?"  # no quantity asked: as the model read them
    )
    assert with_asked_quantity(yes_no, sentences, probs).tolist() == probs.tolist()


def _sentence(text: str, *items: Evidence) -> AnswerSentence:
    return AnswerSentence(
        text=text, citations=[Citation(pmid=e.pmid, evidence=[e]) for e in items], support=0.9
    )


def test_numbers_must_occur_in_cited_evidence_else_recited_or_dropped() -> None:
    a = _evidence("1", "Severe exacerbations fell by 64% (rate ratio 0.36).")
    b = _evidence("2", "Symptom control was similar in both groups.")
    assert numbers_in("Exacerbations fell by 64%.", a.span.text) == []
    assert numbers_in("Exacerbations fell by 46%.", a.span.text) == ["46"]
    notes: list[str] = []
    kept = polish(
        [
            _sentence("Severe exacerbations were 64% lower with the inhaler.", b),  # wrong citation
            _sentence("Exacerbations fell by 12% overall in the trial.", a, b),  # number nowhere
        ],
        [a, b],
        notes,
    )
    assert [s.text for s in kept] == ["Severe exacerbations were 64% lower with the inhaler."]
    assert [c.pmid for c in kept[0].citations] == ["1"]
    assert "1 number dropped" in notes[0] and "1 number re-cited" in notes[0]


def test_a_copied_sentence_cites_the_abstract_it_copies() -> None:
    a = _evidence("1", "Metformin lowered maternal weight gain compared with insulin.")
    b = _evidence("2", "Neonatal hypoglycaemia was less frequent with metformin.")
    assert copied_from("Metformin lowered maternal weight gain compared with insulin.", [b, a]) is a
    kept = polish([_sentence("Metformin lowered maternal weight gain compared with insulin.", b)], [a, b], [])
    assert [c.pmid for c in kept[0].citations] == ["1"]


def test_a_restatement_that_drops_its_sources_hedge_is_quoted_as_written() -> None:
    """Held-out generate run 1-30 (2026-12-04): "... by ultrasound may improve the prognosis ..." was restated
    "... improves the prognosis ...", and "Clinical predictors appear inadequate" as "are inadequate". The
    source sentence is quoted instead (its inline label left out, as in extractive quotes); a restatement that
    keeps the hedge, and a sentence that says something else, stay as written."""
    hcc = _evidence(
        "1", "CONCLUSIONS: Early detection of liver cancer by ultrasound may improve the prognosis."
    )
    spine = _evidence("2", "Clinical predictors appear inadequate for the evaluation of the cervical spine.")
    notes: list[str] = []
    written = [
        _sentence("Early detection of liver cancer by ultrasound improves the prognosis.", hcc),
        _sentence("Clinical predictors are inadequate for the evaluation of the cervical spine.", hcc),
        _sentence("Clinical predictors missed fractures in older trauma patients in this cohort.", spine),
    ]
    kept = polish(written, [hcc, spine], notes)
    assert [s.text for s in kept] == [
        "Early detection of liver cancer by ultrasound may improve the prognosis.",
        spine.span.text,
        written[2].text,
    ]
    assert [c.pmid for s in kept for c in s.citations] == ["1", "2", "2"]
    assert "2 hedges restored" in notes[-1]
    assert not drops_hedge("Ultrasound detection of liver cancer may improve its prognosis.", hcc.span.text)
    assert drops_hedge(
        "There is no benefit of metformin in PCO.", "There appears to be no benefit of metformin in PCO."
    )
    quilting = _evidence(
        "3", "The quilting suture seems to be an efficient technique to prevent seroma formation."
    )
    paraphrase = _sentence("Quilting suture is effective in preventing seroma formation.", quilting, hcc)
    assert not drops_hedge(paraphrase.text, quilting.span.text)  # a paraphrase: under the copy bar
    (quoted,) = polish([paraphrase], [hcc, spine, quilting], [])  # but it quotes what it restates
    assert quoted.text == quilting.span.text and [c.pmid for c in quoted.citations] == ["3"]
    assert drops_hedge(  # a belief stated as a fact (2026-12-05)
        "The atopy patch test is specific for patients with atopic dermatitis.",
        "The atopy patch test is regarded as specific for patients with atopic dermatitis (AD).",
    )


def test_a_section_label_copied_into_a_generated_sentence_goes() -> None:
    """`biocite ask "What are the adverse effects of statins?" --mode generate` (2026-12-06) wrote "CONCLUSIONS:
    Pharmacokinetic differences in statins are ...", copying the label an abstract stored as plain text has inline
    (1 of 550 sentences of the saved held-out generate run). The sentence stays, without its label."""
    source = _evidence("1", "CONCLUSIONS: Pharmacokinetic differences in statins matter.")
    notes: list[str] = []
    (kept,) = polish([_sentence(source.span.text, source)], [source], notes)
    assert kept.text == "Pharmacokinetic differences in statins matter."
    assert kept.citations[0].pmid == "1" and "1 section labels removed" in notes[-1]


def test_a_sentence_asking_whether_is_not_restated_as_a_finding() -> None:
    """Held-out generate run 91-120 (2026-12-04): "This study investigates whether the public value safety-related
    health care improvements more highly ..." was written "This study found that the public value ...". What a
    study asked is not what it found: the sentence is dropped. A finding on the same words, asked or not, stays."""
    aim = _evidence("1", "This study investigates whether the public value safety improvements more highly.")
    found = _evidence("2", "The public valued safety improvements more highly than other improvements.")
    notes: list[str] = []
    written = [
        _sentence("This study found that the public value safety improvements more highly.", aim),
        _sentence("The public valued safety improvements more highly than other improvements.", found),
    ]
    kept = polish(written, [aim, found], notes)
    assert [s.text for s in kept] == [written[1].text]
    assert "1 questions as findings dropped" in notes[-1]
    assert question_as_finding(written[0].text, aim.span.text)
    assert not question_as_finding(
        "This study asked whether the public value safety improvements more.", aim.span.text
    )


def test_a_line_of_background_is_not_framed_as_the_studys_finding() -> None:
    """Asked "What are the side effects of statins?" (2026-12-05), the generator wrote "The study found that what
    is less well known is a phenomenon whereby statins may induce a myopathy ..." over a line of background: the
    frame goes. Over a sentence that reports a finding it stays."""
    background = _evidence(
        "1", "What is less well known is a phenomenon whereby statins may induce a myopathy.", answer=0.1
    )
    result = _evidence("2", "Creatine kinase levels were raised in 12 of 40 statin users.", answer=0.9)
    notes: list[str] = []
    written = [
        _sentence(
            "The study found that what is less well known is a phenomenon whereby statins may induce a myopathy.",
            background,
        ),
        _sentence(
            "The study found that creatine kinase levels were raised in 12 of 40 statin users.", result
        ),
    ]
    kept = polish(written, [background, result], notes)
    assert [s.text for s in kept] == [
        "What is less well known is a phenomenon whereby statins may induce a myopathy.",
        written[1].text,
    ]
    assert "1 finding frames removed" in notes[-1]


def test_a_sentence_with_details_none_of_its_cited_abstracts_has_is_dropped() -> None:
    """Held-out generate run 1-30 (2026-12-04): "Treatment preferences ... can be influenced by factors such as
    quality of life, fear of recurrence, and personal values." cited an abstract naming none of those. More than
    MAX_NEW_TERMS (2) content words absent from every cited abstract and the sentence goes; a paraphrase with
    one or two words of its own ("crucial" for "important"), numbers, hedges and reporting words stay."""
    abstract = (
        "Treatment preferences of patients with localized prostate cancer should be involved in decisions."
    )
    evidence = _evidence("1", abstract)
    terms = {"1": set(tokenize(abstract, stem=True))}

    def unseen(sentence: AnswerSentence) -> list[str]:
        return new_terms(sentence.text, set().union(*(terms[c.pmid] for c in sentence.citations)))

    invented = (
        "Treatment preferences can be influenced by factors such as fear of recurrence and personal values."
    )
    paraphrase = "The study suggests that treatment preferences of patients with localized prostate cancer may be crucial."
    notes: list[str] = []
    kept = polish(
        [_sentence(invented, evidence), _sentence(paraphrase, evidence)], [evidence], notes, None, unseen
    )
    assert [s.text for s in kept] == [paraphrase]
    assert new_terms(invented, terms["1"]) == ["factor", "fear", "influenc", "person", "recurr", "valu"]
    assert new_terms(paraphrase, terms["1"]) == ["crucial"]
    assert "its citations have none of factor, fear" in notes[0] and "1 new details dropped" in notes[-1]
    assert (
        polish([_sentence(invented, evidence)], [evidence], [], None, None)[0].text == invented
    )  # no abstracts


def test_a_copied_clause_of_a_longer_sentence_cites_the_abstract_it_copies() -> None:
    """`biocite ask "Does nivolumab plus ipilimumab improve overall survival in advanced melanoma?" --mode generate`
    (2026-12-02) wrote the clause "... durable, improved clinical outcomes with nivolumab plus ipilimumab or
    nivolumab versus ipilimumab ..." of CheckMate 067's 6.5-year sentence and cited a Japanese cohort: the copy
    check compared whole sentences both ways, and the source's other 20 words hid the copy."""
    checkmate = _evidence(
        "34818112",
        "These 6.5-year CheckMate 067 results, which include the longest median OS in a phase III melanoma trial "
        "reported to date and the first report of MSS, showed durable, improved clinical outcomes with nivolumab "
        "plus ipilimumab or nivolumab versus ipilimumab in patients with advanced melanoma and, in descriptive "
        "analyses, with the combination over nivolumab monotherapy.",
    )
    japan = _evidence(
        "32812243",
        "Long-term survival with nivolumab plus ipilimumab was observed in Japanese patients with melanoma "
        "including acral and mucosal subtypes, which is consistent with the CheckMate 067 study.",
    )
    written = (
        "Nivolumab plus ipilimumab is effective in achieving durable, improved clinical outcomes with nivolumab "
        "plus ipilimumab or nivolumab versus ipilimumab in patients with advanced melanoma."
    )
    kept = polish([_sentence(written, japan)], [japan, checkmate], [])
    assert [c.pmid for c in kept[0].citations] == ["34818112"]
    assert kept[0].citations[0].evidence == [checkmate]
    # a short sentence is no clause copy, and a clause its own quote holds stays cited to it
    assert copied_from("Nivolumab plus ipilimumab improved outcomes.", [checkmate]) is None
    both = _evidence("9", checkmate.span.text + " It was confirmed in Japan.")
    assert copied_from(written, [both, checkmate], [checkmate]) is checkmate
    # the same, behind a frame of agreement (what the LLM wrote): the frame goes, then the copy is found
    framed = "The studies agree that n" + written[1:]
    kept = polish([_sentence(framed, japan)], [japan, checkmate], [])
    assert [(s.text, [c.pmid for c in s.citations]) for s in kept] == [(written, ["34818112"])]
    # a framed copy of its own cited sentence loses the frame its source does not have
    real_world = _evidence(
        "37103470", "Ipilimumab plus nivolumab can achieve long-term survival in advanced melanoma."
    )
    agree = "The studies agree that ipilimumab plus nivolumab can achieve long-term survival in advanced melanoma."
    kept = polish([_sentence(agree, real_world)], [real_world, japan], [])
    assert [s.text for s in kept] == [real_world.span.text]


def test_a_copy_shown_beside_another_sentence_of_its_abstract_is_requoted() -> None:
    """Seen in `biocite ask "Does levodopa lower blood pressure in Parkinson's disease?" --mode generate`: the
    copy of one sentence cited its abstract with another sentence as the quote, so the quote did not say it."""
    effects = _evidence("1423336", "Antiparkinsonian effects were unchanged during the infusion.")
    hypotension = _evidence(
        "1423336", "Levodopa lowered blood pressure through a central hypotensive action."
    ).model_copy(update={"sentence_index": 4})
    copy = _sentence("Levodopa lowered blood pressure through a central hypotensive action.", effects)
    notes: list[str] = []
    kept = polish([copy], [effects, hypotension], notes)
    assert [[e.sentence_index for e in c.evidence] for c in kept[0].citations] == [[4]]
    assert "1 copy re-cited" in notes[0]
    # a copy shown with its own sentence (beside another of the abstract) keeps its citation
    both = AnswerSentence(
        text=copy.text, citations=[Citation(pmid="1423336", evidence=[effects, hypotension])]
    )
    assert polish([both], [effects, hypotension], [])[0].citations == both.citations


def test_a_finding_restated_in_a_reporting_frame_is_a_repeat() -> None:
    """Two restatements of one finding, each with its own reporting verb: 7 of 8 terms shared each way."""
    a = _evidence("1", "Levodopa lowered systolic blood pressure in parkinsonian patients.")
    shown = _sentence("The data show that levodopa lowered systolic pressure in parkinsonian patients.", a)
    suggested = _sentence(
        "The study suggests that levodopa lowered systolic pressure in parkinsonian patients.", a
    )
    notes: list[str] = []
    assert [s.text for s in polish([shown, suggested], [a], notes)] == [shown.text]
    assert "1 repeats dropped" in notes[0]
    # the restatement that says more (a time) replaces the framed one, where it stood
    more = _sentence("Levodopa lowered systolic pressure in parkinsonian patients after one hour.", a)
    assert [s.text for s in polish([shown, more], [a], [])] == [more.text]


def test_one_cited_abstract_makes_no_consensus_or_conflict() -> None:
    """Held-out generate run 61-90: "The studies agree that preoperative statin therapy reduces AF development
    after CABG." and "The studies disagree on the specific predictors of AF development after CABG." each cited
    the one CABG study."""
    a = _evidence("21881325", "Preoperative statin therapy reduces AF development after CABG.")
    b = _evidence("17020434", "Statins could lower recurrence after cardioversion.")
    agree = _sentence("The studies agree that preoperative statin therapy reduces AF after CABG surgery.", a)
    conflict = _sentence("The studies disagree on the specific predictors of AF development after CABG.", a)
    found = _sentence("The studies found a lower rate of AF after CABG with statins.", a)
    both = _sentence("The studies agree that statins lower the risk of atrial fibrillation.", a, b)
    notes: list[str] = []
    kept = polish([agree, conflict, found, both], [a, b], notes)
    assert [s.text for s in kept] == [
        "Preoperative statin therapy reduces AF after CABG surgery.",
        "The study found a lower rate of AF after CABG with statins.",
        both.text,  # two abstracts: a consensus may be stated
    ]
    assert "2 one-study frames reworded" in notes[0] and "1 one-study conflict dropped" in notes[0]
    # "studies have shown" over one abstract (held-out generate run 121-150): the frame goes, or the sentence
    literature = _sentence(
        "Studies have shown that preoperative statin therapy reduces AF after CABG surgery.", a
    )
    appeal = _sentence("Statins are advised after CABG, as studies have shown that they reduce AF.", a)
    kept = polish([literature, appeal], [a, b], [])
    assert [s.text for s in kept] == ["Preoperative statin therapy reduces AF after CABG surgery."]
    # a quote of an abstract that itself says so is left as written
    review = _evidence("1", "Both studies agree that early surgery lowers mortality in endocarditis.")
    quote = _sentence(review.span.text, review)
    assert [s.text for s in polish([quote], [review], [])] == [review.span.text]


@pytest.mark.parametrize(
    "text", ["The scale was validated, allowing the tenta", "overlap clinically and histologically,.", "Yes."]
)
def test_fragments_are_recognised(text: str) -> None:
    assert is_fragment(text)


def test_a_full_sentence_is_not_a_fragment() -> None:
    assert not is_fragment("Aspirin reduced recurrent stroke by 22% over two years.")


def test_repeated_definitions_are_dropped() -> None:
    a = _evidence("1", "Asthma is a chronic inflammatory disease of the airways.")
    first = _sentence("Asthma is a chronic disease of the airways.", a)
    second = _sentence("Asthma is a common airway disease in children.", a)
    assert [s.text for s in polish([first, second], [a], [])] == [first.text]


def test_a_sentence_another_one_holds_is_dropped_and_the_fuller_one_keeps_the_first_place() -> None:
    """Seen in `biocite ask "Is warfarin better than aspirin ...?" --mode generate`: the same finding twice,
    once without its restriction to high-risk patients."""
    a = _evidence(
        "1", "Overall, in high-risk patients, warfarin is superior to aspirin in preventing strokes."
    )
    b = _evidence("2", "Bleeding was more frequent with warfarin than with aspirin.")
    short = _sentence("Warfarin is superior to aspirin in preventing strokes.", a)
    other = _sentence("Bleeding was more frequent with warfarin than with aspirin.", b)
    full = _sentence(
        "Overall, in high-risk patients, warfarin is superior to aspirin in preventing strokes.", a
    )
    notes: list[str] = []
    assert [s.text for s in polish([short, other, full], [a, b], notes)] == [full.text, other.text]
    assert "1 repeats dropped" in notes[0]
    assert [s.text for s in polish([full, other, short], [a, b], [])] == [full.text, other.text]
    # sharing most words is not saying the same: both stay
    worse = _sentence(
        "Aspirin is inferior to warfarin in preventing strokes in atrial fibrillation trials.", a
    )
    assert len(polish([short, worse], [a], [])) == 2


def test_a_generated_yes_or_no_is_dropped_the_bottom_line_is_the_verdict_models() -> None:
    """The LLM restating the question with its own answer word ("Yes, this is a metabolic adaptation to
    pregnancy.", kept in a held-out generate run) is dropped; a finding that opens with "No" is not."""
    a = _evidence("1", "No significant difference in mortality was found between the two arms.")
    own = _sentence("Yes, this is a metabolic adaptation to pregnancy.", a)
    finding = _sentence("No significant difference in mortality was found between the two arms.", a)
    notes: list[str] = []
    assert [s.text for s in polish([own, finding], [a], notes)] == [finding.text]
    assert "1 own yes/no" in notes[0]


def test_rewritten_queries_may_not_state_facts_or_repeat() -> None:
    assert not acceptable_query("TAK-994 is developed for Parkinson's disease", [])
    assert not acceptable_query("vitamin D fractures older adults", ["older adults fractures vitamin D"])
    assert acceptable_query("TAK-994 orexin agonist narcolepsy", ["TAK-994 indication"])


def test_a_rewritten_query_keeps_each_part_once() -> None:
    repeated = "GFRUP recommendations in children; GFRUP recommendations in children ; children GFRUP recommendations"
    assert distinct_parts(repeated) == "GFRUP recommendations in children"
    assert (
        distinct_parts("statins myopathy; statin rhabdomyolysis") == "statins myopathy; statin rhabdomyolysis"
    )


def test_long_answer_overlap() -> None:
    assert overlaps_long_answer(
        "DBE appears to be equally safe.", "DBE appears to be equally safe. More text."
    )
    assert not overlaps_long_answer("Methods were standard.", "DBE appears to be equally safe.")


def test_findings_model_round_trip(tmp_path: Path) -> None:
    cues = cue_features("Mortality fell from 12% to 8% (p<0.01).", 5, 6, 0.4)
    assert len(cues) > 10 and cues[-1] == pytest.approx(0.4)
    dim = 4
    linear = LinearModel(
        kind="findings",
        version=FINDINGS_VERSION,
        labels=["other", "answer_bearing"],
        mean=[0.0] * dim,
        scale=[1.0] * dim,
        coef=[[1, -1, 0, 0]],
        intercept=[0.0],
        meta={"C": 0.05, "embedder": "minilm"},
    )
    FindingsModel(linear).save(tmp_path / "f.json")
    again = FindingsModel.load(tmp_path / "f.json")
    assert again is not None and again.embedder == "minilm"
    x = np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]], dtype=np.float32)
    p = again.probabilities(x)
    assert p[0] > 0.8 > 0.2 > p[1] and again.meta == {"C": 0.05, "embedder": "minilm"}


def test_an_old_layout_or_version_is_retrained_not_an_error(tmp_path: Path) -> None:
    """The findings and verdict files before biocite.heads.LinearModel (format 1) load as None: retrain."""
    old = {"artifact_version": 1, "embedder": "minilm", "dim": 1, "mean": [0], "scale": [1], "coef": [1]}
    (tmp_path / "f.json").write_text(json.dumps({**old, "intercept": 0.0}))
    assert FindingsModel.load(tmp_path / "f.json") is None
    (tmp_path / "v.json").write_text(json.dumps({**old, "labels": LABELS, "intercept": [0, 0, 0]}))
    assert VerdictModel.load(tmp_path / "v.json") is None
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ModelError):
        FindingsModel.load(tmp_path / "bad.json")


def test_verdict_model_learns_separable_labels_and_round_trips(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    centres = np.eye(3, 5) * 4
    y = np.repeat(np.arange(3), 30)
    x = (centres[y] + rng.normal(size=(90, 5))).astype(np.float32)
    VerdictModel(fit_verdict(x, y, c=1.0)).save(tmp_path / "v.json")
    model = VerdictModel.load(tmp_path / "v.json")
    assert model is not None
    probs = model.probabilities(x)
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert (probs.argmax(axis=1) == y).mean() > 0.9 and LABELS == ["yes", "no", "mixed"]


def test_verdict_features_read_negation_and_hedging_of_the_top_sentence() -> None:
    question = "Does metformin reduce body weight?"
    negative = evidence_features(question, ["Metformin did not reduce body weight (p=0.4)."], [0.9])
    positive = evidence_features(question, ["Metformin significantly reduced body weight."], [0.9])
    hedged = evidence_features(
        question, ["Metformin may reduce weight; further studies are warranted."], [0.9]
    )
    assert negative.shape == positive.shape == hedged.shape and not np.allclose(negative, positive)
    assert (
        evidence_features(question, [], []).shape == negative.shape and not hedged[-1]
    )  # question not negated


def test_llm_verdict_model_needs_the_llm_mass_and_uses_it(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    y = np.repeat(np.arange(3), 30)
    masses = [dict(zip(["yes", "no", "maybe"], np.eye(3)[k] * 0.9 + 0.03, strict=True)) for k in y]
    cues = evidence_features("Does it work?", ["It worked."], [1.0])
    x = np.vstack([np.hstack([cues + rng.normal(0, 0.01, cues.shape), llm_features(m)]) for m in masses])
    linear = fit_verdict(x.astype(np.float32), y, c=1.0)
    model = VerdictModel(linear.model_copy(update={"meta": {"llm": "qwen1.5b"}}))
    with pytest.raises(ValueError, match="qwen1.5b"):
        model.predict("Does it work?", ["It worked."], [1.0])
    assert model.predict("Does it work?", ["It worked."], [1.0], {"yes": 0.02, "no": 0.95})[0] == "no"
    assert model.predict("Does it work?", ["It worked."], [1.0], {"yes": 0.95, "no": 0.01})[0] == "yes"


def test_second_pick_names_the_asked_outcome_the_first_leaves_out() -> None:
    """The demo question: after the conclusion on symptom control, the severe-exacerbation result."""
    question = "Does as-needed budesonide-formoterol reduce severe exacerbations in mild asthma?"

    def scored(i: int, text: str, answer: float | None, rank: float) -> ScoredSentence:
        return ScoredSentence(
            Sentence(pmid="1", index=i, start=0, end=len(text), text=text), rank, 0.0, rank, answer
        )

    conclusion = scored(
        0, "In mild asthma, as-needed budesonide-formoterol improved symptom control.", 0.9, 0.8
    )
    exposure = scored(1, "Budesonide-formoterol resulted in lower glucocorticoid exposure.", 0.95, 0.7)
    severe = scored(
        2, "The annual rate of severe exacerbations was 0.07 with budesonide-formoterol.", 0.7, 0.6
    )
    methods = scored(3, "Severe exacerbations were recorded in a diary.", 0.1, 0.5)
    ranked = [conclusion, exposure, severe, methods]
    terms = content_terms(question)
    assert covering_picks(ranked, terms, 2) == [conclusion, severe]  # methods is not answer-bearing
    assert covering_picks(ranked, terms, 1) == [conclusion]
    no_model = [ScoredSentence(x.sentence, x.cosine, x.lexical, x.relevance, None) for x in ranked]
    assert covering_picks(no_model, terms, 2) == no_model[:2]  # without P(answer-bearing): rank order


def test_reading_order_groups_evidence_by_abstract_in_text_order() -> None:
    top = [("2", 5, "b5"), ("1", 3, "a3"), ("2", 1, "b1")]
    assert reading_order(top) == ["b1", "b5", "a3"]


def test_bottom_line_cites_the_first_evidence_and_survives_generate_guarantees() -> None:
    """Evidence comes best first (relevance, P(answer-bearing), the abstract's retrieval score); the bottom
    line cites the abstracts of the first three sentences, in that order, at most two, whatever their
    P(answer-bearing) alone says."""
    first = _evidence("2", "Rates fell by 30% with the asked drug.", 0.6)
    other = _evidence("1", "Another abstract's conclusion.", 0.95)
    third = _evidence("3", "A third abstract.", 0.9)
    line = bottom_line_sentence("yes", [first, other, third])
    assert line.kind == "bottom_line" and line.text.startswith("Bottom line: yes")
    assert [c.pmid for c in line.citations] == ["2", "1"]
    kept = enforce_guarantees([line], {"1", "2", "3"}, "generate", 0.5, [])
    assert kept == [line]
    assert bottom_line_sentence("no", [first], probability=0.8).text.startswith("Bottom line: no,")


def test_an_uncertain_verdict_is_said_to_be_uncertain() -> None:
    """Below 'likely' (0.66) the bottom line hedges and gives the probability; the verdict itself stays."""
    first = _evidence("2", "Vitamin C reduces the prevalence of complex regional pain syndrome.", 0.6)
    line = bottom_line_sentence("no", [first], probability=0.51)
    assert line.text == (
        "Bottom line: uncertain, leaning no (probability 0.51): the cited studies may not support it."
    )
    assert [c.pmid for c in line.citations] == ["2"]
    assert bottom_line_sentence("no", [first], probability=0.6592).text.startswith("Bottom line: no,")  # 0.66


class TokenDocs(FakeDocs):
    """The fake documents, plus the stored tokens coverage reads document frequencies from."""

    def iter_tokens(self) -> Iterator[tuple[str, list[str]]]:
        return ((p, tokenize(d.text, stem=True)) for p, d in self.docs.items())


class TokenDocsRetriever(FakeRetriever):
    def __init__(self, abstracts: dict[str, tuple[str, str]] = ABSTRACTS) -> None:
        super().__init__(abstracts)
        self.documents = TokenDocs(self.documents.docs)


def test_agent_answers_from_the_entity_asked_about_before_the_population_alone() -> None:
    """No abstract covers both CA19-9 and pancreatic cancer: the CA19-9 one is cited, saying pancreatic
    cancer is not covered, never the pancreatic cancer ones that do not mention CA19-9 as a full answer."""
    abstracts = {
        "501": ("CA19-9 in biliary obstruction", "Serum CA19-9 was raised in biliary obstruction and fell "
                "after drainage in all 40 patients."),
        "502": ("Pancreatic cancer surgery", "Resection of pancreatic cancer improved survival in 80 patients."),
        "503": ("Pancreatic cancer imaging", "CT staging of pancreatic cancer was accurate in 60 patients."),
        **{str(600 + i): (f"Filler {i}", f"Unrelated filler abstract number {i} on asthma.") for i in range(8)},
    }  # fmt: skip
    question = "Is CA19-9 useful in pancreatic cancer?"
    bars = ("agent.min_evidence=1", "agent.min_top_relevance=0.1", "agent.min_relevance=0.05")
    agent = Agent(agent_settings(*bars, "agent.max_subject_df=0.2"), retriever=TokenDocsRetriever(abstracts))
    answer = agent.ask(question, mode="extractive")
    assert not answer.abstained and answer.not_covered == ["pancreatic cancer"]
    assert {c.pmid for s in answer.sentences for c in s.citations} == {"501"}


def test_evidence_all_in_another_group_of_people_gives_no_verdict() -> None:
    """`Is ketamine sedation safe in adults?` (2026-12-07) had said "yes" from the trial in children, with only a
    caveat under it: adults are not covered, and the bottom line says so."""
    abstracts = {
        "901": ("Ketamine sedation in children", "Ketamine sedation was safe in 120 children aged 2 to 10 years "
                "having fractures reduced."),
        **{str(910 + i): (f"Filler {i}", f"Unrelated filler abstract number {i} on asthma.") for i in range(8)},
    }  # fmt: skip
    bars = ("agent.min_evidence=1", "agent.min_top_relevance=0.1", "agent.min_relevance=0.05")
    agent = Agent(agent_settings(*bars), retriever=TokenDocsRetriever(abstracts))
    answer = agent.ask("Is ketamine sedation safe in adults?", mode="extractive")
    assert not answer.abstained and answer.not_covered == ["adults"] and answer.verdict == "insufficient"
    assert answer.sentences[0].text.startswith(
        "Bottom line: not answered: none of the studies found mentions adults"
    )
    assert answer.caveats == ["every cited study is in children: none of them mentions adults"]
    in_children = agent.ask("Is ketamine sedation safe in children?", mode="extractive")
    assert in_children.not_covered == [] and in_children.caveats == []


STATIN_ABSTRACTS = {
    "701": ("Statin myopathy", "Statins caused a necrotizing myopathy of muscle fibres in 12 patients."),
    "702": ("Fluvastatin liver injury", "Fluvastatin caused acute liver injury with abdominal pain in one "
            "patient."),
    "703": ("Statins after surgery", "Statins lowered the rate of atrial fibrillation in 300 patients."),
    "704": ("Jaw muscle pain", "Capsaicin induced muscle pain in the jaw of 11 volunteers."),
    **{str(800 + i): (f"Filler {i}", f"Unrelated filler abstract number {i} on asthma.") for i in range(8)},
}  # fmt: skip
STATIN_SETTINGS = (
    "agent.min_evidence=1", "agent.min_top_relevance=0.1", "agent.min_relevance=0.05",
    "agent.max_subject_df=0.4", "agent.max_outcome_df=0.4",
)  # fmt: skip


def test_agent_answers_from_part_of_an_uncovered_outcome_never_from_its_common_word() -> None:
    """No statin abstract says "muscle pain": the myopathy one ("muscle") is cited with "not covered: muscle
    pain", never the liver-injury one for its "abdominal pain" (which covered the outcome until 2026-11-28)."""
    answer = Agent(agent_settings(*STATIN_SETTINGS), retriever=TokenDocsRetriever(STATIN_ABSTRACTS)).ask(
        "Do statins cause muscle pain?", mode="extractive"
    )
    assert not answer.abstained and answer.not_covered == ["muscle pain"]
    assert answer.verdict == "insufficient"
    assert {c.pmid for s in answer.sentences for c in s.citations} == {"701"}


def test_a_generated_sentence_naming_what_its_citations_lack_is_dropped() -> None:
    """`biocite ask "Do statins cause muscle pain?"` (2026-11-29): "not covered: muscle pain", then the LLM
    wrote "The mechanism of statin-induced muscle pain is uncertain ..." citing an abstract on myopathy, and
    the verifier kept it (0.95). A sentence that names a concept of the question its cited abstracts do not
    cover is dropped; the faithful one stays."""
    text = (
        "Statins caused muscle pain with a necrotizing myopathy of muscle fibres in 12 patients [1]. "
        "Statins caused a necrotizing myopathy of muscle fibres [1]."
    )
    agent = Agent(
        agent_settings(*STATIN_SETTINGS),
        retriever=TokenDocsRetriever(STATIN_ABSTRACTS),
        chat_model=fake_model(text),
        judge=overlap_judge,
    )
    answer = agent.ask("Do statins cause muscle pain?", mode="generate")
    assert answer.mode == "generate" and answer.not_covered == ["muscle pain"], answer.trace.notes
    texts = [s.text for s in answer.sentences if s.kind != "bottom_line"]
    assert texts == ["Statins caused a necrotizing myopathy of muscle fibres."]
    assert any("its citations do not mention muscle pain" in n for n in answer.trace.notes)
    assert any("1 uncited concept dropped" in n for n in answer.trace.notes)


def test_uncited_concepts_are_those_the_sentence_names_and_its_citations_lack() -> None:
    df = _df("statins", "muscle pain", "myopathy", n_other=20)
    concepts = key_concepts("Do statins cause muscle pain?", df, 0.1, 0.2)
    assert [c.text for c in concepts] == ["statins", "muscle pain"]
    sentence = "The mechanism of statin-induced muscle pain is uncertain."
    assert uncited_concepts(sentence, concepts, {"statins"}) == ["muscle pain"]
    assert uncited_concepts(sentence, concepts, {"statins", "muscle pain"}) == []
    assert uncited_concepts("Statins caused a myopathy.", concepts, {"statins"}) == []  # names no pain


def test_agent_abstains_naming_a_concept_no_indexed_abstract_mentions() -> None:
    settings = agent_settings("agent.max_concept_df=0.6")
    agent = Agent(settings, retriever=TokenDocsRetriever())
    answer = agent.ask("Does tirzepatide reduce hip fractures in older adults?", mode="extractive")
    assert answer.abstained and answer.not_covered == ["tirzepatide"]
    assert "no indexed abstract mentions 'tirzepatide'" in (answer.abstain_reason or "")
    assert answer.question_type == "yes/no" and answer.verdict == "insufficient"


def test_a_concept_partly_in_the_index_is_listed_as_not_covered_not_abstained_on() -> None:
    """'shockwave' is in no abstract, but 'metformin' of the same concept is: answer, naming the concept."""
    settings = agent_settings("agent.max_concept_df=0.6", "agent.min_evidence=1")
    agent = Agent(settings, retriever=TokenDocsRetriever())
    answer = agent.ask("Does shockwave metformin reduce body weight in type 2 diabetes?", mode="extractive")
    assert not answer.abstained and answer.not_covered == ["shockwave metformin"]
    assert answer.verdict == "insufficient"


def test_agent_says_what_is_not_covered_and_gives_no_verdict_for_another_entity() -> None:
    settings = agent_settings("agent.max_concept_df=0.6", "agent.min_evidence=1")
    agent = Agent(settings, retriever=TokenDocsRetriever())
    answer = agent.ask("Does vitamin K supplementation reduce hip fractures?", mode="extractive")
    assert not answer.abstained and answer.not_covered == ["vitamin K supplementation"]
    assert answer.verdict == "insufficient"
    assert answer.sentences[0].kind == "bottom_line" and "vitamin K" in answer.sentences[0].text


def test_concepts_are_judged_on_the_evidence_that_is_left() -> None:
    """A metformin abstract and a statin abstract each cover one concept; when only one keeps evidence
    (the relevance floor), the other concept is not covered: two abstracts never pool their concepts
    unless both are cited."""
    settings = agent_settings(
        "agent.max_concept_df=0.5",
        "agent.relevance_margin=0",
        "agent.min_evidence=1",
        "agent.min_top_relevance=0.3",
        "agent.min_relevance=0.05",  # all three abstracts keep evidence until the floor
    )
    answer = Agent(settings, retriever=TokenDocsRetriever()).ask(
        "Does metformin cause muscle pain?", mode="extractive"
    )
    cited = {c.pmid for s in answer.sentences for c in s.citations}
    assert not answer.abstained and len(answer.not_covered) == 1
    assert answer.not_covered == (["muscle pain"] if cited <= {"111", "444"} else ["metformin"])
    assert answer.verdict == "insufficient"


def test_agent_answers_when_every_concept_is_covered() -> None:
    settings = agent_settings("agent.max_concept_df=0.6", "agent.min_evidence=1")
    agent = Agent(settings, retriever=TokenDocsRetriever())
    answer = agent.ask("Does vitamin D supplementation reduce hip fractures?", mode="extractive")
    assert not answer.abstained and answer.not_covered == []
    assert {c.pmid for s in answer.sentences for c in s.citations} == {"333"}
    assert "333" in ABSTRACTS


def test_cli_rendering_shows_the_verdict_and_what_is_not_covered() -> None:
    from rich.console import Console

    from biocite.agent.render import render_answer
    from biocite.records import Answer

    console = Console(record=True, width=120)
    answer = Answer(question="q?", abstained=True, abstain_reason="no evidence", verdict="insufficient",
                    question_type="yes/no", not_covered=["tirzepatide"])  # fmt: skip
    render_answer(console, answer)
    text = console.export_text()
    assert "Verdict: insufficient" in text and "not covered by the evidence: tirzepatide" in text
    answer = Answer(question="q?", verdict="yes", verdict_probability=0.81, question_type="yes/no")
    reading = "read 'cirrotics' as 'cirrhotics': no indexed abstract has 'cirrotics'"
    answer.trace.notes, answer.readings = ["key concepts: cirrotics", reading], [reading]
    render_answer(console, answer)
    text = console.export_text()
    assert "Verdict: yes (probability 0.81)" in text and reading in text and "key concepts" not in text
    # below LIKELY the header says what the bottom-line sentence says: no bold "Verdict: no" over 0.47
    for verdict, p, shown in [("no", 0.465, "uncertain, leaning no"), ("mixed", 0.5, "uncertain, mixed"),
                              ("yes", 0.655, "yes")]:  # fmt: skip
        answer = Answer(question="q?", verdict=verdict, verdict_probability=p, question_type="yes/no")
        assert (
            answer.verdict_shown == shown and json.loads(answer.model_dump_json())["verdict_shown"] == shown
        )
        render_answer(console, answer)
        assert f"Verdict: {shown} (probability {p:.2f})" in console.export_text()


def test_a_typo_is_read_as_the_word_the_evidence_has() -> None:
    df = _df("hospitalized alcoholic cirrhotics with ascites", "lightening of the skin")
    concepts = key_concepts("Should ascites be drained in hospitalized alcoholic cirrotics?", df, 0.03)
    typo = concepts[-1]
    assert typo.text == "hospitalized alcoholic cirrotics" and typo.respelled == {"cirrot": ["cirrhot"]}
    evidence = Document(pmid="7", title="", abstract="Ascites volume was measured in 40 cirrhotics.")
    assert covers(typo, DocumentTerms.of(evidence))
    assert respelling_notes(concepts, {len(concepts) - 1}, [evidence]) == [
        "read 'cirrotics' as 'cirrhotics': no indexed abstract has 'cirrotics'"
    ]
    # the index has its respelling, so the agent does not say that no indexed abstract mentions 'cirrotics'
    alone = key_concepts("Is ascites drained in cirrotics?", df, 0.03)[-1]
    assert alone.terms == ["cirrot"] and not never_indexed(alone, df)
    # nor a word in British spelling whose American spelling it has
    british = key_concepts("Is haemolytic anaemia common?", _df("hemolytic anemia"), 0.03)[0]
    assert british.terms == ["haemolyt", "anaemia"] and not never_indexed(british, _df("hemolytic anemia"))
    assert never_indexed(key_concepts("Is xqzvrt safe?", df, 0.03)[0], df)


def test_a_real_word_the_corpus_lacks_is_not_read_as_a_neighbour() -> None:
    df = _df("lightening of the skin", "stage of the disease", "rewards")
    lightning = key_concepts("Do lightning strikes cause deficits?", df, 0.03)[0]
    assert lightning.respelled == {"lightn": ["lighten"]}  # one letter put back gives an index term...
    assert not covers(lightning, _doc("", "Neurological deficits after strikes were common."))  # ...not here
    # a changed letter is never tried: "stapes" -> "stage", "rewarming" -> "reward"
    assert all(not c.respelled for c in key_concepts("Is stapes surgery safe after rewarming?", df, 0.03))


def test_a_word_the_index_never_saw_is_read_as_the_evidence_writes_it() -> None:
    """PubMedQA questions are titles: "shockwave" and "cystoscopist" are written otherwise in the abstracts."""
    df = _df(
        "extracorporeal shock wave lithotripsy to clear stones", "cystoscopy by nurses", "chlorpropamide"
    )
    shockwave = key_concepts("Does extracorporeal shockwave lithotripsy clear stones?", df, 0.03)[0]
    assert shockwave.unseen == ["shockwave"]
    evidence = DocumentTerms("Shock wave lithotripsy cleared 80% of stones.")
    assert read_as(shockwave, evidence) == "shock wave" and covers(shockwave, evidence)
    nurse = key_concepts("Is the nurse cystoscopist a feasible option?", df, 0.03)[0]
    evidence = Document(pmid="9", title="", abstract="Nurses performed 200 flexible cystoscopies safely.")
    assert respelling_notes([nurse], {0}, [evidence]) == [
        "read 'cystoscopist' as 'cystoscopies': no indexed abstract has 'cystoscopist'"
    ]
    # a drug is never read as another drug with the same first letters
    drug = key_concepts("Does chlorpromazine lower glucose?", df, 0.03)[0]
    assert not covers(drug, _doc("", "Chlorpropamide lowered fasting glucose in chlorpropamide users."))
    assert derivational_core("chlorpromazine") is None and derivational_core("spherocytosis") == "spherocyt"


def test_a_name_with_a_number_is_read_as_written_with_a_roman_numeral() -> None:
    """`biocite ask "Can HTLV-1 cause cervical myelopathy?"` (2026-12-07) said "no indexed abstract mentions
    'HTLV-1'" over an abstract on HTLV-I myelopathy: "HTLV-I" is indexed as "HTLV" (the "I" is a stop word)."""
    df = _df("cervical myelopathy with HTLV-I infection", "HIV-1 infection")
    htlv = key_concepts("Can HTLV-1 cause cervical myelopathy?", df, 0.5)[0]
    assert htlv.unseen == ["htlv-1"] and not never_indexed(htlv, df)
    abstract = Document(
        pmid="9", title="", abstract="Myelopathy with HTLV-I infection: a variant form of HAM/TSP."
    )
    assert covers(htlv, DocumentTerms.of(abstract))
    assert respelling_notes([htlv], {0}, [abstract]) == [
        "read 'HTLV-1' as 'HTLV-I': no indexed abstract has 'HTLV-1'"
    ]
    assert not covers(htlv, DocumentTerms("Myelopathy with HTLV-II infection."))  # another virus
    assert never_indexed(
        key_concepts("Does HTLV-3 cause myelopathy?", _df("myelopathy"), 0.5)[0], _df("myelopathy")
    )


def test_a_prefixed_word_the_index_never_saw_is_read_as_its_base() -> None:
    """ "autorefraction" is the abstract's "refraction"; a prefix written apart ("peri-sinusoidal") is no term."""
    df = _df("cycloplegic refraction in adults", "perisinusoidal cells", "refraction")
    auto = key_concepts("Is cycloplegic autorefraction mandatory?", df, 0.03)[0]
    assert auto.unseen == ["autorefraction"]
    evidence = DocumentTerms("Cycloplegic refraction was measured with an auto-refractor.")
    assert read_as(auto, evidence) == "refraction" and covers(auto, evidence)
    assert not covers(auto, DocumentTerms("Cycloplegic drops were given."))  # the base must be there
    peri = key_concepts("Does surgery change peri-sinusoidal cell activity?", df, 0.03)[-1]
    assert peri.terms[0] == "sinusoid" and "peri" not in peri.terms
    assert covers(peri, DocumentTerms("Activity of perisinusoidal cells rose after surgery."))
    assert prefix_base("microelement") == "element" and prefix_base("antigen") is None
    trans = key_concepts("Do trans fats raise cholesterol?", _df("trans fats", "fats"), 0.5)[0]
    assert trans.terms[0] == "tran"  # a prefix that is a word of its own stays a term


def test_a_people_is_covered_by_its_country() -> None:
    """ "Thai women" are the women of a study in Thailand; a language is no country ("English" / "England")."""
    df = _df("laparotomy in Thailand", "ovarian carcinoma")
    thai = key_concepts("Is second-look laparotomy useful in Thai women?", df, 0.03, 0.0, 1.0)[-1]
    assert covers(thai, _doc("", "Women treated in Thailand for ovarian carcinoma."))
    england = key_concepts("Is laparotomy useful in England?", df, 0.03, 0.0, 1.0)[-1]
    assert not covers(england, _doc("", "English-language reports of laparotomy."))


def test_the_verb_after_we_or_you_is_no_concept() -> None:
    """ "Are we seeing the effects ...?" said "not covered: seeing"; what comes after the verb is the subject."""
    df = _df("public awareness campaigns", "tidal volume", "manual resuscitator")
    seeing = key_concepts("Are we seeing the effects of public awareness campaigns?", df, 0.5, 0.5, 0.5, 0.5)
    assert "seeing" not in [w.casefold() for c in seeing for w in c.words]
    deliver = key_concepts(
        "Can you deliver accurate tidal volume by manual resuscitator?", df, 0.5, 0.5, 0.5, 0.5
    )
    assert "deliver" not in [w.casefold() for c in deliver for w in c.words]
    assert asked_subject("Can you deliver accurate tidal volume?") == "tidal volume"


def test_british_and_american_spellings_cover_each_other() -> None:
    df = _df("esophageal cancer and aspirin", "oesophageal cancer")
    esophageal = key_concepts("Does aspirin prevent esophageal cancer?", df, 0.03)[-1]
    assert esophageal.terms[0] == "esophag"
    assert covers(esophageal, _doc("", "Aspirin use lowered the risk of oesophageal adenocarcinoma."))
    assert not covers(esophageal, _doc("", "Aspirin use lowered the risk of gastric adenocarcinoma."))
    spelt = {w: american_spelling(w) for w in ("haemolyt", "diarrhoea", "tumour", "randomis", "doe", "four")}
    assert spelt == {"haemolyt": "hemolyt", "diarrhoea": "diarrhea", "tumour": "tumor", "randomis": "randomiz",
                     "doe": "doe", "four": "four"}  # fmt: skip


def test_verdict_reads_the_abstract_of_the_first_evidence_sentence() -> None:
    """Not that of the most answer-bearing sentence: any abstract's conclusion reads answer-bearing, and the
    best-ranked sentence also weighs its abstract's retrieval score (bench/agent_retrieval_weight.py)."""
    from biocite.agent.evidence import to_evidence

    class Findings:  # every sentence of 444 reads answer-bearing, the rest less so
        def score(
            self, question: str, sentences: list[Sentence], counts: list[int], encoder: object
        ) -> np.ndarray:
            return np.array([0.9 if s.pmid == "444" else 0.3 for s in sentences])

    agent = Agent(agent_settings(), retriever=FakeRetriever())
    agent._loaded.add("findings")
    agent._findings = Findings()  # type: ignore[assignment]
    hits = agent._with_documents(agent.retriever.search("metformin body weight"))
    docs, sentences = agent._documents(hits)
    evidence = [
        to_evidence(sentences["111"][0], docs["111"], set(), 0.8, answer=0.3),
        to_evidence(sentences["444"][0], docs["444"], set(), 0.6, answer=0.95),
    ]
    top, weights = agent._verdict_evidence("Does metformin reduce body weight?", evidence, hits)
    assert {e.pmid for e in top} == {"111"} and len(top) == len(weights) == 3


class _Reader:
    """A verdict head that says what it was given (routing only: which head reads the bottom line)."""

    def __init__(self, verdict: str) -> None:
        self.verdict = verdict

    def predict(self, question, texts, weights, llm_mass=None):  # type: ignore[no-untyped-def]
        return self.verdict, 0.9, {}


@pytest.mark.parametrize("setting, expected", [("generate", "yes"), ("always", "no")])
def test_the_llm_reads_the_extractive_bottom_line_only_when_asked(
    monkeypatch: pytest.MonkeyPatch, setting: str, expected: str
) -> None:
    """`agent.llm_verdict=always`: extractive answers keep their verbatim quotes, and the LLM's head reads the
    bottom line as in generate mode; by default extractive mode never calls the LLM."""
    calls: list[str] = []

    def mass(self, question, top):  # type: ignore[no-untyped-def]
        calls.append(question)
        return {"yes": 0.02, "no": 0.95}

    monkeypatch.setattr(Agent, "verdict_model", property(lambda self: _Reader("yes")))
    monkeypatch.setattr(Agent, "llm_verdict_model", property(lambda self: _Reader("no")))
    monkeypatch.setattr(Agent, "_verdict_mass", mass)
    settings = agent_settings("agent.min_evidence=1", f"agent.llm_verdict={setting}")
    answer = Agent(settings, retriever=FakeRetriever()).ask(
        "Does metformin reduce body weight in type 2 diabetes?", mode="extractive"
    )
    assert answer.mode == "extractive" and answer.verdict == expected
    assert len(calls) == (setting == "always")
    quotes = [s.text for s in answer.sentences if s.kind != "bottom_line"]
    assert quotes and all(any(q in abstract for _, abstract in ABSTRACTS.values()) for q in quotes)


class _LastSentencesRead:
    """A findings stub: later sentences of an abstract read as slightly more answer-bearing (a review's
    closing sentences), too little to change which evidence leads."""

    def score(self, question, sentences, counts, encode):  # type: ignore[no-untyped-def]
        return np.array([0.5 + 0.01 * s.index for s in sentences], dtype=np.float32)


class _TextsSeen(_Reader):
    def predict(self, question, texts, weights, llm_mass=None):  # type: ignore[no-untyped-def]
        self.texts = list(texts)
        return super().predict(question, texts, weights, llm_mass)


def _ask_one_abstract(
    monkeypatch: pytest.MonkeyPatch, title: str, abstract: str, question: str, verdict: str
) -> tuple[Answer, _TextsSeen]:
    """The extractive answer to `question` from one abstract among fillers, the findings stub reading later
    sentences as more answer-bearing, and the verdict head that saw what it was given."""
    abstracts = {
        "901": (title, abstract),
        **{
            str(950 + i): (f"Filler {i}", f"Unrelated filler abstract number {i} on asthma.")
            for i in range(8)
        },
    }
    reader = _TextsSeen(verdict)
    monkeypatch.setattr(Agent, "findings", property(lambda self: _LastSentencesRead()))
    monkeypatch.setattr(Agent, "verdict_model", property(lambda self: reader))
    bars = ("agent.min_evidence=1", "agent.min_top_relevance=0.1", "agent.min_relevance=0.05")
    agent = Agent(agent_settings(*bars, "agent.max_subject_df=0.2"), retriever=TokenDocsRetriever(abstracts))
    return agent.ask(question, mode="extractive"), reader


def test_the_verdict_reads_the_lead_sentence_when_the_top_ones_name_nothing_asked_about(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`biocite ask "Does warfarin prevent stroke in atrial fibrillation?"` (2026-11-29) answered "no" (0.77):
    the verdict read a review's three closing sentences (statins, ACE inhibitors, appendage closure), not its
    warfarin finding, which the answer quoted first. The lead sentence now replaces the third when it names an
    entity asked about that none of them names."""
    review = (
        "Warfarin lowered the rate of stroke by 64% in atrial fibrillation. Aspirin was less effective. "
        "Statins may reduce recurrence after cardioversion. ACE inhibitors hold promise in remodelling. "
        "Closure of the left atrial appendage is under investigation."
    )
    answer, reader = _ask_one_abstract(
        monkeypatch,
        "Stroke prevention in atrial fibrillation",
        review,
        "Does warfarin prevent stroke in atrial fibrillation?",
        "yes",
    )
    assert answer.sentences[1].text.startswith("Warfarin lowered")  # the lead evidence, quoted first
    assert reader.texts == [
        "Closure of the left atrial appendage is under investigation.",
        "ACE inhibitors hold promise in remodelling.",
        "Warfarin lowered the rate of stroke by 64% in atrial fibrillation.",
    ]


def test_the_bottom_line_quotes_the_sentences_the_verdict_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """`biocite ask "Does exercise improve depression symptoms?"` (2026-12-01) said "no" (0.79), read from a
    trial's null result, above quotes of its subgroup's benefit and another study's improvement: the bottom
    line quoted the answer's first evidence sentences, not what the verdict read. It now quotes those, at the
    abstract's own offsets, so the reader can check the verdict."""
    trial = (
        "Exercise lowered depression scores in a subgroup of inactive women. "
        "Depression did not differ between the exercise and control groups. "
        "Exercise during pregnancy did not reduce postnatal depression."
    )
    answer, reader = _ask_one_abstract(
        monkeypatch,
        "Exercise and postnatal depression",
        trial,
        "Does exercise improve postnatal depression?",
        "no",
    )
    line = answer.sentences[0]
    assert line.kind == "bottom_line" and line.text.startswith("Bottom line: no")
    quoted = [e for c in line.citations for e in c.evidence]
    assert [e.span.text for e in quoted] == reader.texts  # what the verdict read, best first
    assert reader.texts[0] == "Exercise during pregnancy did not reduce postnatal depression."
    assert all(trial[e.span.start : e.span.end] == e.span.text for e in quoted)
    assert [c.pmid for c in line.citations] == ["901"]


def test_the_verdict_never_reads_a_funding_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """`make demo` (2026-12-02): the bottom line of the README's question quoted "(Funded by AstraZeneca;
    SYGMA 1 ClinicalTrials.gov number, NCT02149199 .)." first: the findings model reads an abstract's closing
    sentences as answer-bearing, and the verdict read all of them, metadata included."""
    trial = (
        "Budesonide-formoterol as needed lowered severe exacerbations by 64%. "
        "Symptom control was better with maintenance therapy. "
        "(Funded by AstraZeneca; SYGMA 1 trial number, NCT02149199)."  # the fakes split at every period
    )
    answer, reader = _ask_one_abstract(
        monkeypatch,
        "As-needed budesonide-formoterol",
        trial,
        "Does budesonide-formoterol reduce exacerbations?",
        "yes",
    )
    assert reader.texts and not any("Funded" in t for t in reader.texts), reader.texts
    quoted = [e.span.text for c in answer.sentences[0].citations for e in c.evidence]
    assert answer.sentences[0].kind == "bottom_line" and not any("Funded" in q for q in quoted)


SAFETY_ABSTRACTS = {
    # an IVF trial's efficacy nulls: the verdict had read them as "no, not safe" (2026-12-02)
    "efficacy only": (
        "There was no difference in live birth rates between metformin and placebo during IVF. "
        "There appears to be no benefit in metformin co-treatment during pregnancy attempts.",
        "insufficient",
    ),
    "harms reported": (
        "Metformin during pregnancy did not increase the rate of major malformations. "
        "Adverse events were similar with metformin and insulin in pregnancy.",
        "no",  # what the (stub) verdict head said: the rule leaves it alone
    ),
}


@pytest.mark.parametrize(("abstract", "expected"), SAFETY_ABSTRACTS.values(), ids=SAFETY_ABSTRACTS)
def test_a_safety_question_gets_a_bottom_line_only_from_evidence_on_harms(
    monkeypatch: pytest.MonkeyPatch, abstract: str, expected: str
) -> None:
    """`biocite ask "Is metformin safe during pregnancy?"` said "no, the cited studies do not support it"
    from a trial finding no benefit of metformin in IVF: a finding on benefit says nothing of safety. A safety
    question whose evidence names no harm (adverse events, complications, malformations, risk ...) gets no
    bottom line: the verdict is insufficient, harms are listed as not covered (the first sentence says so, as for
    any concept not covered), and a note says why."""
    answer, _ = _ask_one_abstract(
        monkeypatch, "Metformin in pregnancy", abstract, "Is metformin safe during pregnancy?", "no"
    )
    assert answer.verdict == expected
    line = answer.sentences[0]
    assert line.kind == "bottom_line"
    unanswered = expected == "insufficient"
    assert (
        line.text.startswith("Bottom line: not answered: none of the studies found mentions harms")
        == unanswered
    )
    assert answer.not_covered == ([HARMS] if unanswered else [])
    noted = any("no bottom line on safety" in n for n in answer.trace.notes)
    assert noted == unanswered


def test_asks_about_safety_reads_the_question_after_a_titles_colon() -> None:
    assert asks_about_safety("Is metformin safe during pregnancy?")
    assert asks_about_safety("Therapeutic anticoagulation in the trauma patient: is it safe?")
    assert asks_about_safety("Is Chaalia/Pan Masala harmful for health?")
    assert not asks_about_safety(
        "Comparative safety of infliximab and etanercept: does the association vary?"
    )
    assert not asks_about_safety("Does metformin reduce body weight?")
    assert asks_about_safety("Is it safe to take ibuprofen with lisinopril?")
    assert asks_about_safety("Esophagogastric devascularization in portal hypertension: safe and effective?")
    assert not asks_about_safety("Is unsafe sexual behaviour increasing among HIV-infected individuals?")
    # harms asked in other words; knowing of side effects, or predicting an adverse outcome, is not
    assert asks_about_safety("Were there more adverse events with as-needed budesonide-formoterol?")
    assert asks_about_safety("Does metformin cause side effects?")
    assert asks_about_safety("Is semaglutide well tolerated?")
    assert not asks_about_safety("Are physicians aware of the side effects of ACE inhibitors?")
    assert not asks_about_safety("Doppler examination in early pregnancy: can it predict adverse outcome?")
    assert speaks_of_harm(["Adverse events were rare."]) and speaks_of_harm(
        ["No major complications occurred."]
    )
    assert not speaks_of_harm(["There was no benefit of metformin on live birth rates."])


def test_a_question_of_which_harms_is_a_question_of_harms() -> None:
    for question in (
        "What are side effects of using formoterol?",
        "What are the side effects of opdivo treatment for melanoma?",
        "How about the adverse events?",
        "Which adverse reactions were reported with semaglutide?",
        "Is metformin safe during pregnancy?",  # and every safety question
        # chat follow-ups of harms: they keep the drug and people of the question before
        "What about its safety?",
        "How about toxicity?",
        "What is the hepatotoxicity of isoniazid?",
    ):
        assert asks_of_harms(question), question
    for question in (
        "Are physicians aware of the side effects of ACE inhibitors?",
        "What are the possible complications for a person that has yellow fever?",  # a disease's course
        # harms asked second, after the treatments: the evidence must not be cut to harms alone
        "What are some of the treatments prescribed for myoclonus and their possible side effects?",
        "What is the effect of metformin on HbA1c?",
        "What is the risk of stroke after a transient ischaemic attack?",  # an outcome's risk, not a harm
    ):
        assert not asks_of_harms(question), question
    assert speaks_of_harm(["Statin-induced hepatotoxicity was rare."])
    assert speaks_of_harm(["Statins may initiate an immune-mediated myopathy."])


def test_a_question_of_harms_keeps_the_evidence_on_harms() -> None:
    """`biocite ask "What are side effects of using formoterol?"` quoted budesonide-formoterol's symptom control
    and glucocorticoid exposure; "Does metformin cause side effects in type 2 diabetes?" read "yes" from
    "metformin significantly improves diabetes clinical indicators", quoted beside a sentence on tolerability."""
    efficacy = _evidence("1", "Metformin significantly improves diabetes clinical indicators.")
    harms = _evidence("1", "Adverse events were similar with metformin and placebo.")
    assert on_harms([efficacy, harms]) == [harms]
    assert on_harms([efficacy]) == [efficacy]  # none on harms: the evidence stands
    methods = _evidence("1", "3836 were included in the full analysis and safety data sets.")
    assert on_harms([efficacy, methods]) == [efficacy, methods]


def test_a_concept_is_shown_as_the_question_writes_it() -> None:
    """Asked by hand (2026-12-02): "not covered: type diabetes" and "Crohn disease": the terms leave out
    numbers and possessives, and so did the label the user reads."""
    df = _df("coffee", "type 2 diabetes", "Crohn's disease", *["risk"] * 10, n_other=20)
    coffee = key_concepts("Does coffee reduce the risk of type 2 diabetes?", df, 0.1, 0.2)
    assert [(c.text, c.label) for c in coffee] == [
        ("coffee", "coffee"),
        ("type 2 diabetes", "type 2 diabetes"),
    ]
    _, crohn = key_concepts("Is smoking a risk for Crohn's disease?", df, 0.1, 0.2)
    assert (crohn.text, crohn.label) == ("Crohn disease", "Crohn's disease")


def test_a_concept_is_shown_with_the_of_phrase_that_completes_it() -> None:
    df = _df("exercise training heart failure", *["duration of sleep"] * 10)  # common words: no key concepts
    concepts = key_concepts(
        "Does exercise training improve duration of sleep in heart failure?", df, 0.03, 0.2
    )
    outcome = next(c for c in concepts if c.outcome)
    assert (
        outcome.text == "duration" and outcome.label == "duration of sleep"
    )  # what is checked stays the same
    # an "of" phrase whose word is a concept of its own is not glued on
    concepts = key_concepts("Is the severity of psoriasis linked to obesity?", _df("psoriasis obesity"), 0.03)
    assert all(" of " not in c.label for c in concepts)


def test_quality_of_life_is_one_outcome_checked_as_a_phrase() -> None:
    """Cut at "of", "quality of life" was the outcome "quality": "a high-quality usual care system" covered it."""
    df = _df(
        "exercise training heart failure", *["quality of life"] * 10
    )  # common words, yet a named outcome
    concepts = key_concepts("Does exercise training improve quality of life in heart failure?", df, 0.03, 0.2)
    (asked,) = [c for c in concepts if c.place == "outcome"]
    assert (asked.text, asked.terms) == ("quality of life", ["quality of life"])
    assert not covers(asked, _doc("Telephone counseling", "Compared with a high-quality usual care system."))
    assert covers(asked, _doc("Exercise training", "Health-related quality-of-life scores improved."))
    dyspnoea = key_concepts("Do opioids relieve shortness of breath?", _df("opioids"), 0.03, 0.2)
    assert [c.text for c in dyspnoea] == ["opioids", "shortness of breath"]
    # "alternative" alone is a generic word ("an alternative to surgery"), "alternative medicine" a named field
    cam = key_concepts("Do adults with chronic illness use alternative medicine more?", _df("x"), 0.03)
    assert [c.text for c in cam] == ["chronic illness", "alternative medicine"]
    written = _doc(
        "", "Use of complementary and alternative medicine (CAM) by adults with chronic disease rose."
    )
    assert all(covers(c, written) for c in cam)
    (whole,) = key_concepts("Has the use of complementary and alternative medicine risen?", _df("x"), 0.03)
    assert whole.text == "complementary and alternative medicine"


def _fillers(n: int) -> dict[str, tuple[str, str]]:
    """`n` abstracts on nothing asked about, so that the asked concepts are rare in the fake index."""
    return {
        str(800 + i): (f"Filler {i}", f"Unrelated filler abstract number {i} on asthma.") for i in range(n)
    }


def _corpus_abstracts(*pmids: str) -> dict[str, tuple[str, str]]:
    """These abstracts of the embedded corpus, as (title, abstract)."""
    rows = (json.loads(line) for line in (DATA / "corpus" / "abstracts.jsonl").open())
    return {r["pmid"]: (r["title"], r["abstract"]) for r in rows if r["pmid"] in pmids}


def test_an_abstract_naming_the_subject_in_passing_gives_only_its_sentences_that_name_it() -> None:
    """`biocite ask --mode extractive "Does tamoxifen increase the risk of endometrial cancer?"` (2026-12-01)
    quoted a raloxifene trial's results ("Raloxifene did not increase risk for ... endometrial cancer"): its
    abstract covers "tamoxifen" through one objective sentence. Such an abstract now gives only evidence naming
    the subject; one naming it in its title keeps its other sentences."""
    treated = "Endometrial cancer risk rose threefold in the treated women (95% CI 2 to 5)."
    abstracts = {
        **_corpus_abstracts("9579567", "15458908", "9672273"),
        "990": ("Tamoxifen and the endometrium", f"{treated} Tamoxifen was given for five years."),
        **_fillers(30),
    }
    bars = ("agent.min_evidence=1", "agent.min_top_relevance=0.1", "agent.min_relevance=0.05")
    agent = Agent(
        agent_settings(*bars, "agent.max_subject_df=0.2", "agent.evidence_per_doc=4", "agent.max_words=400"),
        retriever=TokenDocsRetriever(abstracts),
    )
    answer = agent.ask("Does tamoxifen increase the risk of endometrial cancer?", mode="extractive")
    quoted = [(c.pmid, e.span.text) for s in answer.sentences for c in s.citations for e in c.evidence]
    assert [t for p, t in quoted if p == "15458908"] == []  # none of its evidence names tamoxifen
    assert ("990", treated) in quoted
    assert any(n.startswith("PMID 15458908 names tamoxifen only in passing") for n in answer.trace.notes)


class _MethodsRead:
    """A findings stub: a sentence saying what was studied is no finding, the others are."""

    def score(self, question, sentences, counts, encode):  # type: ignore[no-untyped-def]
        return np.array([0.2 if "studied" in s.text else 0.9 for s in sentences], dtype=np.float32)


def test_no_verdict_from_an_abstract_that_names_the_asked_drug_only_in_passing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`biocite ask "Is apixaban better than warfarin in atrial fibrillation?"` (2026-12-06) said "yes (0.68)":
    the only abstract found studies the persistence of NOACs as a class and lists apixaban once among them. Its
    findings are not about apixaban: the verdict is insufficient, and the bottom line says why."""
    noacs = (  # PMID 26702312 (data/pubmed_xml/medline16n0902.xml.gz), shortened
        "Persistence of non-vitamin K antagonist oral anticoagulant use in Japanese patients with atrial fibrillation",
        "The aim of this study is to evaluate NOAC and warfarin persistence in Japanese patients with NVAF. "
        "We retrospectively studied 401 patients with NVAF who had newly started NOACs (197 dabigatran, 107 "
        "rivaroxaban, 102 apixaban) and 200 patients with atrial fibrillation who had newly started warfarin. "
        "The persistence rates of patients prescribed NOACs was lower than that of patients prescribed warfarin. "
        "The rate of persistence of prescribed NOACs was significantly lower than that of warfarin in Japanese "
        "patients with atrial fibrillation.",
    )
    abstracts = {"26702312": noacs, **_fillers(30)}
    monkeypatch.setattr(Agent, "verdict_model", property(lambda self: _TextsSeen("yes")))
    monkeypatch.setattr(Agent, "findings", property(lambda self: _MethodsRead()))
    bars = ("agent.min_evidence=1", "agent.min_top_relevance=0.1", "agent.min_relevance=0.05")
    agent = Agent(
        agent_settings(*bars, "agent.max_subject_df=0.2", "agent.evidence_per_doc=4"),
        retriever=TokenDocsRetriever(abstracts),
    )
    answer = agent.ask("Is apixaban better than warfarin in atrial fibrillation?", mode="extractive")
    assert answer.verdict == "insufficient", answer.trace.notes
    line = answer.sentences[0]
    assert line.kind == "bottom_line" and "name apixaban only in passing" in line.text
    assert "no bottom line: PMID 26702312 names apixaban only in passing" in answer.trace.notes


def test_an_abstention_after_the_in_passing_filter_does_not_say_nothing_was_relevant() -> None:
    """With only the raloxifene trial indexed, its four relevant sentences are all dropped for not naming
    tamoxifen: the reason said "no sentence cleared relevance", which was untrue."""
    abstracts = {**_corpus_abstracts("15458908"), **_fillers(30)}
    bars = ("agent.min_evidence=1", "agent.min_top_relevance=0.1", "agent.min_relevance=0.05")
    agent = Agent(
        agent_settings(*bars, "agent.max_subject_df=0.2", "agent.evidence_per_doc=4"),
        retriever=TokenDocsRetriever(abstracts),
    )
    answer = agent.ask("Does tamoxifen increase the risk of endometrial cancer?", mode="extractive")
    assert answer.abstained and not answer.sentences
    reason = answer.abstain_reason or ""
    assert (
        "4 sentences cleared relevance 0.05, but none names 'tamoxifen', which the abstracts found mention only "
        "in passing" in reason
    ), reason
    assert "no sentence cleared" not in reason
    assert answer.not_covered == []  # it was "tamoxifen; endometrial cancer", though the abstract names both


def test_a_study_on_parkinsonian_patients_answers_for_parkinsons_disease() -> None:
    """`biocite ask "Does levodopa lower blood pressure in Parkinson's disease?"` (2026-12-01): the study of
    levodopa's hypotensive effect "in parkinsonian patients" (1423336) ranked below dyskinesia studies that say
    "Parkinson's disease", and the answer said "not covered: blood pressure"."""
    abstracts = {**_corpus_abstracts("1423336", "1549199", "458486", "23952588"), **_fillers(30)}
    bars = ("agent.min_evidence=1", "agent.min_top_relevance=0.1", "agent.min_relevance=0.05")
    agent = Agent(agent_settings(*bars, "agent.max_subject_df=0.2"), retriever=TokenDocsRetriever(abstracts))
    answer = agent.ask("Does levodopa lower blood pressure in Parkinson's disease?", mode="extractive")
    assert answer.not_covered == []
    assert "1423336" in {c.pmid for s in answer.sentences for c in s.citations}


def test_a_drug_asked_by_its_british_name_is_answered_from_abstracts_using_the_american_one() -> None:
    """`biocite ask "Does ciclosporin cause hypertension?"` (2026-12-01) abstained: "no indexed abstract mentions
    'ciclosporin'"; the index has 19 abstracts on cyclosporine (spelt "cyclosporin A" in 9889429)."""
    abstracts = {**_corpus_abstracts("9889429", "8312343"), **_fillers(30)}
    bars = ("agent.min_evidence=1", "agent.min_top_relevance=0.1", "agent.min_relevance=0.05")
    agent = Agent(agent_settings(*bars, "agent.max_subject_df=0.2"), retriever=TokenDocsRetriever(abstracts))
    answer = agent.ask("Does ciclosporin cause hypertension?", mode="extractive")
    assert not answer.abstained and answer.not_covered == []
    assert "9889429" in answer.cited_pmids
    assert [r for r in answer.readings if r.endswith("another name of the same drug")] == [
        "read 'ciclosporin' as 'cyclosporine', another name of the same drug"  # as 8312343 writes it
    ]


def test_a_note_each_round_repeats_is_said_once() -> None:
    """`biocite ask --trace` printed "key concepts: ..." once per retrieval round; the trace now says it once."""
    abstracts = {
        **_corpus_abstracts("9579567", "9672273"),
        **_fillers(30),
    }
    settings = agent_settings("agent.min_top_relevance=0.95", "agent.max_subject_df=0.2")  # thin: two rounds
    agent = Agent(settings, retriever=TokenDocsRetriever(abstracts))
    answer = agent.ask("Does tamoxifen increase the risk of endometrial cancer?", mode="extractive")
    assert answer.trace.rounds == 2
    assert [n for n in answer.trace.notes if n.startswith("key concepts")] == [
        "key concepts: tamoxifen (subject); endometrial cancer (outcome)"
    ]


def test_evidence_relevance_counts_a_drugs_other_name_as_the_asked_term() -> None:
    """A lidocaine trial's sentence matches "lignocaine" as well as "lidocaine" (it scored below the bar)."""
    names = asked_names("Does lignocaine cause heart attacks?")
    terms = content_terms("Does lignocaine cause heart attacks?")
    text = "Lidocaine caused myocardial infarction in two patients."
    assert lexical_overlap(terms, text, names) == 1.0
    assert lexical_overlap(terms, text) == 0.25  # without the names: "cause" alone
    assert lexical_overlap(terms, "Bupivacaine caused heart failure.", names) == 0.5  # "cause", "heart"
    # either spelling: the albuterol study's "Symptomatic hypokalemia did not occur." answers the British question
    question = "Does salbutamol cause hypokalaemia?"
    found = lexical_overlap(content_terms(question), "Albuterol caused hypokalemia.", asked_names(question))
    assert found == 1.0


def test_agent_drops_another_abstract_that_lacks_a_topic_the_lead_names() -> None:
    """Held-out answers quoted abstracts on another condition beside their lead (prostate biopsy for breast-lesion
    biopsy: "breast" is too common for a key concept): an abstract lacking a topic concept the lead abstract names
    is dropped, noted in the trace; with `agent.max_topic_df=0` it is quoted."""
    abstracts = {
        "851": ("Palliative radiotherapy of lung cancer", "In palliative lung cancer patients, high-dose "
                "radiotherapy gave no survival benefit over 25 Gy in 5 fractions."),
        "852": ("Radiotherapy dose in prostate cancer", "High-dose radiotherapy gave a survival benefit in "
                "prostate cancer patients."),
        **{str(860 + i): (f"Filler {i}", f"Unrelated filler abstract number {i} on asthma.") for i in range(8)},
    }  # fmt: skip
    question = "Does high-dose radiotherapy benefit palliative lung cancer patients?"
    bars = ("agent.min_evidence=1", "agent.min_top_relevance=0.1", "agent.min_relevance=0.05")

    def cited(topic_bar: float) -> tuple[set[str], list[str]]:
        settings = agent_settings(*bars, f"agent.max_topic_df={topic_bar}")
        answer = Agent(settings, retriever=TokenDocsRetriever(abstracts)).ask(question, mode="extractive")
        return {c.pmid for s in answer.sentences for c in s.citations}, answer.trace.notes

    pmids, notes = cited(0.0)
    assert pmids == {"851", "852"}
    pmids, notes = cited(0.3)
    assert pmids == {"851"}
    assert any(n.startswith("PMID 852 does not mention palliative") and "(PMID 851)" in n for n in notes)


def test_another_abstract_adding_a_topic_the_lead_lacks_stays() -> None:
    """ "why statin taken at bedtime?" (K-QA): a bedtime-lovastatin trial lacks the lead's "statin" (it writes
    "lovastatin") but names "bedtime", which the fluvastatin lead never does, so it stays; an abstract adding
    nothing is dropped, naming what it lacks."""
    df = _df(
        "statins liver injury", "bedtime lovastatin dosing", "drugs taken daily", "pills taken", n_other=20
    )
    topics = key_concepts("why statin taken at bedtime?", df, 0.3, 0.3, 0.3, 0.3)
    lead = _doc("Fluvastatin liver injury", "Statins caused liver injury in one patient.")
    bedtime = _doc("Bedtime lovastatin", "Bedtime lovastatin dosing was safe in 4,499 patients.")
    other = _doc("Lovastatin and cholesterol", "Lovastatin lowered cholesterol in 40 patients.")
    assert off_topic(topics, [], lead, bedtime, df) == []
    assert [c.text for c in off_topic(topics, [], lead, other, df)] == ["statin"]  # "taken" is a verb


def test_another_abstract_adding_a_commoner_topic_than_it_lacks_is_dropped() -> None:
    """Held-out, "Does high-dose radiotherapy benefit palliative lung cancer patients?": the lead writes
    "radiation", so a prostate-radiotherapy abstract adds "radiotherapy"; it still lacks "palliative", rarer in
    the index, and is dropped. What an abstract adds keeps it only when as specific as what it lacks."""
    df = _df(
        "palliative lung cancer radiation",
        *(
            f"high dose radiotherapy benefit of {site} cancer"
            for site in ("prostate", "rectal", "breast", "cervical")
        ),
        n_other=40,
    )
    question = "Does high-dose radiotherapy benefit palliative lung cancer patients?"
    topics = key_concepts(question, df, 0.2, 0.2, 0.2, 0.2)
    radiotherapy, palliative = (
        next(c for c in topics if c.text.endswith(w)) for w in ("radiotherapy", "cancer")
    )
    assert specificity(palliative, df) < specificity(radiotherapy, df)
    lead = _doc("Palliative lung cancer", "A 25 Gy radiation course sufficed in palliative lung cancer.")
    prostate = _doc("Prostate cancer", "Patients preferred the lower radiotherapy dose in prostate cancer.")
    assert [c.text for c in off_topic(topics, [], lead, prostate, df)] == ["palliative lung cancer"]


class _FindingReads:
    """A findings stub: the sentence that says "not modified" is the one answer-bearing sentence."""

    def score(self, question, sentences, counts, encode):  # type: ignore[no-untyped-def]
        return np.array([0.9 if "not modified" in s.text else 0.05 for s in sentences], dtype=np.float32)


@pytest.mark.parametrize("lend", [True, False])
def test_a_strong_abstract_lends_its_relevance_to_its_finding(
    monkeypatch: pytest.MonkeyPatch, lend: bool
) -> None:
    """Held-out, "Could the extent of lymphadenectomy be modified by neoadjuvant chemotherapy in cervical
    cancer?": the abstract's answer, "... LNM are not modified by NACT", shares too few words with the question
    to reach the relevance bar, and the answer quoted the abstract's aim. A finding of an abstract whose best
    sentence clears `agent.min_top_relevance` counts as relevant as that sentence less the relevance margin, so
    it is quoted, first."""
    abstracts = {
        "901": ("Lymphadenectomy after neoadjuvant chemotherapy in cervical cancer", (
            "We asked whether the extent of lymphadenectomy could be modified by neoadjuvant chemotherapy in "
            "cervical cancer. Two hundred women were enrolled. The frequency and topographic distribution of "
            "LNM are not modified by NACT.")),
        **{str(950 + i): (f"Filler {i}", f"Unrelated filler abstract number {i} on asthma.") for i in range(8)},
    }  # fmt: skip
    monkeypatch.setattr(Agent, "findings", property(lambda self: _FindingReads()))
    monkeypatch.setattr(Agent, "verdict_model", property(lambda self: _Reader("no")))
    lending = (f"agent.lend_relevance={str(lend).lower()}", "agent.relevance_margin=0.2")
    settings = agent_settings("agent.min_evidence=1", *lending)
    answer = Agent(settings, retriever=TokenDocsRetriever(abstracts)).ask(
        "Could the extent of lymphadenectomy be modified by neoadjuvant chemotherapy in cervical cancer?",
        mode="extractive",
    )
    quotes = [s.text for s in answer.sentences if s.kind != "bottom_line"]
    finding = "The frequency and topographic distribution of LNM are not modified by NACT."
    assert quotes and (quotes[0] == finding) == lend and (finding in quotes) == lend


def test_a_keyword_line_lends_no_relevance(monkeypatch: pytest.MonkeyPatch) -> None:
    """An abstract whose only sentence near the question is its keyword list is not a strong abstract: metadata
    is never evidence, so it lends nothing, and the finding worded otherwise stays below the bar."""
    abstracts = {
        "902": ("Nodal spread in cervical cancer", (
            "Two hundred women were enrolled. The frequency and topographic distribution of LNM are not "
            "modified by NACT. Keywords: extent of lymphadenectomy; neoadjuvant chemotherapy; cervical cancer.")),
        **{str(960 + i): (f"Filler {i}", f"Unrelated filler abstract number {i} on asthma.") for i in range(8)},
    }  # fmt: skip
    monkeypatch.setattr(Agent, "findings", property(lambda self: _FindingReads()))
    monkeypatch.setattr(Agent, "verdict_model", property(lambda self: _Reader("no")))
    settings = agent_settings(
        "agent.min_evidence=1", "agent.lend_relevance=true", "agent.relevance_margin=0.2"
    )
    answer = Agent(settings, retriever=TokenDocsRetriever(abstracts)).ask(
        "Could the extent of lymphadenectomy be modified by neoadjuvant chemotherapy in cervical cancer?",
        mode="extractive",
    )
    quotes = [s.text for s in answer.sentences if s.kind != "bottom_line"]
    assert not any("not modified by NACT" in q for q in quotes)
