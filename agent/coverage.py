"""Entity coverage (issue 12): the question's key concepts must be in the evidence; never substitute one.

Key concepts come from the question alone, without NLP models: the question is cut into chunks at stop
words, question words and generic words of question templates ("does", "effect", "reduce", "patients",
"safe"); a chunk is a concept when it has at least one *specific* term, a term in at most
`max_df_share` of the indexed documents (IDF from the index; a term absent from the index is the most
specific of all). A single letter is glued to the word before it ("vitamin D", "T cell"), and such a
compound must occur as a phrase; numbers are skipped.

The asked outcome ("prevent | fractures", "reduce the risk of | falls", "associated with | lactic
acidosis") is a concept with a looser bar: the first chunk after an outcome verb or an association is an
*outcome concept* when it has a term in at most `max_outcome_df_share` of the documents, although no term is
rare enough for a key concept. Without it a common outcome is never checked, and "Does vitamin D prevent
fractures?" was answered with vitamin D sentences about T cells.

The entity asked about and the population or condition are concepts too, with bars of their own: the
*subject* (the first chunk after the question's opening word: "Does | aspirin prevent ...", "Is there
evidence that | statins ...") when it has a term in at most `max_subject_df_share` of the documents, and the
*setting* (each chunk after "in", "among", "after", "before", "during" or "with": "... in | oesophageal
cancer", "in the management of | nasopharyngeal carcinoma", "agranulocytosis with | clozapine", "stopped
before | surgery", but not "during | the day"; after "for" when it names a
disease or an age group or sex: "an antibiotic for | sinusitis", not "for | primary prevention") within
`max_setting_df_share`.
Both are covered as key concepts (by the rarest term). Without them "Does aspirin prevent colorectal cancer?"
(aspirin in 22 of 5,136 abstracts, far above the key-concept bar) was answered "yes" from colorectal cancer
abstracts that never mention aspirin, and a question on oesophageal cancer from ovarian, lung and sarcoma
abstracts. Both bars are fitted on TRAIN questions against swapped subjects and settings
(bench/agent_concepts.py). A patient's question is spoken, not titled: the opening word must open the question or one of its sentences ("I have gout and ...", "Back
pain could be ..." name no subject after "have" or "could"), counts and dosage forms are not the entity
("how many pills of | ibuprofen", "a steroid | cream", "something like | Ambien"), nor is what is asked about
it ("the side effects of | statins", "overexpression of | Ki-67"), and "in addition", "in order to", "in fact"
name no setting (bench/agent_expert_roles.py reads the K-QA and BioGen questions).

A concept is covered by an abstract (title, text and MeSH headings) when its rarest specific term occurs there (stems, as
BM25 sees them; compounds as phrases), or when its initials do ("chronic obstructive pulmonary disease" ->
"COPD"; not those of statistics: "CI" is no "caffeine intake"), or when the abbreviation the question defines
for it in parentheses does, or the words it stands for ("type 2 diabetes mellitus (T2DM)": either name;
`defined_abbreviations`, Schwartz and Hearst's test); a time horizon of a follow-up ("long term") when its words
are there as one phrase;
an outcome concept when all of its terms occur: the asked outcome is the whole phrase, and "muscle pain" is
not "abdominal pain" (a fluvastatin liver-injury abstract answered "Do statins cause muscle pain?") nor
"muscle fibres". An organ's Latin adjective and its English name are one term ("hepatic fibrosis" is
covered by "liver fibrosis", `ORGAN_WORDS`), and so are the words of one age group ("older" and "elderly",
`AGE_WORDS`), and so are a drug's international and United States names ("paracetamol" and
"acetaminophen", `biocite.other_names`), and a country and its people ("Thai" women of a study in "Thailand",
`PLACE_WORDS`), and a condition's names ("heart attack" is covered by "myocardial
infarction", "acute kidney injury" by "acute renal failure"). A letter compound is a phrase whatever its
inflection ("grades C" is covered by "grade C"), and a letter hyphened to the next word belongs to that word
("high-sensitivity C-reactive protein" is about "C reactive", not "sensitivity C").
`max_df_share`, `max_outcome_df_share`, `max_subject_df_share` and `max_setting_df_share` are fitted on the
TRAIN questions (bench/agent_concepts.py).

A question word the index has never seen may be a typo ("cirrotics"). Its respellings are the index
terms with a letter it dropped put back or two letters it swapped swapped back (`biocite.tokenize.respellings`,
which search adds to the BM25 query too); the concept
is covered by an abstract that has one of them, so a typo is read in the context of the evidence found for
the question (a real word the corpus lacks, "lightning", is not read as "lightening" unless the evidence
says "lightening"), and the agent says how it read the word. Such a word may also be written otherwise in
the evidence: as two words ("shockwave": "shock wave", "underrecognised": "under-recognised") or with
another derivational ending of the same stem ("spherocytosis": "spherocytic", "cystoscopist":
"cystoscopy"). PubMedQA questions are their papers' titles, and a title word the abstract writes otherwise
made the agent abstain on answerable questions (9 of 300 TRAIN questions have a word the index never saw).
A prefixed word is read as its base ("autorefraction": "refraction", "microelement": "elements";
`PREFIXES`, not "re-" or "co-": "rewarming" is no "warming"), and a prefix the question hyphens is no term of
its own ("peri-sinusoidal" is covered by "perisinusoidal").
Drug-name endings (-ine, -ide, -ate, -mab) are not derivational endings here: a new drug is never read as
an old one.

Words of conversation ("okay", "anything", "someone", "doesnt", "yesterday") are never part of a concept:
patients' questions are written as they speak, and such words, rare in abstracts, passed the rarity bar
(50 of the 296 K-QA and BioGen questions had one; bench/agent_concepts.py lists them). Nor is the verb after
"we", "you" or "they" ("are we | seeing the effects of ...", "can you | deliver ...": "not covered: seeing"),
and "in vivo" / "in vitro" name a method, not a setting.

British and American spellings of a term cover each other ("oesophageal" / "esophageal", "anaemia" /
"anemia", "tumour" / "tumor", "randomised" / "randomized"): expert questions are mostly written in one,
abstracts in both, and the rarest-term rule would otherwise drop an abstract on the asked disease for its
spelling. The mapping (`biocite.tokenize.american_spelling`, which search uses too) merges 129 groups of the
embedded corpus's terms, every one a British/American pair (bench/agent_concepts.py prints them).

What distinguishes one condition from its neighbour is asked too, although the rarest-term rule would not ask
for it: a designator ("type 1 diabetes", "stage III": `designators`) must be named as such, and a qualified
word ("acute kidney injury") is not covered by an abstract that writes it only with the opposite qualifier
("chronic kidney disease": `opposites`); a chunk with such a qualifier is a concept of its own. So is a qualifier
written after its word ("methicillin-susceptible" is not covered by an abstract on methicillin-resistant strains
only; "HIV-negative" not by HIV-positive).
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Literal

from biocite import other_names
from biocite.abbreviations import definitions
from biocite.agent import designators, opposites
from biocite.other_names import shadowed
from biocite.populations import AXES, mentions_animals, other_population, studied_in_animals
from biocite.records import Document, Evidence
from biocite.tokenize import STOPWORDS, american_spelling, compound_parts, respellings, tokenize

# Words of question templates and generic outcome words: they never make a concept on their own.
GENERIC = frozenset(
    tokenize(
        """effect effects role impact use useful usefulness associated association associations relationship
        relation related link linked reduce reduces reduced reduction improve improves improved increase increases
        decrease decreases predict predicts predictive predictor affect affects influence influences cause
        causes prevent prevents lead leads change changes differ difference differences correlate
        correlation exist exists work works help helps matter benefit benefits benefit require requires need
        needed necessary safe safety effective effectiveness efficacy efficacious beneficial reliable
        reliability accurate accuracy valid validity better worse higher lower more less good poor
        harder easier safer riskier fewer enough chance chances instead
        outcome outcomes patient patients people person persons individuals subject subjects study studies
        trial trials evidence treatment treatments therapy risk risks factor factors level levels rate
        rates value values really truly actually any compared comparison versus among adults adult case
        cases clinical important importance possible predicting reducing improving increasing
        affecting causing preventing necessary true false new old current recent well best appropriate
        indicated indication warranted justified worth feasible acceptable amenable alternative option options
        role associated related different same similar significant significantly relevant value future due
        always ever even first time place choice mandatory worthwhile routine routinely adequate optimal decade
        decades contribution contributions""",
        stem=True,
    )
)
# Words of conversation, not of the asked entity: patients' questions (K-QA, BioGen) are written as they speak,
# and these words, rare in abstracts, passed the rarity bar as key concepts ("not covered: 'okay'",
# "'someone'", "'timeframe'", "'suddenly'" of "side effects for suddenly stopping metoprolol"), so the agent
# abstained on them. Contractions are as the tokenizer writes them.
CONVERSATIONAL = frozenset(
    tokenize(
        """thing things something anything everything nothing someone somebody anyone anybody everyone
        everybody stuff ok okay alright maybe pretty bit lot lots kind sort anyway really just still though
        dont doesnt didnt isnt arent wasnt werent wont wouldnt cant couldnt shouldnt havent hasnt ive im
        id youd youre youve theyre thats whats tell told say said think thought believe wonder wondering
        guess ask asked asking mean means meaning go going gone got getting rid throw trouble
        today tonight tomorrow yesterday meantime timeframe ago wife husband son daughter mom dad kid kids
        friend boyfriend girlfriend prescribe prescribed prescribing mention mentioned verify happen happens
        happened done exactly example examples reason reasons way ways feeling looking doctor doctors pt
        bad main miss supposed fear wean pick turn turned quit breathe stop medicine medicines med meds generally
        suggest suggests recommend recommends suddenly abruptly
        tricky odd weird strange concerned worried along last later afterwards afterward eventually nowadays
        anymore soon sooner idea ideas problem problems""",
        stem=True,
    )
)
# Words that count, compare or name a dosage form: they sit at the head of a patient's subject ("how | many
# pills of | ibuprofen", "something | like | Ambien", "a steroid | cream") and, rare in abstracts, became the
# required word of a subject ("not covered: many pills") where the entity is the drug. So do words of how often:
# "How common is | brain metastasis ...?" had the subject "common", and the entity went unchecked.
QUANTITIES_AND_FORMS = frozenset(
    tokenize(
        """common frequent frequently often prevalent rare usual typical sometimes occasionally usually
        many much some most every various two three four five six seven eight nine ten once twice like unlike
        besides pill pills tablet tablets capsule capsules cream creams ointment ointments lotion lotions spray
        sprays prescription prescriptions""",
        stem=True,
    )
)
# Words that name what is asked *about* an entity, not the entity: "What are the | side effects of | statins?",
# "the | management of | X", "Is | overexpression of | Ki-67 ...", "Does | pretreatment with | statins ...". As
# the entity's head they became the required word ("not covered: side") and the entity went unchecked, so a
# statin question was answered from a heparin abstract. Read off expert questions and TRAIN false misses.
ASPECTS = frozenset(
    tokenize(
        """side adverse complication complications symptom symptoms sign signs mechanism mechanisms dose doses
        dosage dosages contraindication contraindications interaction interactions prognosis management
        etiology etiologic aetiology aetiologic pathophysiology expression overexpression presence absence
        pretreatment condition conditions connection incidence frequency occurrence outlook""",
        stem=True,
    )
)
# Verbs of research questions: they end a noun phrase ("... pulmonary disease | shorten | survival").
VERBS = frozenset(
    tokenize(
        """shorten shortens prolong prolongs predispose predisposes protect protects induce induces alter alters
        modify modifies enhance enhances impair impairs worsen worsens promote promotes inhibit inhibits
        trigger triggers accelerate accelerates delay delays extend extends lower lowers raise raises treat
        treats detect detects diagnose diagnoses identify identifies exceed exceeds outperform outperforms
        replace replaces mediate mediates modulate modulates regulate regulates contribute contributes
        explain explains determine determines indicate indicates reflect reflects represent represents
        remain remains occur occurs appear appears seem seems become becomes make makes take takes give
        gives get gets want wants know knows teach teach understand understands show shows compare compares
        respond responds receive receives undergo undergoes achieve achieves allow allows provide provides
        result results depend depends vary varies play plays decline declines agree agrees
        continue continues offer offers meet meets elucidate elucidates confound confounds compromise compromises
        put puts took taken given cure cures approve approves approved eat eats swallow swallows pierce pierced
        reconsider reconsiders rely relies avoid avoids start starts begin begins move moves wait waits remove
        removes catch catches caught carry carries carrying carried let lets letting bring brings brought decide
        decides find finds finding pay pays paid keep keeps kept keeping call calls called calling send sends sent
        rise rises risen invade invades invading invaded""",
        stem=True,
    )
)
# Verbs whose object is the asked outcome: "Does X prevent | fractures?"
OUTCOME_VERBS = frozenset(
    tokenize(
        """reduce reduces reduced prevent prevents improve improves increase increases decrease decreases
        affect affects predict predicts influence influences cause causes lower lowers raise raises worsen
        worsens shorten shortens prolong prolongs protect protects induce induces delay delays lead leads""",
        stem=True,
    )
)
# More verbs of effect, as written (not stems: "accelerated partial breast radiation", "contrast-enhanced" and
# "Attenuation of ..." name no outcome): they end a chunk and name the outcome. "Does acupuncture relieve
# chronic low back pain?" was one chunk, and a study of acupuncture for vocal fold lesions answered it "yes".
# A test's target condition is named so too: "Is ultrasound accurate for diagnosing | appendicitis?" was
# answered from ultrasound studies of fractures and penile cancer ("appendicitis", in 4 abstracts, is above the
# key-concept bar); not "diagnosed with | X" nor "detected in | X", which name the population. Words of harm
# do too: "Does cyclophosphamide harm | the bladder?" had the subject "cyclophosphamide harm", "Is acetaminophen
# toxic to | the liver?" "acetaminophen toxic", and "Is quinine in tonic water dangerous?" the setting "tonic
# water dangerous". "Can lipid emulsion reverse bupivacaine cardiotoxicity?" had one subject of five words.
EFFECT_VERBS = frozenset(
    """relieve relieves alleviate alleviates ameliorate ameliorates attenuate attenuates ease eases suppress
    suppresses exacerbate exacerbates aggravate aggravates mitigate mitigates minimize minimizes minimise
    minimises boost boosts restore restores stimulate stimulates eliminate eliminates enhance enhances promote
    promotes inhibit inhibits trigger triggers accelerate accelerates impair impairs extend extends predispose
    predisposes treat treats cure cures diagnose diagnoses diagnosing detect detects detecting harm harms
    damage damages injure injures hurt hurts kill kills toxic harmful dangerous reverse reverses provoke provokes
    precipitate precipitates""".split()
)
# ... and phrasal ones: "Can stress bring on | a heart attack?" had no concept (each one word, `PHRASAL_VERBS`)
EFFECT_VERBS |= {f"{form} on" for form in ("bring", "brings", "brought", "bringing")}
# Effect verbs that are nouns too: after a word of the asked outcome (or of a chunk of no role) they are its head
# ("Do statins cause muscle | damage?" had the outcome "muscle"); after the entity asked about or the setting,
# the verb ("Does smoking | damage the lungs?", "Does hyperfiltration in pregnancy | damage the kidney?").
EFFECT_NOUNS = frozenset({"damage", "harm"})

# An organ's poison names the outcome by itself: "Is vinorelbine cardiotoxic?" had the subject "vinorelbine
# cardiotoxic", and "hepatotoxic", "nephrotoxic", "ototoxic" are so too.
TOXIC = "toxic"

# An association names its outcome as an outcome verb does, when its link word follows: "Is metformin
# associated with | lactic acidosis?", "linked to | X", "correlate with | Y", "a risk factor for | Z". Not
# "HIV-related | salivary gland disease" (no link word). "lactic acidosis" was checked by no bar, and hepatotoxicity
# and nephrotoxicity abstracts on metformin answered "leaning yes".
ASSOCIATION_LINKS = {
    **dict.fromkeys("associated linked related correlated correlate correlates".split(), {"with", "to"}),
    **dict.fromkeys(["factor", "factors"], {"for", "of"}),
}


# "an association between A and | B": B is the outcome, as after "associated with". "Is there an association
# between sleep duration and obesity in children?" had no concept "obesity", and a study of sex differences in
# sleep answered it "leaning yes".
ASSOCIATION_NOUNS = frozenset(
    "association associations link links relationship relationships relation relations correlation connection".split()
)


def _names_association(words: list[str], i: int) -> bool:
    """Whether words[i] opens an association whose object follows: "associated with", "risk factor for"."""
    links = ASSOCIATION_LINKS.get(words[i].casefold(), set())
    return i + 1 < len(words) and words[i + 1].casefold() in links


# "at risk of | seizures" names its outcome as an outcome verb does, and so do "heal" before its object and "have
# more | X": "Are newborns at risk of seizures from isoniazid?" had the concept "newborns" alone, and a study of
# lithium in pregnancy answered it; "Does H. pylori treatment heal stomach ulcers?" had no concept "stomach ulcers";
# "Do IVF mothers have more caesareans?" none but "IVF mothers", and a study of placental mosaicism answered it. Not
# "heal" without its object ("How long does a cornea injury take to heal without medical attention?").
HAVE = frozenset("have has had get gets got".split())
MORE_OR_LESS = frozenset("more fewer less".split())


def _names_outcome_by_phrase(words: list[str], i: int) -> bool:
    """Whether words[i] is the "risk" of "risk of X", the "heal" of "heal X" or the "more" of "have more X"."""
    low, after = words[i].casefold(), words[i + 1].casefold() if i + 1 < len(words) else ""
    before = words[i - 1].casefold() if i > 0 else ""
    return (
        (low in ("risk", "risks") and after == "of")
        or (low in ("heal", "heals") and bool(after) and after not in STOPWORDS)
        or (low in MORE_OR_LESS and before in HAVE)
    )


def _opens_association_between(words: list[str], i: int) -> bool:
    """Whether words[i] is the "between" of "an association between A and B"."""
    return words[i].casefold() == "between" and i > 0 and words[i - 1].casefold() in ASSOCIATION_NOUNS


# "Does smoking make | psoriasis | worse?": the causative names its outcome as an outcome verb does ("worsen").
CAUSATIVES = frozenset("make makes made".split())
CAUSED_STATES = frozenset("worse better".split())


def _names_causative(words: list[str], i: int) -> bool:
    """Whether words[i] is "make" with "worse" or "better" later in the question: "make X worse"."""
    return words[i].casefold() in CAUSATIVES and any(w.casefold() in CAUSED_STATES for w in words[i + 1 :])


def asks_association(question: str) -> bool:
    """Whether the question asks about an association ("Is X associated with Y?", "a risk factor for Z")."""
    words = _question_words(question)
    return any(_names_association(words, i) for i in range(len(words)))


# Prepositions that name the population or condition asked about: "in | oesophageal cancer", "among | HMO women",
# "after | myocardial infarction" (beta blockers in sepsis had answered for it), and what goes with the entity:
# "patients with | eclampsia", "the risk of agranulocytosis with | clozapine" (a fluconazole case report answered
# it: "clozapine" was checked by no bar), "interact with | warfarin"; and the time of the question's setting, as
# "after": "before | surgery" (an abstract on beta-blockers in sepsis answered "Should beta-blockers be stopped
# before surgery?"), "during | pregnancy".
SETTING_PREPOSITIONS = frozenset({"in", "among", "amongst", "after", "before", "during", "with", "for"})
# "for" names the condition treated ("an antibiotic for | sinusitis", "statins for | heart failure"), the people
# ("safe for | children") or a purpose ("for | primary prevention", "the lithotripter for | the ureter"): its
# chunk is a setting only when one of its words names a disease (by its ending or as a disease noun) or an age
# group or sex.
CONDITION_PREPOSITION = "for"
CONDITION_ENDINGS = tuple(
    "itis osis iasis emia aemia oma omas pathy pathies algia plasia penia megaly uria rrhea rrhoea thyroidism "
    "gonadism".split()
)
NOT_CONDITIONS = frozenset("diagnosis prognosis stoma".split())
# Diseases by their usual abbreviation too ("What about COPD?" after an asthma question asks of another
# condition), of those no English word shares ("AIDS", "MS", "RA", "ALL" do).
CONDITION_NOUNS = frozenset(
    """cancer cancers carcinoma disease diseases syndrome syndromes disorder disorders infection infections
    injury injuries failure fracture fractures tumor tumors tumour tumours stroke diabetes asthma hypertension
    sepsis obesity depression dementia ulcer ulcers pneumonia infarction lesions deficiency insufficiency
    dysfunction hernia palsy abscess aneurysm arrhythmia fibrillation pain schizophrenia autism epilepsy
    migraine eczema acne gout malaria influenza hemorrhage haemorrhage seizures leukemia leukaemia anemia
    anaemia trauma attack attacks copd ckd aki ards adhd ptsd ocd gerd gord ibd ibs sle nafld nash masld hiv uti
    utis dvt chf osa pcos bph crps gdm t2dm t1dm hcc nsclc sclc cll aml cml""".split()
)
# The pending roles a preposition does not replace when no chunk came between: "decrease in | mortality" still
# names the outcome, "Does pretreatment with | statins" and "Is there a role for | leukocyte counts" the subject
# (by default only the outcome stays).
_GOES_ON = {"with": {"outcome", "subject"}, "for": {"outcome", "subject"}}
# ... but the outcome goes on across "with" only right after the word that opened it ("associated with | X",
# "help with | pain"): "Do patients get fewer side effects with | apixaban?" and "Does apixaban reduce side effects
# with | aspirin?" had the outcome "apixaban" and "aspirin"; the words between named the outcome, and "with" the
# setting.
_NEXT_TO_ITS_OPENER = frozenset({"with"})
# "women who had | IVF", "teens who vape": the relative clause names the people's condition or exposure, as "with"
# does. "Do women who had IVF have more caesareans?" had no concept "IVF" (too common a word for a concept of no
# role) and was answered from studies of caesareans in general.
RELATIVE_PRONOUNS = frozenset({"who"})
# The words of an age group or a sex ("for | children", "for | pregnant women"): a population, as after "in". An
# age compared ("And for younger patients?" after a question in the elderly) names one too.
POPULATION_WORDS = frozenset(
    word for axis in ("age", "sex") for group in AXES[axis].values() for words in group for word in words
) | {"young", "younger"}


def _lows(words: list[str]) -> list[str]:
    """A chunk's words, casefolded, a compound's parts apart ("vitamin D")."""
    return [w.casefold() for part in words for w in part.split()]


# States that make a population of women, as pregnancy does (a `POPULATION_WORDS` word): "What about
# breastfeeding?" after "Is metformin safe during pregnancy?" asks of metformin in breastfeeding women; read as
# another entity, it had replaced metformin.
MATERNAL_STATES = frozenset(
    "breastfeeding breastfed lactation lactating postpartum puerperium puerperal".split()
)


def names_people(words: list[str]) -> bool:
    """Whether a word of the chunk names an age group, a sex or a maternal state ("children", "pregnant women",
    "breastfeeding", "breast-feeding")."""
    lows = _lows(words)
    return bool(set(lows) & (POPULATION_WORDS | MATERNAL_STATES)) or "breast feeding" in " ".join(lows)


# What a treatment costs is an outcome of it: "What about the cost?" after "Do statins prevent strokes in older
# adults?" asks of statins' cost in older adults. The aspect model reads outcomes from questions' wording, and 4 of
# its 596 training questions speak of cost: it read "cost" as another entity, and statins were dropped.
COST_WORDS = frozenset(tokenize("cost costs price prices expense expenses economic affordability", stem=True))


def names_cost(words: list[str]) -> bool:
    """Whether a word of the chunk names what something costs ("cost", "the price")."""
    return any(t in COST_WORDS for w in words for t in tokenize(w, stem=True))


def names_disease(words: list[str]) -> bool:
    """Whether a word of the chunk names a disease ("sinusitis", "heart failure", "lymphomas")."""
    return any(
        low in CONDITION_NOUNS or (low.endswith(CONDITION_ENDINGS) and low not in NOT_CONDITIONS)
        for low in _lows(words)
    )


def names_disease_or_people(words: list[str]) -> bool:
    """Whether a word of the chunk names a disease or a population ("children", "pregnant women")."""
    return names_people(words) or names_disease(words)


# Words that open a question: the first chunk after one is the entity asked about ("Does | aspirin prevent").
QUESTION_OPENERS = frozenset(
    "does do did is are was were can could should will would has have had may might what which how".split()
)
# Words that frame, not name, what follows "in": "in the management of | X", "in response to | Y".
SETTING_FRAMES = frozenset(
    tokenize(
        """management pathogenesis practice response perspective routine era context presence absence
        development course view light terms regard daily everyday general real world diagnosis case
        prevention evaluation assessment detection prediction prognosis screening""",
        stem=True,
    )
)

# Words after "in", "after" or "with" that make an idiom or a time, not a population: "in | addition", "in |
# order to", "with | respect to", "in | fact", "after | many years", "in | recent months" (not days: "in | day
# surgery"), "in | vivo visualization of" (a method, not a population). The setting is dropped.
SETTING_IDIOMS = frozenset(
    tokenize(
        "addition order fact summary particular year years month months week weeks respect vivo vitro situ",
        stem=True,
    )
)

# ... and the times of day after "during" ("Can I take Claritin during | the day?"), not after "in" ("in | day
# surgery", "in | night shift workers").
TIME_IDIOMS = {"during": frozenset(tokenize("day night daytime nighttime", stem=True))}
# A subject after the preposition makes it a conjunction: "on Saxenda before | I could move to ...".
CLAUSE_SUBJECTS = frozenset("i you we they he she it".split())

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# A subject follows an opening word only where a sentence opens: "Back pain could be ...", "I have gout
# and ..." ask about no entity after "could" or "have"; a title's "X--is it Y?" opens one.
SENTENCE_STOPS = frozenset([".", "?", "!", ":", ";", "--", "\u2014"])
# A word may be a hyphen or slash compound: one word when a part holds a digit ("CA19-9", "IL-6", "SARS-CoV-2"),
# its parts otherwise ("long-term"), as biocite.tokenize cuts them for the index.
_WORD_OR_STOP = re.compile(r"[^\W_]+(?:[-/][^\W_]+)*|[.?!:;\u2014]|--", re.UNICODE)
_SEPARATOR = re.compile(r"[-/]")
# A measurement is a number too: "My child has a fever of 39C ..." abstained, "no indexed abstract mentions '39C'".
_MEASUREMENT = re.compile(r"\d+(?:[.,]\d+)?(?:°?[cf]|mg|mcg|µg|ug|g|kg|ml|l|mmhg|mm|cm|iu|mmol|h|hrs?|min)")
# The ending of a contraction or a possessive: "Can't you ..." made "t" the entity asked about.
_CONTRACTION = re.compile(r"['\u2019](?:t|s|d|m|ll|re|ve)\b", re.IGNORECASE)
# A question that opens after a comma opens a sentence: "My mom is 82, is it safe for her to have | heart valve
# surgery?" had no subject, and the surgery passed no bar.
_CLAUSE_OPENING = re.compile(r",\s+(?=(?:" + "|".join(sorted(QUESTION_OPENERS)) + r")\b)", re.IGNORECASE)
# Endings that turn one medical stem into another word of the same family ("cirrh-osis" / "cirrh-otic",
# "allerg-ologic" / "allerg-ists", "simpl-ification" / "simpl-ified"); longest first.
DERIVATIONAL_ENDINGS = sorted(
    """osis oses otic ology ologies ologic ological ologist ologists ic ics ical ically ist ists ism isms y ies
    ification ifications ified ify ation ations al ally""".split(),
    key=len,
    reverse=True,
)
MIN_CORE = 5  # letters left once the ending is cut: shorter cores join unrelated words
# Prefixes a question may write apart ("peri-sinusoidal") or glued to a word its abstract writes bare
# ("autorefraction": "refraction", "underprescribe": "prescribe"). A prefix alone is no term of a concept, and
# a word the index never saw is read as its base when the abstract has that base (`DocumentTerms.variant`).
# Not "re" or "co": "rewarming" is no "warming", "reinfection" no "infection" (a swapped unanswerable concept
# was read so).
PREFIXES = tuple(
    sorted(
        """anti auto extra hyper hypo inter intra macro micro mini multi neo non over peri poly post pre
        pseudo semi sub super trans ultra under""".split(),
        key=len,
        reverse=True,
    )
)
MIN_BASE = 5  # letters of the base once the prefix is cut: "anti" + "gen" is no reading of "antigen"
_PREFIX_SET = frozenset(PREFIXES)
# The prefixes that are no word alone: a chunk's "peri" is the cut-off part of "peri-sinusoidal" and no term, but
# "trans fats", "extra virgin olive oil" and "auto accidents" keep theirs
_PREFIX_PARTS = _PREFIX_SET - {"trans", "extra", "super", "post", "auto"}
# An organ's Latin adjective and its English noun name the same thing: "hepatic fibrosis" is "liver fibrosis",
# "renal failure" "kidney failure". Unambiguous pairs only ("oral" is also a route, "vascular" a class).
ORGAN_WORDS = [
    ("hepatic", "liver"), ("renal", "kidney"), ("cardiac", "heart"), ("pulmonary", "lung"),
    ("cerebral", "brain"), ("gastric", "stomach"), ("cutaneous", "skin"), ("dermal", "skin"),
    ("ocular", "eye"), ("dental", "tooth"), ("dental", "teeth"), ("osseous", "bone"), ("muscular", "muscle"),
    ("nasal", "nose"), ("splenic", "spleen"), ("mammary", "breast"), ("ureteral", "ureter"), ("ureteric", "ureter"),
]  # fmt: skip
# Words of age groups that name the same population: "older patients" are the abstract's "elderly", "children"
# its "pediatric" patients or "a child". "Child-Pugh" (a surname) is no child: an abstract's "Child-Pugh" is read
# as "Pugh" (`DocumentTerms`; it made a cirrhosis abstract cover "pediatric").
AGE_WORDS = [
    ("older", "elderly"),
    ("children", "pediatric"),
    ("children", "paediatric"),
    ("children", "child"),
]
# The words that cover an asked sex, one way: a trial "in eclampsia" writes of "maternal" outcomes, not of "women"
# ("Is a C-section better than a normal birth for women with eclampsia?" said "not covered: women" over it); but
# "Is X safe in pregnancy?" is not covered by a trial in women.
_WOMEN_WORDS = frozenset(tokenize("female maternal pregnant pregnancy mothers", stem=True))
_MEN_WORDS = frozenset(tokenize("male", stem=True))
SEX_WORDS = {"women": _WOMEN_WORDS, "woman": _WOMEN_WORDS, "men": _MEN_WORDS, "man": _MEN_WORDS}
_CHILD_PUGH = re.compile(r"\bchild(?:'s)?[-\s]+(?=(?:turcotte[-\s]+)?pugh\b)", re.IGNORECASE)
# A test's plain name and the one abstracts write: "ultrasound" is "ultrasonography" (an appendicitis study in
# children said only "abdominal ultrasonography").
TEST_WORDS = [
    (word, "ultrasound") for word in ("ultrasonography", "ultrasonographic", "sonography", "sonographic")
]


# The noun and the adjective of one disease, organ or finding, as (noun ending, adjective ending, shortest
# core): "parkinsonian patients" have Parkinson's disease, "asthmatic children" asthma, "epileptic" patients
# epilepsy, a "metastatic" cancer metastases; an "anemic" patient anemia, the "myocardial" the myocardium.
# Each pair was kept after reading every pair of index words it joins (bench/agent_concepts.py prints them);
# pairs that mostly joined unrelated words are left out ("e" / "al": fate / fatal, "a" / "al": substantia /
# substantial, "us" / "ic": status / static).
WORD_FORMS = [
    ("sis", "tic", 4), ("sy", "tic", 4), ("sia", "tic", 4), ("ia", "ic", 4), ("a", "atic", 4), ("a", "atous", 4),
    ("y", "ic", 4), ("y", "ical", 4), ("is", "ic", 4), ("um", "al", 4), ("ium", "ial", 4), ("us", "al", 3),
    ("us", "eal", 4), ("ism", "istic", 4), ("ancy", "ant", 4), ("", "ian", 5),
]  # fmt: skip


def singular(word: str) -> str:
    """A lower-case plural as its singular, roughly: "metastases" -> "metastasis", "asthmatics" -> "asthmatic"."""
    if word.endswith("ses"):
        return word[:-2] + "is"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=1 << 16)
def word_forms(word: str) -> frozenset[tuple[str, int]]:
    """The (core, pair) keys of a lower-case word, one per WORD_FORMS ending its singular has: two words
    sharing a key are one thing's noun and adjective."""
    word = singular(word)
    keys = set()
    for pair, (noun, adjective, shortest) in enumerate(WORD_FORMS):
        for ending in (noun, adjective):
            if word.endswith(ending) and len(word) - len(ending) >= shortest:
                keys.add((word[: len(word) - len(ending)], pair))
    return frozenset(keys)


def synonyms(words: list[tuple[str, str]]) -> dict[str, set[str]]:
    """Stem -> the stems of its other names, both ways, for pairs of one word each."""
    pairs: dict[str, set[str]] = {}
    for one, other in words:
        a, b = (tokenize(w, stem=True)[0] for w in (one, other))
        pairs.setdefault(a, set()).add(b)
        pairs.setdefault(b, set()).add(a)
    return pairs


# A country and its people's adjective: "Thai women" are the women of a study "in Thailand". Irregular pairs
# only (a regular "-ian" pair, "Brazil" / "Brazilian", is a `WORD_FORMS` pair already); one word each. Not
# "English" (the language of most abstracts), "British" (of societies' guidelines) or "Polish" (a dental verb).
PLACE_WORDS = [
    ("thai", "thailand"), ("korean", "korea"), ("japanese", "japan"), ("chinese", "china"),
    ("danish", "denmark"), ("swedish", "sweden"), ("finnish", "finland"), ("dutch", "netherlands"),
    ("french", "france"), ("german", "germany"), ("spanish", "spain"), ("turkish", "turkey"),
    ("greek", "greece"), ("swiss", "switzerland"), ("irish", "ireland"),
    ("norwegian", "norway"), ("taiwanese", "taiwan"), ("vietnamese", "vietnam"), ("lebanese", "lebanon"),
    ("nepalese", "nepal"), ("nepali", "nepal"), ("pakistani", "pakistan"), ("israeli", "israel"),
    ("iranian", "iran"), ("iraqi", "iraq"), ("kuwaiti", "kuwait"), ("italian", "italy"),
    ("mexican", "mexico"), ("indian", "india"), ("belgian", "belgium"), ("portuguese", "portugal"),
    ("czech", "czechia"), ("hungarian", "hungary"), ("romanian", "romania"), ("russian", "russia"),
    ("ukrainian", "ukraine"), ("indonesian", "indonesia"), ("malaysian", "malaysia"),
    ("filipino", "philippines"), ("singaporean", "singapore"), ("bangladeshi", "bangladesh"),
    ("scottish", "scotland"), ("welsh", "wales"),
    ("kenyan", "kenya"), ("ugandan", "uganda"), ("tanzanian", "tanzania"), ("ghanaian", "ghana"),
    ("ethiopian", "ethiopia"), ("nigerian", "nigeria"), ("egyptian", "egypt"), ("saudi", "arabia"),
    ("canadian", "canada"), ("australian", "australia"), ("argentinian", "argentina"),
    ("chilean", "chile"), ("peruvian", "peru"), ("colombian", "colombia"), ("cuban", "cuba"),
]  # fmt: skip
# A sign's plain word and its clinical one: "bleeding" is a "haemorrhage" (a study of "post-tonsillectomy late
# haemorrhages" did not cover "Is bleeding after tonsillectomy more likely at night?", and a trial of pain relief
# after tonsillectomy that mentions bleeding was quoted instead). Coverage only: search keeps the asked word.
SIGN_WORDS = [("bleeding", "hemorrhage"), ("bleeding", "haemorrhage"), ("stiff", "rigid")]
# A resection is surgery: "Do women live longer than men after surgery for lung cancer?" quoted a lymph-node study
# of "radical surgery" over the one of "patients with resected non-small cell lung cancer"; and what is done before,
# during or after it ("Can a p53 test tell if rectal cancer will respond to chemoradiation before surgery?" said
# "not covered: surgery" over "pre-operative chemo-radiation"). Not "operation" (its stem is the one of "receiver
# operating characteristic"). Coverage only, as `SIGN_WORDS`.
PROCEDURE_WORDS = [
    ("surgery", "resection"),
    *(("surgery", f"{when}operative") for when in ("pre", "post", "peri", "intra")),
]
# What a level is measured in: "Is leptin in the blood a sign of how long someone with lung cancer will live?"
# said "not covered: blood" over "the serum leptin level has no prognostic indications". Coverage only.
SAMPLE_WORDS = [("blood", "serum")]
PLAIN_NAMES = ORGAN_WORDS + AGE_WORDS + TEST_WORDS + SIGN_WORDS + PROCEDURE_WORDS + SAMPLE_WORDS + PLACE_WORDS
# the drugs' names, and the one-word names of conditions ("flu" / "influenza"); phrases are `_condition_written`'s
OTHER_NAMES = (
    other_names.DRUGS
    + other_names.BRANDS
    + [
        (a, b)
        for a, b in other_names.CONDITIONS + other_names.LAY_NAMES + other_names.PEOPLE
        if " " not in a + b
    ]
)
SYNONYMS = synonyms(PLAIN_NAMES + OTHER_NAMES)
ORGAN_STEMS = frozenset(synonyms(ORGAN_WORDS))  # either name of an organ: a concept's site (`covers`)

Role = Literal["", "outcome", "setting", "subject", "time"]
CUT_WORDS = (GENERIC, ASPECTS, VERBS, CONVERSATIONAL, QUANTITIES_AND_FORMS)  # a chunk ends at any of these
# A verb's noun shares the verb's stem but names a thing: "aortic valve | replacement", "cognitive | impairment",
# "QT | prolongation" and "alcohol | dependence" had been cut at it as at "replaces" / "impairs" / "prolongs" /
# "depends", leaving the concepts "aortic valve", "cognitive", "QT" and "alcohol".
NOUN_ENDINGS = ("ment", "ments", "ion", "ions", "ance", "ances", "ence", "ences", "al", "als")


# Verbs whose other forms are nouns of concepts ("running", "wound healing"), so they cut as written only: "Do
# nasal polyps run in families?" had the concept "nasal polyps run", "Can music calm patients ...?" "music calm".
WRITTEN_VERBS = frozenset("run runs heal heals calm calms soothe soothes".split())


def _cuts(low: str, stem: str) -> bool:
    """Whether a word (lower case, and its stem) ends a chunk as one of the `CUT_WORDS`."""
    noun = low.endswith(NOUN_ENDINGS)
    return low in WRITTEN_VERBS or any(stem in words for words in CUT_WORDS if not (noun and words is VERBS))


def _breaks_phrase(low: str) -> bool:
    """Whether a lower-case word would cut a phrase it is in: a stop word, or one a chunk ends at."""
    stem = _stem(low)
    return low in STOPWORDS or stem is None or _cuts(low, stem)


@dataclass
class Concept:
    text: str  # as written in the question
    terms: list[str]  # specific terms: stems, or "word x" compounds checked as phrases
    words: list[str] = field(default_factory=list)
    respelled: dict[str, list[str]] = field(default_factory=dict)  # a stem the index lacks -> respellings
    # "" for a key concept; otherwise the role that let it in below the key-concept bar: an asked "outcome"
    # (covered by all of its terms), the "setting" (population or condition) or the "subject" (the entity
    # asked about), both covered as key concepts
    role: Role = ""
    # the role of its place in the question, whichever bar let it in ("in | gestational diabetes")
    place: Role = ""
    unseen: list[str] = field(default_factory=list)  # its words the index never saw, casefolded
    shown: str = ""  # how the user is told of it, when not its text: with a population noun ("older adults")
    # the abbreviation the question defines for it in parentheses ("type 2 diabetes mellitus (T2DM)"), as a
    # stem, and the stemmed phrase it stands for: an abstract that has either covers the concept (so does the
    # concept's rarest term when another word than the abbreviation is specific)
    abbreviation: str = ""
    long_form: str = ""

    @property
    def outcome(self) -> bool:
        """Asked like an outcome: covered by all of its terms, ranked after the key concepts (so is a time)."""
        return self.role in ("outcome", "time")

    @property
    def label(self) -> str:
        """The concept as the user reads it ("not covered: older adults")."""
        return self.shown or self.text

    def described(self) -> str:
        """The concept as the trace shows it: its label and its role ("aspirin (subject)")."""
        return f"{self.label} ({self.role})" if self.role else self.label

    def initials(self) -> str:
        return "".join(w[0] for w in self.words).upper() if len(self.words) >= 2 else ""


class DocumentFrequencies:
    """Document frequency of every BM25 token of the index (computed once per agent)."""

    def __init__(self, counts: Counter[str], n_docs: int) -> None:
        self.counts = counts
        self.n_docs = max(n_docs, 1)

    @classmethod
    def from_token_lists(cls, token_lists: Iterable[list[str]]) -> DocumentFrequencies:
        counts: Counter[str] = Counter()
        n = 0
        for tokens in token_lists:
            counts.update(set(tokens))
            n += 1
        return cls(counts, n)

    def share(self, term: str) -> float:
        return self.counts.get(term, 0) / self.n_docs


def _phrase_stem(word: str) -> str:
    """A word of a phrase stemmed; a stop word or a single letter as it is (they count in a phrase)."""
    return _stem(word) or word


@lru_cache(maxsize=1 << 16)  # coverage stems the question's words for every abstract it reads
def _stem(word: str) -> str | None:
    tokens = tokenize(word, stem=True)
    return tokens[0] if tokens else None


def derivational_core(word: str) -> str | None:
    """The word without its derivational ending ("spherocytosis" -> "spherocyt"), or None."""
    ending = next((e for e in DERIVATIONAL_ENDINGS if word.endswith(e)), None)
    return word[: -len(ending)] if ending and len(word) - len(ending) >= MIN_CORE else None


def prefix_base(word: str) -> str | None:
    """The word without a prefix of `PREFIXES` ("microelement" -> "element"), or None."""
    prefix = next((p for p in PREFIXES if word.startswith(p)), None)
    base = word[len(prefix) :] if prefix else ""  # the question's words are cut at hyphens already
    return base if len(base) >= MIN_BASE else None


def defined_abbreviations(question: str) -> dict[str, str]:
    """The words in parentheses that abbreviate the words before them, casefolded as the index cuts them,
    with the stemmed phrase they abbreviate: "type 2 diabetes mellitus (T2DM)", "angiotensin-converting
    enzyme-1 (ACE-1)"; "homemade alcohol (Raksi)" is a name, not an abbreviation."""
    found: dict[str, str] = {}
    for short, long_form in definitions(question):
        found.update((p.casefold(), _stemmed_phrase(long_form)) for p in _parts(short))
    return found


# Phrasal verbs that end a chunk as a verb does: "Do teens who vape | end up | smoking?" had the concept "vape end",
# "Does honey | speed up | wound healing?" "honey speed".
PHRASAL_VERBS = frozenset(
    f"{form} up" for form in ("end", "ends", "ended", "ending", "speed", "speeds", "sped", "speeding")
) | {verb for verb in EFFECT_VERBS if " " in verb}
# Names of outcomes and conditions with a stop word inside, each one phrase: cut at "of", "quality of life" was
# the outcome "quality", which "high-quality usual care" covered (7 PubMedQA development questions ask of it).
STOPWORD_PHRASES = (
    ("quality", "of", "life"),
    ("activities", "of", "daily", "living"),
    ("length", "of", "stay"),
    ("range", "of", "motion"),
    ("tetralogy", "of", "fallot"),
    # a named field of treatments, though "alternative" alone is a generic word: "Do more adults with chronic
    # illness use alternative medicine than before?" asked only of chronic illness
    ("complementary", "and", "alternative", "medicine"),
    ("alternative", "medicine"),
    # a phrasal verb of a lay name: "passing out" (fainting), in its forms
    *((form, "out") for form in ("pass", "passes", "passed", "passing")),
    *(tuple(verb.split()) for verb in sorted(PHRASAL_VERBS)),
    # the lay names with a stop word in them ("shortness of breath", "loss of consciousness"; "ringing in the ears"
    # had been "ringing" and "ears", "having your tonsils out" "tonsils"), or a word a chunk ends at ("a breathing
    # machine" had been "machine")
    *(
        tuple(name.split())
        for name in sorted({n for pair in other_names.LAY_NAMES for n in pair})
        if len(name.split()) > 1 and any(_breaks_phrase(word) for word in name.split())
    ),
)


def _question_words(question: str) -> list[str]:
    """The question's words, cut as the index's tokenizer cuts them, and its sentence stops. "CA19-9" was
    "CA19" and "9" here but "ca199" in the index, and the agent said no abstract mentions it. Each of the
    `STOPWORD_PHRASES` is one word."""
    tokens = _WORD_OR_STOP.findall(_CLAUSE_OPENING.sub(". ", _CONTRACTION.sub("", question)))
    return _joined_phrases([part for t in tokens for part in ([t] if t in SENTENCE_STOPS else _parts(t))])


def _joined_phrases(words: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(words):
        n = next(
            (len(p) for p in STOPWORD_PHRASES if tuple(w.casefold() for w in words[i : i + len(p)]) == p), 1
        )
        out.append(" ".join(words[i : i + n]))
        i += n
    return out


def _parts(word: str) -> list[str]:
    """The word's parts as the index cuts them, but a single letter hyphened to the next part stays with it
    as a phrase: "C-reactive" is "C reactive" (the letter was glued to the word before: "sensitivity C"), and
    "T-cells" is "T cells". So does a compound of two words joined by a stop word: "mother-to-infant" (its
    "to" cut the question to the outcome "mother"), but not "head-to-head" (a design, not a concept)."""
    parts = compound_parts(word)
    if len(parts) > 1 and len(parts[0]) == 1 and parts[0].isalpha():
        return [f"{parts[0]} {parts[1]}", *parts[2:]]
    if len(parts) == 3 and parts[1].casefold() in STOPWORDS and parts[0].casefold() != parts[2].casefold():
        return [" ".join(parts)]
    return parts


# The verb of a question that names who acts: "are we | seeing the effects", "can you | deliver accurate tidal
# volume", "do we always | screen for". It is no concept ("not covered: seeing"); "I" is left out ("type I").
_SUBJECT_PRONOUNS = frozenset({"we", "you", "they"})
_BEFORE_VERB = frozenset(
    """really always still ever actually all even also now routinely truly then not never can could should would
    will must may might""".split()
)


def _after_pronoun(words: list[str], i: int) -> bool:
    """Whether words[i] is the first word after a subject pronoun and its adverbs or auxiliaries."""
    j = i - 1
    while j >= 0 and words[j].casefold() in _BEFORE_VERB:
        j -= 1
    return j >= 0 and words[j].casefold() in _SUBJECT_PRONOUNS and words[i].casefold() not in _BEFORE_VERB


# "how long", "how far": a question of an amount, no word of a concept, nor the subject the opening "How" holds
# for its next chunk. "Does leptin in the blood predict how long lung cancer patients live?" had the outcome "long lung
# cancer", which no abstract on lung cancer covered.
_AFTER_HOW = frozenset("long far soon fast quickly".split())


def _asks_how_much(words: list[str], i: int) -> bool:
    """Whether words[i] is the "long" of "how long" (or "far", "soon" ...)."""
    return words[i].casefold() in _AFTER_HOW and i > 0 and words[i - 1].casefold() == "how"


def _chunks(question: str) -> list[tuple[list[str], Role]]:
    """The question cut at stop, generic and verb words; each chunk with its role: "outcome" for the asked
    outcome (the first chunk after an outcome verb, across the stop and generic words between: "reduce the
    risk of | fractures"), "setting" for the population or condition (the first chunk after a
    `SETTING_PREPOSITIONS` word, across stop, generic and framing words: "in patients with | oesophageal
    cancer", "in the management of | nasopharyngeal carcinoma"), "subject" for the entity asked about (the
    first chunk after an opening word that opens the question or one of its sentences: "Does | aspirin", "Is
    there evidence that | metformin"), "" otherwise."""
    chunks: list[tuple[list[str], Role]] = [([], "")]
    pending: Role = ""
    opened_by = ""  # the preposition the pending setting came from
    outcome_opened_at = -1  # the word that opened the pending outcome
    for_chunks: set[int] = set()  # the chunks after "for": settings only when they name a disease or people
    subject_seen = False
    # the chunk "an association between" opened: the "and" after it opens the outcome
    between: int | None = None
    opening = True  # the word opens the question or a sentence of it
    words_in_order = designators.merge(_question_words(question))  # "type 2", "stage III": one token
    for i, word in enumerate(words_in_order):
        if word in SENTENCE_STOPS:
            opening = True
            continue
        at_opening, opening = opening, False
        low = word.casefold()
        words = chunks[-1][0]
        if len(low) == 1 and low.isalpha() and low in "dtbkce" and words:  # vitamin D, T cell
            words[-1] = f"{words[-1]} {word}"
            continue
        # numbers are not concepts, nor are number compounds ("19-9"; "fourteen years" is not either, but is rare)
        if _SEPARATOR.sub("", low).isdigit() or _MEASUREMENT.fullmatch(low):
            continue
        if low.endswith(TOXIC) and len(low) > len(TOXIC):  # "Is X cardiotoxic?": the outcome, alone
            chunks.extend([([word], "outcome"), ([], "")])
            pending = ""
            continue
        if " " in word:  # a letter and its word ("C reactive"): a phrase, whatever its parts are alone
            stem, cut = None, low in PHRASAL_VERBS
        else:
            stem = _stem(low)
            head_noun = low in EFFECT_NOUNS and bool(words) and chunks[-1][1] in ("outcome", "")
            effect_verb = low in EFFECT_VERBS and not head_noun
            cut = low in STOPWORDS or effect_verb or stem is None or _cuts(low, stem)
            cut = cut or _after_pronoun(words_in_order, i) or _asks_how_much(words_in_order, i)
        no_setting = (
            stem in SETTING_IDIOMS or stem in TIME_IDIOMS.get(opened_by, ()) or low in CLAUSE_SUBJECTS
        )
        if pending == "setting" and not words and no_setting:
            pending = ""
            chunks.append(([], pending))
            continue
        if cut or (pending == "setting" and not words and stem in SETTING_FRAMES):
            if _opens_association_between(words_in_order, i):
                between = len(chunks)
            # "between A and | B", A one chunk or more ("between statin | use and | cataract")
            second = between is not None and low == "and" and any(w for w, _ in chunks[between:])
            between = None if second else between
            if (
                stem in OUTCOME_VERBS
                or low in EFFECT_VERBS
                or _names_association(words_in_order, i)
                or _names_outcome_by_phrase(words_in_order, i)
                or _names_causative(words_in_order, i)
                or second
            ):
                pending, outcome_opened_at = "outcome", i
            elif low in SETTING_PREPOSITIONS and (
                words
                or pending not in _GOES_ON.get(low, {"outcome"})
                or (pending == "outcome" and low in _NEXT_TO_ITS_OPENER and outcome_opened_at != i - 1)
            ):
                pending, opened_by = "setting", low
            elif word in RELATIVE_PRONOUNS and i > 0:  # not "WHO" (the organisation)
                pending, opened_by = "setting", low
            elif pending == "subject" and _asks_how_much(words_in_order, i):
                pending = ""  # "How long | does it take to notice ...": what is asked is an amount, no entity
            elif (
                (low in QUESTION_OPENERS or (i == 0 and low == "and"))  # a chat's "And | aspirin?"
                and at_opening
                and not subject_seen
                and (words or not pending)
            ):
                pending = "subject"
            elif words:  # a chunk ends here: what was pending was given to it
                pending = ""
            if pending == "setting" and opened_by == CONDITION_PREPOSITION:
                for_chunks.add(len(chunks))
            chunks.append(([], pending))
            continue
        subject_seen = subject_seen or chunks[-1][1] == "subject"
        words.append(word)
    for i in for_chunks:
        if not names_disease_or_people(chunks[i][0]):
            chunks[i] = (chunks[i][0], "")
    return [(words, role) for words, role in chunks if words]


def key_concepts(
    question: str,
    df: DocumentFrequencies,
    max_df_share: float = 0.0005,
    max_outcome_df_share: float = 0.0,
    max_setting_df_share: float = 0.0,
    max_subject_df_share: float = 0.0,
    *,
    subject_is_outcome: bool = False,
) -> list[Concept]:
    """The question's concepts that carry at least one specific term, and its asked outcome, setting
    (population or condition) and subject (the entity asked about) when they have a term within their own
    bar, in question order. With `subject_is_outcome`, the chunk where the subject stands is the asked outcome
    ("What about | falls?", read so by the agent's aspect model)."""
    bars = {"outcome": max_outcome_df_share, "setting": max_setting_df_share, "subject": max_subject_df_share}
    defined = defined_abbreviations(question)
    concepts = []
    for chunk, place in _chunks(question):
        role: Role = "outcome" if subject_is_outcome and place == "subject" else place
        words = [w for part in chunk for w in part.split()]
        concept = _concept(chunk, words, df, max_df_share, defined)
        if concept is not None and role and all(designators.of_token(t) for t in concept.terms):
            concept.role = role  # "in | type 1 diabetes" is the setting; its designator made it specific
        if concept is None and role and bars[role] > 0:
            concept = _concept(chunk, words, df, bars[role], defined)
            if concept is not None:
                concept.role = role
        if concept is None and opposites.qualified(words, chunk=True):  # "chronic renal failure": not acute
            concept = _qualified_concept(chunk, words, df, defined)
        if concept is not None:
            concept.place = role
            concepts.append(concept)
    taken = {w.casefold() for c in concepts for w in c.words}
    for concept in concepts:
        concept.shown = _shown(question, concept.text, taken)
    return concepts


def _qualified_concept(
    chunk: list[str], words: list[str], df: DocumentFrequencies, defined: dict[str, str]
) -> Concept | None:
    """A chunk with an opposite qualifier and no rare term as a concept of all its terms but the qualifiers:
    the abstract must name the condition ("renal failure") and not only its opposite (`opposites`)."""
    concept = _concept(chunk, words, df, 1.0, defined)
    if concept is not None:
        concept.terms = [t for t in concept.terms if t not in opposites.QUALIFIERS] or concept.terms
    return concept


# Generic nouns of a population: they end a chunk (no term of theirs is specific), but "not covered: older"
# says less than "not covered: older adults". Shown only: the text and terms stay the chunk's.
_POPULATION_NOUN = r"\s+(adults?|patients?|people|persons?|individuals|subjects)\b"


def as_written(question: str, text: str) -> str:
    """The concept's words as the question writes them, with the numbers and possessives its terms leave
    out ("type 2 diabetes" was shown "type diabetes", "Crohn's disease" "Crohn disease"); `text` if absent."""
    words = text.split()
    between = r"(?:['\u2019]s)?[^A-Za-z]+"  # a possessive, then spaces, digits, hyphens
    found = re.search(r"\b" + between.join(map(re.escape, words)) + r"\b\)?", question, flags=re.IGNORECASE)
    if not found or not words:
        return text
    written = found.group(0)  # with the parenthesis an abbreviation opened: "mellitus (T2DM)"
    return written[:-1] if written.endswith(")") and written.count(")") > written.count("(") else written


def _shown(question: str, text: str, taken: set[str]) -> str:
    """The concept as written (`as_written`), with what completes it in the question: the generic
    population noun after it ("older adults"), or an "of" phrase whose word is no concept of its own
    ("quality of life": "not covered: quality" said little)."""
    written = as_written(question, text)
    found = re.search(re.escape(written) + _POPULATION_NOUN, question, flags=re.IGNORECASE)
    if found:
        return f"{written} {found.group(1)}"
    found = re.search(re.escape(written) + r"\s+of\s+([^\W\d_]+)\b", question, flags=re.IGNORECASE)
    word = found.group(1).casefold() if found else ""
    if found and word not in taken and word not in STOPWORDS:
        return f"{written} of {found.group(1)}"
    return written if written != text else ""


def _concept(
    chunk: list[str], words: list[str], df: DocumentFrequencies, max_share: float, defined: dict[str, str]
) -> Concept | None:
    """The chunk as a concept of its terms in at most `max_share` of the documents, or None. An abbreviation
    the question defines (`defined`) is no term when another word of the chunk is specific."""
    abbreviation = next((w for w in chunk if w.casefold() in defined and len(chunk) > 1), "")
    concept = _concept_of(chunk, words, df, max_share, skip=abbreviation) if abbreviation else None
    concept = concept or _concept_of(chunk, words, df, max_share)
    if concept and abbreviation:
        concept.abbreviation = _stem(abbreviation.casefold()) or ""
        concept.long_form = defined[abbreviation.casefold()]
    return concept


def _concept_of(
    chunk: list[str], words: list[str], df: DocumentFrequencies, max_share: float, skip: str = ""
) -> Concept | None:
    """The chunk as a concept of its terms (but `skip`) in at most `max_share` of the documents, or None."""
    terms, respelled, unseen = [], {}, []
    for word in chunk:
        if word == skip:
            continue
        if " " in word:
            terms.append(" ".join(word.casefold().split()))
            continue
        if word.casefold() in _PREFIX_PARTS:
            continue
        stem = _stem(word.casefold())
        if stem and df.share(stem) <= max_share:
            terms.append(stem)
            if near := respellings(stem, df.counts.get):
                respelled[stem] = near
            if not df.counts.get(stem, 0):
                unseen.append(word.casefold())
    terms.sort(key=lambda t: term_share(t, df))  # rarest first
    if not terms:
        return None
    return Concept(text=" ".join(chunk), terms=terms, words=words, respelled=respelled, unseen=unseen)


def term_share(term: str, df: DocumentFrequencies) -> float:
    """A concept term's share of the documents; a compound phrase (checked as such) counts as rarer than any
    stem."""
    return -1.0 if " " in term else df.share(term)


_PREFIXED = re.compile(r"\b([a-z]+)-([a-z]+)\b")


def _prefixed_stems(text: str) -> set[str]:
    """The stems of the words an abstract writes with a prefix apart ("pre-operative"), as one word ("preoper"):
    a question writes them so, and a plain name pairs them ("surgery" / "preoperative")."""
    pairs = _PREFIXED.findall(text.casefold())
    return {s for prefix, base in pairs if prefix in _PREFIX_SET for s in tokenize(prefix + base, stem=True)}


# A name with a number ("HTLV-1", "HIV-2") that abstracts write with a Roman one ("HTLV-I"): the tokenizer reads
# "HTLV-1" as one token and "HTLV-I" as "HTLV" (the "I" is a stop word), so "Does HTLV-1 cause myelopathy?" said
# "no indexed abstract mentions 'HTLV-1'" over an abstract on HTLV-I myelopathy.
_NAME_AND_NUMBER = re.compile(r"([a-z]{2,})-?([1-4])")
_ROMAN = {"1": "I", "2": "II", "3": "III", "4": "IV"}


def numbered_name(word: str) -> tuple[str, str] | None:
    """The letters and the number of a name with a number ("htlv-1" -> ("htlv", "1")), or None."""
    found = _NAME_AND_NUMBER.fullmatch(word.casefold())
    return (found.group(1), found.group(2)) if found else None


def roman_numeral_form(word: str) -> str | None:
    """A pattern of the word written with a Roman numeral ("htlv-1" -> HTLV-I, any case of the letters), or None
    for a word that is no name and number."""
    named = numbered_name(word)
    return None if named is None else rf"\b(?i:{named[0]})-?{_ROMAN[named[1]]}\b(?![-\w])"


def _in_running_text(written: str, first_word: str) -> str:
    """An abstract's words as a note quotes them: a capital that may open a sentence ("Convulsions") lowered,
    an abbreviation's or a letter's ("HTLV-I", "C-section") kept."""
    return written[0].lower() + written[1:] if len(first_word) > 1 and first_word[1:].islower() else written


class DocumentTerms:
    """What coverage checks look up in one abstract: its stems, its normalised text and its words."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stems = set(tokenize(_CHILD_PUGH.sub("", text), stem=True)) | _prefixed_stems(text)
        self.flat = " " + " ".join(re.findall(r"[a-z0-9]+", text.casefold())) + " "
        self.words = set(re.findall(r"[A-Za-z0-9]+", text))
        self._sequence = re.findall(r"[a-z0-9]+", text.casefold())
        self._initials: set[str] | None = None

    @classmethod
    def of(cls, doc: Document) -> DocumentTerms:
        """An abstract's terms: title, text and MeSH headings, NLM's reading of what it is about
        ("pancreatoduodenectomy for PA" is on pancreatic cancer by its heading "Pancreatic Neoplasms")."""
        return cls(" ".join([doc.title, doc.abstract, *(f"{heading};" for heading in doc.mesh)]))

    @cached_property
    def stem_flat(self) -> str:
        """The abstract's words stemmed, in order, for phrases ("grade c"); built on the first phrase missed."""
        return f" {' '.join(map(_phrase_stem, self._sequence))} "

    @cached_property
    def forms(self) -> set[tuple[str, int]]:
        """The `word_forms` keys of the abstract's words (built on the first lookup a stem misses)."""
        return {key for w in set(self._sequence) if w.isalpha() for key in word_forms(w)}

    @cached_property
    def spellings(self) -> set[str]:
        """The abstract's stems in American spelling (built on the first lookup a stem misses)."""
        return {american_spelling(s) for s in self.stems}

    @cached_property
    def _run_together(self) -> dict[str, str]:
        """Adjacent words joined ("shockwave") -> as written apart ("shock wave")."""
        seq = [w for w in self._sequence if w.isalpha()]
        return {a + b: f"{a} {b}" for a, b in zip(seq, seq[1:], strict=False) if min(len(a), len(b)) >= 3}

    @cached_property
    def _cores(self) -> dict[str, str]:
        """Derivational core -> the abstract's first word with it ("spherocyt" -> "spherocytic")."""
        seq = [w for w in self._sequence if w.isalpha()]
        return {c: w for w in reversed(seq) if (c := derivational_core(w))}

    def written(self, stem: str) -> str:
        """The abstract's first word with this stem, as written but a capital that opens a sentence (the stem
        itself if there is none)."""
        return next(
            (_in_running_text(w, w) for w in _WORD.findall(self.text) if _stem(w.casefold()) == stem), stem
        )

    def written_phrase(self, stemmed: str, default: str) -> str:
        """The abstract's first run of words whose `_phrase_stem`s are this stemmed phrase, as written ("c
        section" -> "C-section"; a capital that opens a sentence lowered), or `default`."""
        wanted = stemmed.split()
        words = list(re.finditer(r"[a-z0-9]+", self.text, flags=re.IGNORECASE))
        stems = [_phrase_stem(w.group(0).casefold()) for w in words]
        n = len(wanted)
        i = next((i for i in range(len(words) - n + 1) if stems[i : i + n] == wanted), None)
        if i is None:
            return default
        return _in_running_text(self.text[words[i].start() : words[i + n - 1].end()], words[i].group(0))

    def variant(self, word: str) -> str | None:
        """How this abstract writes a word the index never saw, if it does: as two adjacent words run
        together ("shockwave": "shock wave"), with another derivational ending ("spherocytic"), with its
        number in Roman numerals ("HTLV-1": "HTLV-I") or without its prefix ("autorefraction": "refraction")."""
        core = derivational_core(word)
        if found := self._run_together.get(word) or (self._cores.get(core) if core else None):
            return found
        if (roman := roman_numeral_form(word)) and (numbered := re.search(roman, self.text)):
            return numbered.group(0)
        base = prefix_base(word)
        return self.written(stem) if base and (stem := _stem(base)) and stem in self.stems else None

    def spells_out(self, abbreviation: str) -> bool:
        """Whether consecutive words of the abstract have these initials ("HMO": health maintenance org...),
        the first and the last not stop words ("positive effects the" is no "PET")."""
        if self._initials is None:
            seq = self._sequence
            self._initials = {
                "".join(w[0] for w in seq[i : i + n])
                for n in range(2, 7)
                for i in range(len(seq) - n + 1)
                if seq[i] not in STOPWORDS and seq[i + n - 1] not in STOPWORDS
            }
        return abbreviation.casefold() in self._initials


# The abbreviations of statistics nearly every abstract of results writes ("95% CI", "OR 1.4"): never a concept's
# initials. "caffeine intake" had been covered by "CI" in a folate study, which answered "Does caffeine intake during
# pregnancy cause low birth weight?" with "yes". A concept these stand for is spelt out where it is studied.
STATISTICS = frozenset("CI OR HR RR SD SE SEM IQR AUC AOR ROC".split())


def covers(concept: Concept, terms: DocumentTerms) -> bool:
    """The concept's rarest term (a compound as a phrase) is in the abstract, or its initials are, or the
    rarest term is a typo and the abstract has one of its respellings; for an asked outcome, its other
    terms too, and for any concept the organ it names ("nasal" of "nasal polyps", `ORGAN_WORDS`).

    Requiring only the rarest term of a key concept, subject or setting keeps the distinguishing word
    ("gestational" of "gestational diabetes", the drug of a drug class) while tolerating the question's own
    wording of the rest."""
    if concept.role == "time":
        return _names_time(concept, terms)
    initials = concept.initials()
    if initials and initials in terms.words and initials not in STATISTICS:
        return True
    if concept.abbreviation and (
        concept.abbreviation in terms.stems or f" {concept.long_form} " in terms.stem_flat
    ):
        return True
    if _condition_written(concept, terms):
        return True
    key = concept.terms[0]
    has_key = _has_form(concept, key, terms) or bool(read_as(concept, terms)) or _spelt_out(concept, terms)
    if not has_key or _named_with_the_opposite(concept, terms):  # "chronic kidney" for "acute kidney injury"
        return False
    if concept.outcome:  # "muscle pain" is covered neither by "abdominal pain" nor by "muscle fibres"
        return all(_has_form(concept, t, terms) for t in concept.terms[1:])
    if not all(_has_form(concept, t, terms) for t in _sites(concept)):  # nasal polyps are no colonic polyps
        return False
    if " " in key and designators.of_token(key):  # "type 2" says which diabetes; the disease is still asked
        noun = _designated_noun(concept, key)
        return noun is None or _has_form(concept, noun, terms)
    return True


def _sites(concept: Concept) -> list[str]:
    """The concept's terms that name the organ it is in ("nasal" of "nasal polyps"), but its rarest."""
    return [t for t in concept.terms[1:] if t in ORGAN_STEMS]


def _named_with_the_opposite(concept: Concept, terms: DocumentTerms) -> bool:
    """Whether the abstract names a qualified word of the concept only with the opposite qualifier."""
    return (
        opposites.qualified(concept.words)
        and opposites.named_instead(concept.words, terms.stem_flat) is not None
    )


def _designated_noun(concept: Concept, designator: str) -> str | None:
    """The stem of the word a designator classifies: the one after it ("diabet" of "type 2 diabetes"), else
    the one before ("von Willebrand disease type 2"); None for a designator alone ("phase I")."""
    words, n = concept.text.casefold().split(), len(designator.split())
    at = next((i for i in range(len(words) - n + 1) if " ".join(words[i : i + n]) == designator), None)
    if at is None or len(words) == n:
        return None
    return _stem(words[at + n] if at + n < len(words) else words[at - 1])


def _has_form(concept: Concept, term: str, terms: DocumentTerms) -> bool:
    """The term is in the abstract (`_has_term`), or the noun or adjective of its word is ("parkinsonian" for
    "Parkinson", `WORD_FORMS`). An inflammation must be written out: the stemmer makes "hepatitis" and
    "hepatic" one stem, so any abstract on the liver covered "hepatitis"."""
    asked = [w.casefold() for w in concept.words if _stem(w.casefold()) == term]
    if inflamed := [w for w in asked if w.endswith("itis")]:
        return any(f" {w} " in terms.flat or f" {w[:-2]}des " in terms.flat for w in inflamed)
    if _has_term(term, terms, synonyms=term not in shadowed(concept.text)):
        return True
    numbers = {_other_number(w) for w in concept.words if _stem(w.casefold()) == term}
    if numbers & terms.stems:  # "PPIs" / "PPI"
        return True
    # a prefix the question wrote apart, the abstract as one word: "peri-sinusoidal" / "perisinusoidal"
    words = [w.casefold() for w in concept.words]
    glued = [p + w for p, w in zip(words, words[1:], strict=False) if p in _PREFIX_SET and _stem(w) == term]
    if any(_stem(g) in terms.stems for g in glued):
        return True
    return bool({key for w in asked for key in word_forms(w)} & terms.forms)


def in_passing(concepts: list[Concept], covered: set[int], doc: Document, sentences: list[str]) -> list[int]:
    """The covered key concepts and subject this abstract names only in passing: not in its title or MeSH
    headings and in at most one of its sentences. A raloxifene trial "compared with tamoxifen" once covers
    "tamoxifen", but its raloxifene results say nothing of tamoxifen. None for an abstract without a title:
    a PubMedQA context names its topic in the question it came with, often once in its own text (the rule
    doubled false abstention on held-out PubMedQA questions, 0.08 -> 0.16, when it read those too)."""
    if not doc.title.strip():
        return []
    heading = DocumentTerms(" ".join([doc.title, *(f"{h};" for h in doc.mesh)]))
    unheaded = [
        i for i in sorted(covered) if concepts[i].role in ("", "subject") and not covers(concepts[i], heading)
    ]
    if not unheaded:  # the usual case: no sentence need be read
        return []
    own = [DocumentTerms(s) for s in sentences]  # read once, not once per concept
    return [i for i in unheaded if sum(covers(concepts[i], t) for t in own) <= 1]


def names_all(text: str, concepts: list[Concept]) -> bool:
    """Whether a sentence names each of these concepts (read as `covers` reads an abstract)."""
    own = DocumentTerms(text)
    return all(covers(c, own) for c in concepts)


def uncited_concepts(text: str, concepts: list[Concept], cited: set[str]) -> list[str]:
    """The concepts a generated sentence names (read as `covers` reads an abstract) that are not in `cited`,
    the concepts its cited abstracts cover: "The mechanism of statin-induced muscle pain ...", citing an
    abstract on myopathy, states what no cited study says."""
    own = DocumentTerms(text)
    return [c.label for c in concepts if c.text not in cited and covers(c, own)]


def _spelt_out(concept: Concept, terms: DocumentTerms) -> bool:
    """The concept's rarest term is an abbreviation in the question ("PET", "PPIs") that the abstract spells
    out."""
    key = concept.terms[0]
    return any(
        2 <= len(short) <= 6 and short.isupper() and short.isalpha() and _stem(word.casefold()) == key
        and terms.spells_out(short)
        for word in concept.words
        for short in [_singular_abbreviation(word) or word]
    )  # fmt: skip


# An abbreviation's plural ("PPIs", "NSAIDs", "SSRIs"): the stemmer keeps its "s", so "Do PPIs cause rebound
# heartburn?" was "not covered: PPIs" over abstracts that write "PPI" or spell out "proton pump inhibitors".
_PLURAL_ABBREVIATION = re.compile(r"[A-Z][A-Z0-9]+s")


def _singular_abbreviation(word: str) -> str | None:
    """ "PPI" of "PPIs"; None for a word that is no plural abbreviation."""
    return word[:-1] if _PLURAL_ABBREVIATION.fullmatch(word) else None


def _other_number(word: str) -> str | None:
    """An abbreviation's stem in the other number ("ppi" of "PPIs", "ppis" of "PPI"), or None."""
    if singular_form := _singular_abbreviation(word):
        return singular_form.casefold()
    return f"{word.casefold()}s" if len(word) >= 2 and word.isupper() and word.isalnum() else None


def _has_term(term: str, terms: DocumentTerms, synonyms: bool = True) -> bool:
    """A stem among the abstract's stems (either spelling, or with `synonyms` its other name: "hepat" /
    "liver", "older" / "elderly", or one way a word of the asked sex: "women" / "maternal"), or a compound
    ("vitamin d") as a phrase of its words."""
    if " " in term:  # as written, or its words' stems ("grades C" is covered by "grade C")
        if asked := designators.of_token(term):  # "type 2": "type II", "T2DM", "types 1 and 2" ...
            return designators.covered(asked, terms.text)
        words = re.findall(r"[a-z0-9]+", term)
        phrase = " ".join(words)
        return (
            f" {phrase} " in terms.flat
            or f" {' '.join(map(_phrase_stem, words))} " in terms.stem_flat
            or f"hydroxy{phrase} " in terms.flat  # "25-hydroxyvitamin D" is vitamin D
        )
    if term in terms.stems or american_spelling(term) in terms.spellings:
        return True
    return synonyms and bool((SYNONYMS.get(term, set()) | SEX_WORDS.get(term, set())) & terms.stems)


def read_as(concept: Concept, terms: DocumentTerms) -> str | None:
    """How this abstract writes the concept's rarest term when the index never saw that term: a typo's
    respelling, or the same word written otherwise (`DocumentTerms.variant`); None if it does not."""
    key = concept.terms[0]
    if typo := next((t for t in concept.respelled.get(key, []) if t in terms.stems), None):
        return terms.written(typo)
    return next((v for w in concept.unseen if _stem(w) == key and (v := terms.variant(w))), None)


def never_indexed(concept: Concept, df: DocumentFrequencies) -> bool:
    """No specific term of the concept is in any indexed abstract (a compound phrase counts as seen), nor its
    American spelling, nor any other name of it, nor a respelling of its typo: "Lipitor" is in none, but
    atorvastatin is in 6, and the agent had said that no indexed abstract mentions 'Lipitor'; it said so of
    "sertaline" and of "haemoglobin A1c" too."""
    if any(" " in t or _indexed(t, df) or concept.respelled.get(t) for t in concept.terms):
        return False
    if any((named := numbered_name(w)) and _indexed(_stem(named[0]) or "", df) for w in concept.unseen):
        return False  # "HTLV-1": abstracts may write "HTLV-I", indexed as "HTLV"
    others = (other for _, names in other_names.asked_names(concept.text) for other in names)
    return not any(all(df.counts.get(t, 0) for t in other) for other in others)


def _indexed(term: str, df: DocumentFrequencies) -> bool:
    return bool(df.counts.get(term, 0) or df.counts.get(american_spelling(term), 0))


def respelling_notes(concepts: list[Concept], covered: set[int], docs: list[Document]) -> list[str]:
    """How each covered concept's unseen word was read ("cirrotics" as "cirrhotics"), for the user to check."""
    notes = []
    for i, concept in enumerate(concepts):
        if i not in covered:
            continue
        key = concept.terms[0]
        asked = next((w for w in concept.words if _stem(w.casefold()) == key), key)
        for doc in docs:
            terms = DocumentTerms.of(doc)
            if concept.unseen and (written := read_as(concept, terms)):
                notes.append(f"read {asked!r} as {written!r}: no indexed abstract has {asked!r}")
                break
            if named := _other_word_name(asked, key, terms):
                notes.append(f"read {asked!r} as {named[0]!r}, {_name_kind(asked, named[1])}")
                break
            if found := _condition_written(concept, terms):
                name, table_name = found  # quoted as this abstract writes it ("C-section", not "c section")
                written = terms.written_phrase(_stemmed_phrase(table_name), table_name)
                kind = "group of people" if other_names.people_names(name.casefold()) else "condition"
                notes.append(f"read {name!r} as {written!r}, {_name_kind(name, kind)}")
                break
    return notes


@lru_cache(maxsize=1)
def _lay_phrases() -> frozenset[str]:
    return frozenset(_stemmed_phrase(lay) for lay, _ in other_names.LAY_NAMES)


def _name_kind(asked: str, kind: str) -> str:
    """What the reading note calls the written name: a patient's word is read as "its medical name" ("keyhole
    surgery" is no condition), a drug's or condition's other name as "another name of the same drug"."""
    return (
        "its medical name" if _stemmed_phrase(asked) in _lay_phrases() else f"another name of the same {kind}"
    )


def _other_word_name(asked: str, key: str, terms: DocumentTerms) -> tuple[str, str] | None:
    """How an abstract that lacks the asked drug's or condition's one-word name writes it, if by another of its
    one-word names, and which of the two it is (a phrase, "primary care physicians" for "GPs", is
    `_condition_written`'s)."""
    if key in terms.stems:
        return None
    word = asked.casefold()
    named = [(n, "drug") for n in other_names.other_names(word)]
    named += [(n, "condition") for n in other_names.condition_names(word) if " " not in n]
    named += [(n, "group of people") for n in other_names.people_names(word) if " " not in n]
    return next(((terms.written(s), kind) for n, kind in named if (s := _stem(n)) and s in terms.stems), None)


@lru_cache(maxsize=4096)  # `covers` asks it of the same concept for every abstract
def _stemmed_phrase(text: str) -> str:
    return " ".join(map(_phrase_stem, re.findall(r"[a-z0-9]+", text.casefold())))


@lru_cache(maxsize=1)
def _condition_phrases() -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """Stemmed name of a condition or a group of people -> (the name, (stemmed, written) of its other names)
    (`biocite.other_names`): "GPs" are the "primary care physicians" of an abstract."""
    pairs = other_names.CONDITIONS + other_names.LAY_NAMES + other_names.PEOPLE
    phrases: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    for name in sorted({name for pair in pairs for name in pair}):  # "wisdom tooth" and "wisdom teeth": both
        others = phrases.setdefault(_stemmed_phrase(name), (name, []))[1]
        named = other_names.condition_names(name) + other_names.people_names(name)
        others.extend((_stemmed_phrase(o), o) for o in named)
    return phrases


def _condition_written(concept: Concept, terms: DocumentTerms) -> tuple[str, str] | None:
    """The condition the concept is ("heart attacks"), or a name inside it that holds its distinguishing word
    (the "clot busting" of "clot-busting drugs"), and the other name of it the abstract writes
    ("myocardial infarction", "thrombolysis"), if the abstract writes that and not the asked one."""
    asked = _stemmed_phrase(concept.text)
    stemmed = _named_inside(asked, frozenset(_stemmed_phrase(concept.terms[0]).split()))
    if stemmed is None or f" {stemmed} " in terms.stem_flat:
        return None
    name, others = _condition_phrases()[stemmed]
    name = concept.text if stemmed == asked else name
    return next(((name, written) for other, written in others if f" {other} " in terms.stem_flat), None)


@lru_cache(maxsize=4096)
def _named_inside(asked: str, key: frozenset[str]) -> str | None:
    """The condition name (stemmed) the stemmed phrase is, else the longest one inside it holding the key."""
    if asked in _condition_phrases():
        return asked
    inside = [n for n in _condition_phrases() if f" {n} " in f" {asked} " and key <= set(n.split())]
    return max(inside, key=lambda n: len(n.split()), default=None)


@dataclass
class Coverage:
    """The question's concepts and, for each evidence abstract, the indexes of those it covers."""

    concepts: list[Concept]
    by_pmid: dict[str, set[int]]
    # of each evidence abstract naming concepts only in passing (its other evidence sentences dropped), their labels
    in_passing_by_pmid: dict[str, list[str]] = field(default_factory=dict)
    # each evidence abstract's terms as the check read them (the topic check reads them again)
    terms: dict[str, DocumentTerms] = field(default_factory=dict)

    def missing(self, evidence: list[Evidence], notes: list[str]) -> list[str]:
        """The concepts no abstract of this evidence covers (noted in the trace with all concepts)."""
        pmids = {e.pmid for e in evidence}
        union = set().union(*(self.by_pmid.get(p, set()) for p in pmids))
        missing = [c.label for i, c in enumerate(self.concepts) if i not in union]
        notes.append(
            "key concepts: "
            + "; ".join(c.described() for c in self.concepts)
            + (f" (not covered: {'; '.join(missing)})" if missing else "")
        )
        return missing

    def named_by_pmid(self) -> dict[str, list[str]]:
        """For each abstract, the texts of the concepts it covers (plain data, for the graph's state)."""
        return {p: [self.concepts[i].text for i in sorted(idx)] for p, idx in self.by_pmid.items()}


def aspect(concept: Concept) -> str:
    """What a concept asks about, by its place in the question: the outcome, the population or condition (also
    a disease or people named where the entity stands: "What about | pregnant women?"), the time horizon, or
    the entity."""
    if concept.place in ("outcome", "time"):
        return concept.place
    return "setting" if concept.place == "setting" or names_disease_or_people(concept.words) else "entity"


# A time horizon ("the long term", "after 5 years", "at one year"): a follow-up that names one asks the question
# before it again over that time ("What about the long term?" after "Does metformin reduce HbA1c in type 2
# diabetes?"). Before, the aspect model read "long term" as another outcome (P 0.54) and HbA1c was dropped;
# "in the long term" stood as the setting and replaced "older adults".
_COUNTS = {
    word: str(n)
    for n, word in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1)
} | {"eighteen": "18", "twenty": "20", "first": "1st", "second": "2nd", "third": "3rd"}
TIME_HORIZON = re.compile(
    rf"\b(?P<horizon>(?:long|longer|short|shorter|medium|mid)[\s-]+(?:term|run)"
    rf"|(?:\d+|{'|'.join(_COUNTS)})[\s-]+(?:years?|months?|weeks?|days?))\b"
    r"(?:[\s-]+follow[\s-]*ups?\b)?",  # "long-term follow-up": no entity "follow-up" is left
    re.IGNORECASE,
)


def time_horizon(text: str) -> Concept | None:
    """The time horizon the text names, as a concept covered by its words as one phrase ("long term": "long-term",
    "5 years": "5-year"; not "five years", nor any abstract with "long" and "term"); None if it names none."""
    found = TIME_HORIZON.search(text)
    if found is None:
        return None
    words = re.findall(r"[a-z0-9]+", found.group("horizon").casefold())
    return Concept(" ".join(words), [" ".join(words)], words, role="time", place="time")


def _names_time(concept: Concept, terms: DocumentTerms) -> bool:
    """The abstract names the time horizon: its words as a phrase, a count as a word or a digit ("one year":
    "1-year"), a unit in either number ("12 months": "12-month")."""
    count, *rest = concept.words
    unit = rest[-1].removesuffix("s") if rest else ""
    if unit not in ("year", "month", "week", "day"):
        return f" {' '.join(concept.words)} " in terms.flat
    counts = {count, _COUNTS.get(count, count)} | {w for w, d in _COUNTS.items() if d == count}
    return bool(re.search(rf" (?:{'|'.join(map(re.escape, counts))}) {unit}s? ", terms.flat))


def without_time(text: str) -> str:
    """The text without its time horizon ("What about children in the ?" of "... in the long term?")."""
    return TIME_HORIZON.sub("", text)


def disease_replaces_outcome(context: list[Concept]) -> bool:
    """Whether a disease after "What about" replaces the asked outcome of the question before it (its concepts,
    `context`), not its condition: the condition when that names a disease ("What about gestational diabetes?"
    after "Does metformin lower HbA1c in type 2 diabetes?"), else the outcome when it asks one ("What about
    fractures?" after "Does vitamin D prevent falls in older people?"), else the condition (added). A rule, not
    a model: one trained on the diseases questions name as outcome or as condition read them at chance
    (docs/FIGURES.md). `bench/follow_up_aspects.py` measures it."""
    if any(c.place == "setting" and names_disease(c.words) for c in context):
        return False
    return any(c.place == "outcome" for c in context)


def _head(concept: Concept) -> str:
    """The last word of a concept, casefolded and singular: what kind of thing it names ("replacement"); before a
    letter or a number, the word it qualifies ("vitamin" of "vitamin D", "hepatitis" of "hepatitis B")."""
    words = [w for w in _lows(concept.words) if len(w) > 1 and not w.isdigit()]
    return singular(words[-1]) if words else ""


def in_place_of(own: list[Concept], context: list[Concept]) -> list[Concept]:
    """A follow-up's concepts, each that names another of a kind the question before named (the same last word:
    "hip replacement" after "knee replacement", "ankle fractures" after "wrist fractures") in that concept's
    place, so that it replaces that concept. "What about hip replacement?" after "Does tranexamic acid reduce
    bleeding after knee replacement?" had read "hip replacement" as another entity (the aspect model's P of an
    outcome was low), replacing tranexamic acid and keeping the knee."""
    out = []
    for concept in own:
        kin = kin_of(concept, context)
        out.append(dataclasses.replace(concept, place=kin.place) if kin and kin.place else concept)
    return out


def kin_of(concept: Concept, context: list[Concept]) -> Concept | None:
    """The concept of the question before that names another thing of this concept's kind (`in_place_of`)."""
    head = _head(concept)
    return next((c for c in context if head and _head(c) == head and c.label != concept.label), None)


def carried_concepts(
    own: list[Concept],
    context: list[Concept],
    *,
    asks_again: bool,
    refers_back: bool,
    asks_of_harms: bool = False,
) -> list[Concept]:
    """What a chat follow-up still asks of the question it completes: the context's concepts of each aspect
    (entity, population or condition, outcome) the follow-up names none of. "And in children?" after "Does
    budesonide-formoterol reduce exacerbations in mild asthma?" asks of budesonide-formoterol and exacerbations
    in children (a dexamethasone trial in children had answered it). The asked outcome is carried only when the
    follow-up asks the same question again ("What about X?"); "Was it well tolerated?" asks another. A
    follow-up that refers back ("it", "its") asks of the context's entity whatever else it names. Otherwise
    nothing is carried when a "What about X?" names nothing readable: what it replaces is not known ("And for
    COPD?", "COPD" too common to be a concept). A follow-up that asks of harms ("How about the side effects?",
    words no concept is made of) names the outcome. One that names no entity or outcome and asks no "What
    about" asks the outcome before again: "How often does that happen?" after "Do statins cause muscle pain?"
    asks how often statins cause muscle pain, and "Does it work in children?" asks of the exacerbations asked
    before (both outcomes had been dropped; a rhabdomyolysis case report answered the first)."""
    names_outcome = asks_of_harms or (not asks_again and any(aspect(c) in ("entity", "outcome") for c in own))
    named = {aspect(c) for c in own} | ({"outcome"} if names_outcome else set())
    if refers_back:
        named.discard("entity")
    elif asks_again and not own and not asks_of_harms:
        return []
    labels = {c.label for c in own}
    return [c for c in context if aspect(c) not in named and c.label not in labels]


def passing_labels(in_passing_by_pmid: Mapping[str, list[str]]) -> list[str]:
    """The concepts some evidence abstract names only in passing (`Coverage.in_passing_by_pmid`), each once."""
    return list(dict.fromkeys(label for labels in in_passing_by_pmid.values() for label in labels))


def coverage(concepts: list[Concept], terms: dict[str, DocumentTerms]) -> dict[str, set[int]]:
    """For each PMID, the indexes of the concepts its abstract covers."""
    return {pmid: {i for i, c in enumerate(concepts) if covers(c, t)} for pmid, t in terms.items()}


def outcome_parts(
    concepts: list[Concept], covered: dict[str, set[int]], terms: dict[str, DocumentTerms]
) -> dict[str, tuple[int, int]]:
    """For each PMID, how much of the asked outcomes its abstract does not cover (`covered`, from `coverage`)
    it has: (outcomes whose rarest term it has, outcome terms it has). Where no abstract covers "muscle
    pain", those on muscle rank before those on statins alone."""
    out = {}
    for pmid, t in terms.items():
        part = [c for i, c in enumerate(concepts) if c.outcome and i not in covered[pmid]]
        out[pmid] = (
            sum(_has_term(c.terms[0], t) for c in part),
            sum(_has_term(term, t) for c in part for term in c.terms),
        )
    return out


def off_topic(
    topics: list[Concept],
    keys: list[Concept],
    lead: DocumentTerms,
    other: DocumentTerms,
    df: DocumentFrequencies,
) -> list[Concept]:
    """The topic concepts (`key_concepts` at the looser `agent.max_topic_df` bar) that the lead evidence
    abstract covers and another evidence abstract does not; none when the other covers a key or topic concept
    the lead does not that is at least as specific (`specificity`) as the rarest it lacks ("why statin taken
    at bedtime?": a bedtime-lovastatin trial stays beside a fluvastatin lead that never says "bedtime", rarer
    than the "statin" it lacks; a prostate-radiotherapy abstract does not stay beside a lead on palliative
    lung cancer that writes "radiation": "radiotherapy" is commoner than "palliative").
    Every abstract kept by the coverage check may still be on another question: an answer on breast-lesion
    biopsy quoted prostate-biopsy abstracts, one on stroke patients' home blood-pressure readings a
    central-venous-pressure one ("breast" is too common to be a key concept; the lead names it)."""
    lacking = [c for c in topics if covers(c, lead) and not covers(c, other)]
    if not lacking:
        return []
    rarest = min(specificity(c, df) for c in lacking)
    adds = [c for c in [*keys, *topics] if covers(c, other) and not covers(c, lead)]
    return [] if any(specificity(c, df) <= rarest for c in adds) else lacking


def specificity(concept: Concept, df: DocumentFrequencies) -> float:
    """How common the concept's rarest term is (`term_share`): lower is more specific."""
    return term_share(concept.terms[0], df)


def asked_outcome(question: str) -> str | None:
    """The question's asked outcome as written (the first chunk after an outcome verb), whatever its terms."""
    return next((" ".join(chunk) for chunk, role in _chunks(question) if role == "outcome"), None)


def asked_subject(question: str) -> str | None:
    """The entity the question asks about as written (the first chunk after its opening word)."""
    return next((" ".join(chunk) for chunk, role in _chunks(question) if role == "subject"), None)


def asked_setting(question: str) -> str | None:
    """The question's population or condition as written (the first chunk after a `SETTING_PREPOSITIONS` word)."""
    return next((" ".join(chunk) for chunk, role in _chunks(question) if role == "setting"), None)


ANIMALS_ONLY = "every cited study is in animals: none of them is in people"


def evidence_caveats(
    question: str, cited: list[Document], concepts: Sequence[Concept] = (), follow_up: str = ""
) -> list[str]:
    """What a reader must know about the cited abstracts as a whole: that all of them are animal studies,
    unless the question asks about animals ("Does edaravone protect the ovaries of rats ...?"); that all of
    them are in another group of people than the one asked of (`people_not_studied`), read from the chat
    follow-up's own words first; and each asked group of people, and the asked outcome, that the cited
    abstracts name only in their MeSH headings (`named_only_in_headings`: "Are statins associated with an
    increased risk of diabetes?" was answered from a statins-in-stroke study whose only "diabetes" is the
    heading "Diabetes Mellitus", a comorbidity), and so each disease asked in."""
    caveats = []
    if cited and not mentions_animals(question):
        if all(studied_in_animals(f"{d.title} {d.abstract}", d.mesh) for d in cited):
            caveats.append(ANIMALS_ONLY)
    if other := people_not_studied(question, cited, follow_up):
        caveats.append(f"every cited study is in {other[0]}: none of them mentions {other[1]}")
    asked = [
        c for c in concepts if names_people(c.words) or c.place == "outcome" or _disease_unnamed(c, cited)
    ]
    return caveats + [note for c in asked if (note := named_only_in_headings(c, cited))]


def people_not_studied(
    question: str, cited: Sequence[Document], follow_up: str = ""
) -> tuple[str, str] | None:
    """(the group every cited abstract is in, the asked group none mentions), read from a chat follow-up's own
    words first, then the question (`population_mismatch`). "And in adults?" after "Is atropine needed with
    ketamine sedation in children?" was answered from the trial in children, with nothing said: adults are too
    many to be a key concept, and the verdict read the children's trial."""
    return population_mismatch(follow_up, cited) or population_mismatch(question, cited)


def population_mismatch(question: str, cited: Sequence[Document]) -> tuple[str, str] | None:
    """(the group or groups every abstract is in, the group the question alone names that none mentions), or
    None when one mentions it or the question names none (`biocite.populations.other_population`: age, sex,
    species)."""
    found = [other_population(question, [d.title, d.abstract]) for d in cited] if question else []
    if not found or None in found:
        return None
    asked = {(m.axis, m.claim_group) for m in found if m}
    if len(asked) != 1:
        return None
    ((_, group),) = asked
    return " or ".join(sorted({m.passage_group for m in found if m})), group


def _disease_unnamed(concept: Concept, cited: list[Document]) -> bool:
    """A disease the question asks in ("after | a heart attack") no word of which is in the cited abstracts' titles
    or text: a statins-in-stroke study has only the heading "Myocardial Infarction" (a comorbidity). Not one the
    text names otherwise ("type 2 diabetes" for "diabetes mellitus", "HBeAg-negative CHB" for "e-antigen negative
    chronic hepatitis B"): the coverage check reads them by their rarest word, the reader by all of them."""
    if concept.place != "setting" or not names_disease(concept.words):
        return False
    stems = {s for w in concept.words for s in tokenize(w, stem=True)}
    return not any(stems & DocumentTerms(f"{d.title} {d.abstract}").stems for d in cited)


def named_only_in_headings(concept: Concept, cited: list[Document]) -> str | None:
    """How the cited abstracts cover an asked group of people when none names it in its title or text but some
    in their MeSH headings: "Does budesonide-formoterol ... in children?" was answered from a trial of patients
    aged 12 and over, indexed under "Child"; it reports no finding in children."""
    if any(covers(concept, DocumentTerms(f"{d.title} {d.abstract}")) for d in cited):
        return None
    headings = {d.pmid: [h for h in d.mesh if covers(concept, DocumentTerms(f"{h};"))] for d in cited}
    where = "; ".join(f"PMID {pmid}: {', '.join(found)}" for pmid, found in headings.items() if found)
    if not where:
        return None
    return (
        f"the cited abstracts name {concept.label} only in their MeSH headings ({where}), not in their text"
    )
