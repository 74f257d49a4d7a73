"""Two names of one drug, one condition or one group of people: the international or British name and the United
States one, the lay name and the medical one ("newborns" / "neonates"), the old name and the current one.

A British clinician asks about "paracetamol", "adrenaline" or "ciclosporin"; American abstracts say
"acetaminophen", "epinephrine", "cyclosporine". The shipped corpus has 16 abstracts naming paracetamol and 17
naming acetaminophen, only 3 of them both; "Does ciclosporin cause hypertension?" abstained ("no indexed
abstract mentions 'ciclosporin'") over 19 abstracts on cyclosporine. "Does aspirin prevent heart attacks?"
said "not covered: heart attacks" while quoting "Aspirin reduces the risk for myocardial infarction": the
corpus has 69 abstracts on myocardial infarction and none says "heart attack"; it has 40 on "acute renal
failure" and 6 on "acute kidney injury", the name a clinician uses today. Search adds the other names of what
a query names to its BM25 terms (`biocite.index.hybrid`), evidence relevance counts a sentence's other name as
the question's term (`biocite.agent.evidence`), and the agent's coverage counts either name
(`biocite.agent.coverage`). A longer name wins over the names inside it: "stomach flu" is gastroenteritis, and
its "flu" is not influenza (`shadowed`). Measured in `bench/other_names.py`.

DRUGS pairs the recommended international nonproprietary names (rINN, which the United Kingdom adopted in
place of most former British Approved Names) with the United States Adopted Names where the two differ, and
the former British names still common in the literature: one word each side. Drugs that are related but not
the same (carbimazole and methimazole) are not listed. BRANDS pairs a patient's brand name ("Zoloft") with the
generic name abstracts write ("sertraline"). CONDITIONS pairs phrases that name the same disease;
a broader or narrower name ("kidney damage", "renal impairment") is not the same condition and is not listed,
nor a name whose words search would read apart into common ones ("cerebrovascular accident" would add
"accident" to every stroke query; "non-insulin-dependent diabetes" "insulin": "NIDDM" is listed instead).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TypeVar

from biocite.tokenize import tokenize

N = TypeVar("N", str, frozenset[str])

# (one name, another name of the same drug); a name may occur in several pairs (cyclosporin).
DRUGS: list[tuple[str, str]] = [
    ("paracetamol", "acetaminophen"),
    ("adrenaline", "epinephrine"),
    ("noradrenaline", "norepinephrine"),
    ("salbutamol", "albuterol"),
    ("levosalbutamol", "levalbuterol"),
    ("lignocaine", "lidocaine"),
    ("amethocaine", "tetracaine"),
    ("frusemide", "furosemide"),
    ("torasemide", "torsemide"),
    ("glibenclamide", "glyburide"),
    ("pethidine", "meperidine"),
    ("rifampicin", "rifampin"),
    ("ciclosporin", "cyclosporine"),
    ("ciclosporin", "cyclosporin"),
    ("cyclosporin", "cyclosporine"),
    ("aciclovir", "acyclovir"),
    ("valaciclovir", "valacyclovir"),
    ("isoprenaline", "isoproterenol"),
    ("orciprenaline", "metaproterenol"),
    ("hyoscine", "scopolamine"),
    ("suxamethonium", "succinylcholine"),
    ("thiopentone", "thiopental"),
    ("phenobarbitone", "phenobarbital"),
    ("amylobarbitone", "amobarbital"),
    ("quinalbarbitone", "secobarbital"),
    ("oxpentifylline", "pentoxifylline"),
    ("mesalazine", "mesalamine"),
    ("dicycloverine", "dicyclomine"),
    ("chlorphenamine", "chlorpheniramine"),
    ("dosulepin", "dothiepin"),
    ("ergometrine", "ergonovine"),
    ("mepyramine", "pyrilamine"),
    ("indometacin", "indomethacin"),
    ("beclometasone", "beclomethasone"),
    ("chlortalidone", "chlorthalidone"),
    ("clomifene", "clomiphene"),
    ("flucloxacillin", "floxacillin"),
    ("amoxicillin", "amoxycillin"),
    ("cefalexin", "cephalexin"),
    ("cefazolin", "cephazolin"),
    ("cefalotin", "cephalothin"),
    ("cefradine", "cephradine"),
    ("dexamfetamine", "dextroamphetamine"),
    ("amfetamine", "amphetamine"),
    ("metamizole", "dipyrone"),
    ("levomepromazine", "methotrimeprazine"),
    ("clomethiazole", "chlormethiazole"),
    ("busulfan", "busulphan"),
    ("sulfasalazine", "sulphasalazine"),
    ("sulfamethoxazole", "sulphamethoxazole"),
    ("cromoglicate", "cromoglycate"),
    ("cromoglicate", "cromolyn"),
    ("cromoglycate", "cromolyn"),
    ("guaifenesin", "guaiphenesin"),
    ("dimeticone", "dimethicone"),
    ("diamorphine", "heroin"),
    ("acetylsalicylic", "aspirin"),
]


# A brand name and the drug's generic name, which abstracts write: patients ask "Can Abilify make people
# gamble?" (it said "not covered: Abilify" over "Aripiprazole: a new risk factor for pathological gambling?"),
# "Can I take Claritin during the day?", "Is Valtrex safe in pregnancy?". United States brands of one active
# ingredient each, written from the prescribing labels, not fitted on any question; combinations (Augmentin,
# Percocet, Fioricet) and brands that are English words are left out. Search adds the generic name to a
# question naming the brand (not back); coverage counts either.
BRANDS: list[tuple[str, str]] = [
    ("abilify", "aripiprazole"), ("ambien", "zolpidem"), ("imodium", "loperamide"), ("claritin", "loratadine"),
    ("clarinex", "desloratadine"), ("zyrtec", "cetirizine"), ("xyzal", "levocetirizine"),
    ("allegra", "fexofenadine"), ("benadryl", "diphenhydramine"), ("flonase", "fluticasone"),
    ("singulair", "montelukast"), ("ventolin", "salbutamol"), ("proventil", "albuterol"),
    ("tylenol", "acetaminophen"), ("advil", "ibuprofen"), ("motrin", "ibuprofen"), ("aleve", "naproxen"),
    ("naprosyn", "naproxen"), ("celebrex", "celecoxib"), ("mobic", "meloxicam"), ("voltaren", "diclofenac"),
    ("toradol", "ketorolac"), ("ultram", "tramadol"), ("oxycontin", "oxycodone"), ("narcan", "naloxone"),
    ("imitrex", "sumatriptan"), ("robaxin", "methocarbamol"), ("flexeril", "cyclobenzaprine"),
    ("neurontin", "gabapentin"), ("lyrica", "pregabalin"), ("lipitor", "atorvastatin"), ("zocor", "simvastatin"),
    ("crestor", "rosuvastatin"), ("pravachol", "pravastatin"), ("zetia", "ezetimibe"), ("coumadin", "warfarin"),
    ("eliquis", "apixaban"), ("xarelto", "rivaroxaban"), ("pradaxa", "dabigatran"), ("lovenox", "enoxaparin"),
    ("plavix", "clopidogrel"), ("brilinta", "ticagrelor"), ("norvasc", "amlodipine"), ("zestril", "lisinopril"),
    ("prinivil", "lisinopril"), ("vasotec", "enalapril"), ("cozaar", "losartan"), ("diovan", "valsartan"),
    ("toprol", "metoprolol"), ("lopressor", "metoprolol"), ("tenormin", "atenolol"), ("coreg", "carvedilol"),
    ("lasix", "furosemide"), ("aldactone", "spironolactone"), ("cordarone", "amiodarone"),
    ("lanoxin", "digoxin"), ("glucophage", "metformin"), ("januvia", "sitagliptin"),
    ("jardiance", "empagliflozin"), ("farxiga", "dapagliflozin"), ("ozempic", "semaglutide"),
    ("wegovy", "semaglutide"), ("rybelsus", "semaglutide"), ("victoza", "liraglutide"),
    ("saxenda", "liraglutide"), ("trulicity", "dulaglutide"), ("mounjaro", "tirzepatide"),
    ("synthroid", "levothyroxine"), ("levoxyl", "levothyroxine"), ("tapazole", "methimazole"),
    ("fosamax", "alendronate"), ("prozac", "fluoxetine"), ("zoloft", "sertraline"), ("lexapro", "escitalopram"),
    ("celexa", "citalopram"), ("paxil", "paroxetine"), ("cymbalta", "duloxetine"), ("effexor", "venlafaxine"),
    ("wellbutrin", "bupropion"), ("zyban", "bupropion"), ("remeron", "mirtazapine"), ("desyrel", "trazodone"),
    ("buspar", "buspirone"), ("xanax", "alprazolam"), ("valium", "diazepam"), ("ativan", "lorazepam"),
    ("klonopin", "clonazepam"), ("seroquel", "quetiapine"), ("risperdal", "risperidone"),
    ("zyprexa", "olanzapine"), ("haldol", "haloperidol"), ("lamictal", "lamotrigine"),
    ("depakote", "valproate"), ("tegretol", "carbamazepine"), ("keppra", "levetiracetam"),
    ("dilantin", "phenytoin"), ("topamax", "topiramate"), ("ritalin", "methylphenidate"),
    ("concerta", "methylphenidate"), ("strattera", "atomoxetine"), ("aricept", "donepezil"),
    ("namenda", "memantine"), ("requip", "ropinirole"), ("mirapex", "pramipexole"), ("chantix", "varenicline"),
    ("nexium", "esomeprazole"), ("prilosec", "omeprazole"), ("prevacid", "lansoprazole"),
    ("protonix", "pantoprazole"), ("zantac", "ranitidine"), ("pepcid", "famotidine"), ("zofran", "ondansetron"),
    ("reglan", "metoclopramide"), ("phenergan", "promethazine"), ("dramamine", "dimenhydrinate"),
    ("dulcolax", "bisacodyl"), ("mucinex", "guaifenesin"), ("sudafed", "pseudoephedrine"),
    ("medrol", "methylprednisolone"), ("decadron", "dexamethasone"), ("zithromax", "azithromycin"),
    ("amoxil", "amoxicillin"), ("keflex", "cephalexin"), ("cipro", "ciprofloxacin"),
    ("levaquin", "levofloxacin"), ("flagyl", "metronidazole"), ("macrobid", "nitrofurantoin"),
    ("vibramycin", "doxycycline"), ("cleocin", "clindamycin"), ("rocephin", "ceftriaxone"),
    ("diflucan", "fluconazole"), ("lamisil", "terbinafine"), ("tinactin", "tolnaftate"),
    ("valtrex", "valacyclovir"), ("zovirax", "acyclovir"), ("tamiflu", "oseltamivir"),
    ("accutane", "isotretinoin"), ("differin", "adapalene"), ("protopic", "tacrolimus"),
    ("prograf", "tacrolimus"), ("cellcept", "mycophenolate"), ("plaquenil", "hydroxychloroquine"),
    ("humira", "adalimumab"), ("remicade", "infliximab"), ("enbrel", "etanercept"),
    ("herceptin", "trastuzumab"), ("avastin", "bevacizumab"), ("gleevec", "imatinib"),
    ("arimidex", "anastrozole"), ("flomax", "tamsulosin"), ("proscar", "finasteride"),
    ("propecia", "finasteride"), ("viagra", "sildenafil"), ("cialis", "tadalafil"), ("clomid", "clomiphene"),
    ("zyloprim", "allopurinol"), ("colcrys", "colchicine"), ("botox", "botulinum"),
]  # fmt: skip
# "a broken wrist" is a wrist fracture, and so for each bone people name ("Can vitamin C stop CRPS after a broken
# wrist?" said "not covered: broken wrist" over "Vitamin C reduces ... syndrome after wrist fractures").
BROKEN_BONES: list[tuple[str, str]] = [
    (f"broken {part}", f"{part} fracture")
    for part in """nose wrist hip ankle leg arm jaw rib ribs collarbone clavicle elbow finger toe bone bones shoulder
    skull heel foot hand thumb femur kneecap""".split()
]  # not "neck" (a "neck fracture" is mostly the femur's) nor "back" (vertebral fractures are written so)
# ... and by the bone's adjective where abstracts write that ("Is setting a broken nose without surgery good
# enough?" abstained over a study of closed reduction of nasal fractures).
BROKEN_BONES += [
    ("broken nose", "nasal fracture"),
    ("broken jaw", "mandibular fracture"),
    ("broken jaw", "mandible fracture"),
    ("broken heel", "calcaneal fracture"),
    ("broken heel", "calcaneus fracture"),
    ("broken kneecap", "patellar fracture"),
    ("broken thigh bone", "femoral fracture"),
    ("broken thighbone", "femoral fracture"),
    ("broken cheekbone", "zygomatic fracture"),
    ("broken wrist", "distal radius fracture"),
]
# Two medical names of one condition, an older and a newer one (lower case, words as the tokenizer splits them).
CONDITIONS: list[tuple[str, str]] = [
    ("acute kidney injury", "acute renal failure"),
    ("chronic kidney disease", "chronic renal failure"),
    ("deep vein thrombosis", "deep venous thrombosis"),
    ("postpartum depression", "postnatal depression"),
    ("motor neurone disease", "motor neuron disease"),
    ("motor neuron disease", "amyotrophic lateral sclerosis"),
    ("motor neurone disease", "amyotrophic lateral sclerosis"),
    ("type 2 diabetes", "niddm"),
    ("convulsions", "seizures"),  # the older name: "febrile convulsions" are febrile seizures
]
# A lay name and the medical one abstracts write: search adds the medical name to a query naming the lay one
# (not the other way: "hypertension" needs no "high blood pressure"); coverage counts either.
LAY_NAMES: list[tuple[str, str]] = [
    ("heart attack", "myocardial infarction"),
    ("high blood pressure", "hypertension"),
    ("cot death", "sudden infant death"),
    ("glandular fever", "infectious mononucleosis"),
    ("chickenpox", "varicella"),
    ("shingles", "herpes zoster"),
    ("whooping cough", "pertussis"),
    ("hay fever", "allergic rhinitis"),
    ("german measles", "rubella"),
    ("kidney stones", "nephrolithiasis"),
    ("bedwetting", "enuresis"),
    ("flu", "influenza"),
    ("stomach flu", "gastroenteritis"),  # not influenza: the longer name wins (`shadowed`)
    # "Does the flu jab cause Guillain-Barre?" said "not covered: flu jab"
    ("flu jab", "influenza vaccination"),
    ("flu jab", "influenza vaccine"),
    ("flu shot", "influenza vaccination"),
    ("flu shot", "influenza vaccine"),
    ("tb", "tuberculosis"),
    ("hives", "urticaria"),
    ("piles", "hemorrhoids"),
    ("piles", "haemorrhoids"),
    ("fainting", "syncope"),
    # "Does passing out after a concussion mean worse memory problems?" had the concept "passing" (cut at "out")
    ("passing out", "fainting"),
    ("passing out", "syncope"),
    ("passing out", "loss of consciousness"),
    ("itching", "pruritus"),
    ("nosebleed", "epistaxis"),
    ("nosebleeds", "epistaxis"),
    ("squint", "strabismus"),
    ("lazy eye", "amblyopia"),
    ("ringing in the ears", "tinnitus"),
    ("hair loss", "alopecia"),
    ("shortness of breath", "dyspnea"),
    ("shortness of breath", "dyspnoea"),
    ("water retention", "edema"),
    ("water retention", "oedema"),
    ("low blood sugar", "hypoglycemia"),
    ("low blood sugar", "hypoglycaemia"),
    ("high blood sugar", "hyperglycemia"),
    ("high blood sugar", "hyperglycaemia"),
    ("low blood pressure", "hypotension"),
    ("high cholesterol", "hypercholesterolemia"),
    ("high cholesterol", "hypercholesterolaemia"),
    ("low potassium", "hypokalemia"),
    ("low potassium", "hypokalaemia"),
    ("high potassium", "hyperkalemia"),
    ("high potassium", "hyperkalaemia"),
    ("raised potassium", "hyperkalemia"),  # "raise" and "raised" are one stem: "Does X raise potassium?"
    ("raised potassium", "hyperkalaemia"),
    ("low sodium", "hyponatremia"),
    ("low sodium", "hyponatraemia"),
    ("underactive thyroid", "hypothyroidism"),
    ("overactive thyroid", "hyperthyroidism"),
    ("blood clots", "thrombosis"),
    ("irregular heartbeat", "arrhythmia"),
    # "Do statins before heart bypass surgery stop an irregular heartbeat afterwards?" said "not covered: irregular
    # heartbeat" over "preoperative statin therapy seems to reduce AF development after CABG"
    ("irregular heartbeat", "atrial fibrillation"),
    ("blood poisoning", "sepsis"),
    ("lockjaw", "tetanus"),
    ("glue ear", "otitis media"),
    ("pink eye", "conjunctivitis"),
    ("cold sores", "herpes labialis"),
    ("brittle bones", "osteoporosis"),
    ("hardening of the arteries", "atherosclerosis"),
    ("mini stroke", "transient ischemic attack"),
    ("bed sores", "pressure ulcers"),
    ("pressure sores", "pressure ulcers"),
    ("gum disease", "periodontitis"),
    ("tooth decay", "dental caries"),
    ("water pills", "diuretics"),
    ("painkillers", "analgesics"),
    ("blood thinners", "anticoagulants"),
    ("birth control pills", "oral contraceptives"),
    ("stomach cancer", "gastric cancer"),
    ("bowel cancer", "colorectal cancer"),
    ("womb cancer", "endometrial cancer"),
    ("stomach ulcer", "gastric ulcer"),
    ("stomach ulcer", "peptic ulcer"),  # a patient's "stomach ulcer" is any peptic ulcer
    ("frozen shoulder", "adhesive capsulitis"),
    ("tennis elbow", "lateral epicondylitis"),
    ("slipped disc", "disc herniation"),
    # "Does base deficit predict death after head injury?" said "not covered: death; head injury" over "Base
    # deficit ... predict mortality in patients with severe traumatic brain injury"
    ("head injury", "traumatic brain injury"),
    ("death", "mortality"),
    # "Do IVF mothers have more C-sections?", "cocaine exposure in the womb", "a fever reaction to platelets"
    ("c section", "cesarean section"),
    ("c section", "caesarean section"),
    # "Do IVF mothers have more caesareans?" over "higher C-section rates after ART"
    ("caesarean", "c section"),
    ("cesarean", "c section"),
    ("womb", "uterus"),
    ("womb", "intrauterine"),
    ("fever", "febrile"),
    ("die", "mortality"),  # "Does base deficit tell us who will die after a head injury?"
    ("tummy tuck", "abdominoplasty"),
    ("group b strep", "group b streptococcus"),
    # "Is keyhole surgery for acid reflux safe in old people?"; "Can paramedics ...?" over "EMS professionals"
    ("keyhole surgery", "laparoscopic"),
    ("keyhole surgery", "laparoscopy"),
    ("acid reflux", "gastroesophageal reflux"),
    ("acid reflux", "gerd"),
    ("paramedics", "emergency medical services"),
    # "Do women do worse after gallbladder removal by keyhole surgery?"; "Is stitching the nose better than packing?"
    ("gallbladder removal", "cholecystectomy"),
    ("stitches", "sutures"),
    # "Does platelet-rich plasma help healing after wisdom teeth are pulled?"; "putting off an appendix operation"
    ("wisdom teeth", "third molars"),
    ("wisdom tooth", "third molar"),
    ("appendix operation", "appendectomy"),
    ("appendix removal", "appendectomy"),
    ("appendix surgery", "appendectomy"),
    # "What are the side effects of having your tonsils out?"; "the best treatment for a broken collarbone"
    ("tonsils out", "tonsillectomy"),
    ("tonsil removal", "tonsillectomy"),
    ("broken collarbone", "clavicle fracture"),
    ("broken collarbone", "clavicular fracture"),
    # "tiredness in Sjogren's", "being knocked out in a concussion", "Are repeated miscarriages linked to ...?"
    ("tiredness", "fatigue"),
    ("knocked out", "loss of consciousness"),
    ("miscarriage", "spontaneous abortion"),
    ("repeated miscarriages", "recurrent miscarriage"),
    ("repeated miscarriages", "recurrent spontaneous abortion"),
    ("saving the leg", "limb salvage"),  # "Is saving the leg better than amputation for quality of life?"
    ("saving the limb", "limb salvage"),
    # "Does inhaled heparin prevent pneumonia in patients on a breathing machine?" (concept "machine") over
    # "ventilated ICU patients"; "Are women helped differently by clot-busting drugs after a stroke?"
    ("breathing machine", "ventilator"),
    ("breathing machine", "mechanical ventilation"),
    ("clot busting", "thrombolysis"),
    ("clot busting", "thrombolytic"),
    # "Is having your gallbladder out as a day case safe?" quoted radiotherapy for gallbladder carcinoma
    ("gallbladder out", "cholecystectomy"),
    ("gallbladder surgery", "cholecystectomy"),
    ("strep throat", "streptococcal pharyngitis"),
    ("live longer", "survival"),  # "Does putting in a feeding tube help people live longer?"
    # "Does the age when undescended testicles are operated on affect whether the testicle survives?"
    ("testicle", "testis"),
    ("testicles", "testis"),
    # "Should I keep taking my diabetes tablets when I start insulin?"
    ("diabetes tablets", "oral hypoglycemic agents"),
    ("diabetes pills", "oral hypoglycemic agents"),
    # "Do ear drops after grommets cause a runny ear?" over "topical N-acetylcysteine after myringotomy ... otorrhea"
    ("grommets", "tympanostomy tubes"),
    ("grommets", "ventilation tubes"),
    ("runny ear", "otorrhea"),
    ("runny ear", "otorrhoea"),
    # "Can a CT scan find cancer that has spread to the bones?" quoted abstracts on CT of the abdomen
    ("spread to the bones", "bone metastases"),
    ("spread to the liver", "liver metastases"),
    ("spread to the brain", "brain metastases"),
    ("spread to the lungs", "lung metastases"),
    ("city", "urban"),  # "Does living in a city raise the risk of chronic disease?"
    # "Does secondhand smoke in childhood raise the risk of long-term disability?" found a study of family smoking
    # bans, not the one of "environmental tobacco smoke (ETS) at home during childhood"
    ("secondhand smoke", "environmental tobacco smoke"),
    ("secondhand smoke", "passive smoking"),
    ("second hand smoke", "environmental tobacco smoke"),
    ("second hand smoke", "passive smoking"),
    # "Do older people with cancer pressing on the spinal cord benefit from surgery as well as radiotherapy?"
    # said "not covered: cancer pressing" over "metastatic spinal cord compression (MSCC)"
    ("pressing on the spinal cord", "spinal cord compression"),
    # "Is keyhole removal of the adrenal gland safe for large lumps?" over "LA for adrenal masses larger than 7 cm"
    ("keyhole removal", "laparoscopic"),
    ("lumps", "masses"),  # plural only: a "mass" is also a weight ("body mass", "bone mass")
    # "Is a bone scan useful to decide where to amputate a diabetic foot?"
    ("bone scan", "bone scintigraphy"),
    # "Do more adults with chronic illness use alternative medicine than before?" said "not covered: chronic
    # illness" over "U.S. adults with chronic disease-related functional limitations"
    ("chronic illness", "chronic disease"),
    # "Is haemoglobin A1c useful in gestational diabetes?" said that no indexed abstract mentions it: abstracts
    # write "HbA1c" (14 of the embedded corpus) or "glycated hemoglobin" (8)
    ("a1c", "hba1c"),
    ("hemoglobin a1c", "hba1c"),
    ("haemoglobin a1c", "hba1c"),
    ("hba1c", "glycated hemoglobin"),
    ("hba1c", "glycated haemoglobin"),
    # "Is slow stomach emptying after a Whipple operation linked to keeping the pylorus?" said that no indexed
    # abstract mentions 'Whipple operation' (an eponym; abstracts write "pancreaticoduodenectomy")
    ("whipple operation", "pancreaticoduodenectomy"),
    ("whipple procedure", "pancreaticoduodenectomy"),
    ("stomach emptying", "gastric emptying"),
    ("joint pains", "arthralgia"),  # "Do joint pains from aromatase inhibitors go away ...?"
    ("joint pain", "arthralgia"),
    # "Do women with warning signs of gynaecological cancer see a specialist less ...?" ("not covered: warning")
    ("warning signs", "alarm symptoms"),
    ("warning signs", "red flags"),
    ("go away by itself", "spontaneous remission"),  # "Can polyarteritis nodosa go away by itself?"
    ("go away by itself", "spontaneous resolution"),
    ("go away on its own", "spontaneous remission"),
    ("go away on its own", "spontaneous resolution"),
    # "Does chemo before radiotherapy help ...?"; "Do you always need a neck artery scan before heart bypass
    # surgery?" said "not covered: neck artery scan; heart bypass surgery" over a carotid-stenosis-before-CABG study
    ("chemo", "chemotherapy"),
    ("heart bypass", "coronary artery bypass"),
    ("heart bypass", "cabg"),
    ("neck artery", "carotid artery"),
    ("neck arteries", "carotid arteries"),
    # "Does a steroid inhaler change how breathless an asthma attack feels?" quoted admissions for asthma over
    # "the effect of inhaled corticosteroids (ICSs)" on "the perception of dyspnea"
    ("steroid inhaler", "inhaled corticosteroids"),
    ("steroid inhalers", "inhaled corticosteroids"),
    ("inhaled steroids", "inhaled corticosteroids"),
    ("breathless", "dyspnea"),
    ("breathless", "dyspnoea"),
    ("breathlessness", "dyspnea"),
    ("breathlessness", "dyspnoea"),
    # "Does a high white cell count mean the injury is worse?" over "White blood cell count (WBC) is an easy, quick
    # and objective test"; "Is poor nutrition a cause of hardening of the arteries in dialysis patients?" said
    # "not covered: hardening of the arteries" over "Arterial calcification is a significant cardiovascular risk
    # factor in hemodialysis patients"
    ("white cell count", "white blood cell count"),
    ("white cell count", "leukocyte count"),
    ("hardening of the arteries", "arteriosclerosis"),
    ("hardening of the arteries", "arterial calcification"),
    ("hardening of the arteries", "vascular calcification"),
    # "Do heart pumps work as a bridge to a heart transplant?" said "not covered: heart pumps" over "long-term
    # implantable left ventricular assist devices"; "Is a fragile gullet lining a sign of eosinophilic esophagitis?"
    ("heart pump", "ventricular assist device"),
    ("heart pumps", "ventricular assist devices"),
    ("heart pump", "mechanical circulatory support"),
    ("heart pumps", "mechanical circulatory support"),
    ("gullet", "esophagus"),
    ("gullet", "oesophagus"),
    ("gullet", "esophageal"),
    ("gullet", "oesophageal"),
    *BROKEN_BONES,
]
# A lay name of a group of people and the one abstracts write ("Can isoniazid cause seizures in newborns?" over
# "Neonatal pyridoxine responsive convulsions due to isoniazid therapy"); used as LAY_NAMES are.
PEOPLE: list[tuple[str, str]] = [
    ("newborns", "neonates"),  # one stem each side: "newborn"; "neonate", "neonatal"
    ("kids", "children"),
    # "Do premature babies with sepsis benefit from IgM-enriched immunoglobulin?" over "septic VLBW infants"
    ("babies", "infants"),
    ("baby", "infant"),
    ("premature", "preterm"),
    ("old people", "elderly"),  # "old" alone is no concept ("a 5-year-old")
    ("teens", "adolescents"),
    ("teenagers", "adolescents"),
    ("carers", "caregivers"),  # "Do family meetings stop carers of people with dementia getting depressed?"
    # "Do GPs give too few antibiotics for stomach ulcers?" said "not covered: GPs" over "80 Italian primary care
    # physicians"
    ("gps", "general practitioners"),
    ("gps", "primary care physicians"),
    ("gp", "general practitioner"),
    ("gp", "primary care physician"),
    ("family doctors", "general practitioners"),
    ("family doctors", "primary care physicians"),
    ("family doctor", "general practitioner"),
    ("family doctor", "primary care physician"),
]


def _pairs_by_name(pairs: Iterable[tuple[N, N]]) -> dict[N, tuple[N, ...]]:
    """Each name -> its other names, both ways."""
    names: dict[N, list[N]] = {}
    for one, other in pairs:
        names.setdefault(one, []).append(other)
        names.setdefault(other, []).append(one)
    return {name: tuple(others) for name, others in names.items()}


# The particle of a phrasal lay name ("passing out", "knocked out", "tonsils out"): a stop word elsewhere, but
# without it the name is another, common word. Kept as a word of names and of the texts searched for them, so
# "first-pass imaging" adds no "syncope" to a search, "tonsils and adenoids" no "tonsillectomy".
PARTICLES = frozenset({"out", "up", "down", "off"})
# a word as written, a compound whole: the "out" of "knock-out mice" or the "up" of "follow-up" is no particle
_WORD = re.compile(r"[^\W_]+(?:[-/][^\W_]+)*")


@lru_cache(maxsize=4096)
def _word_stems(word: str) -> tuple[str, ...]:
    return (word,) if word in PARTICLES else tuple(tokenize(word, stem=True))


def _stems(text: str) -> list[str]:
    """The text's stems, stop words out but particles in."""
    return [stem for word in _WORD.findall(text.casefold()) for stem in _word_stems(word)]


def _stemmed(text: str) -> str:
    return " ".join(_stems(text))


@lru_cache(maxsize=1)
def _drug_names() -> dict[str, tuple[str, ...]]:
    return _pairs_by_name(DRUGS + BRANDS)


@lru_cache(maxsize=1)
def _condition_names() -> dict[str, tuple[str, ...]]:
    return _pairs_by_name(CONDITIONS + LAY_NAMES)


@lru_cache(maxsize=1)
def _people_names() -> dict[str, tuple[str, ...]]:
    return _pairs_by_name(PEOPLE)


def other_names(word: str) -> tuple[str, ...]:
    """The other names of the drug a lower-case word names ("paracetamol" -> ("acetaminophen",)); () if none."""
    return _drug_names().get(word, ())


def names_a_drug(phrase: str) -> bool:
    """Whether a lower-case phrase is one of the drugs of the tables (any of its names, or a brand)."""
    return phrase in _drug_names()


def people_names(word: str) -> tuple[str, ...]:
    """The other names of the group of people a lower-case word names ("newborns" -> ("neonates",))."""
    return _people_names().get(word, ())


def condition_names(phrase: str) -> tuple[str, ...]:
    """The other names of the condition a lower-case phrase names ("heart attack" -> ("myocardial
    infarction",)); () if none."""
    return _condition_names().get(phrase, ())


@lru_cache(maxsize=2)
def _searched_names(plain_only: bool = False) -> dict[str, tuple[str, ...]]:
    """Stemmed name -> the names search adds for it: both ways for drugs and medical names, lay -> medical
    (conditions and people), brand -> generic; with `plain_only`, only the last three (a patient's words)."""
    searched: dict[str, list[str]] = {}
    pairs = BRANDS + LAY_NAMES + PEOPLE
    if not plain_only:
        pairs = DRUGS + CONDITIONS + [(b, a) for a, b in DRUGS + CONDITIONS] + pairs
    for asked, written in pairs:
        searched.setdefault(_stemmed(asked), []).append(written)
    return {name: tuple(dict.fromkeys(names)) for name, names in searched.items()}


def search_names(text: str, *, plain_only: bool = False) -> list[str]:
    """The other names search adds for the drugs and conditions a text names, each once, none it already has:
    "Does aspirin prevent heart attacks?" -> ["myocardial infarction", "acetylsalicylic"]. A longer name wins
    over the names inside it: "stomach flu" adds "gastroenteritis", not "influenza". With `plain_only`, only
    the written names of a patient's words (brand, lay names, people)."""
    flat = f" {_stemmed(text)} "
    found: list[str] = []
    rest = flat
    for name, written in sorted(_searched_names(plain_only).items(), key=lambda kv: -len(kv[0].split())):
        if f" {name} " in rest:
            found.extend(written)
            rest = rest.replace(f" {name} ", " \0 ")
    added: dict[str, str] = {}  # stemmed -> as written: "cyclosporine" and "cyclosporin" are one term
    for name in found:
        stemmed = _stemmed(name)
        if f" {stemmed} " not in flat:
            added.setdefault(stemmed, name)
    return list(added.values())


def with_other_names(text: str) -> str:
    """The text with the names abstracts write for a patient's words, in parentheses, for an embedding model
    that knows the written name better than the lay or brand one: "Can Abilify make people gamble?
    (aripiprazole)", "Is a tummy tuck safe? (abdominoplasty)". Not a drug's other spelling ("ciclosporin"),
    which the model reads as near as the asked one (and one title fell below the relevance bar with it)."""
    names = search_names(text, plain_only=True)
    return f"{text} ({', '.join(names)})" if names else text


Names = tuple[tuple[frozenset[str], tuple[frozenset[str], ...]], ...]


@lru_cache(maxsize=1)
def _stemmed_pairs() -> dict[frozenset[str], tuple[frozenset[str], ...]]:
    """Stems of each name -> stems of each of its other names (every table, both ways)."""
    return _pairs_by_name(
        (frozenset(_stemmed(a).split()), frozenset(_stemmed(b).split())) for a, b in every_pair()
    )


def every_pair() -> list[tuple[str, str]]:
    """The pairs of every table: drugs, brands, conditions, lay names, groups of people."""
    return DRUGS + BRANDS + CONDITIONS + LAY_NAMES + PEOPLE


@lru_cache(maxsize=256)
def asked_names(question: str) -> Names:
    """The drugs and conditions a question names, as (their stems, the stems of each of their other names)."""
    terms = set(_stems(question))
    inside = shadowed(question)  # "stomach flu" asks nothing of influenza
    return tuple(
        (name, others) for name, others in _stemmed_pairs().items() if name <= terms and not name <= inside
    )


def named_otherwise(names: Names, text_terms: set[str]) -> set[str]:
    """The stems of the asked names that a text with these stems writes by another name: "lidocaine reduced
    the pain" writes the asked "lignocaine", "myocardial infarction" the asked "heart attack"."""
    return {t for name, others in names if any(o <= text_terms for o in others) for t in name}


@lru_cache(maxsize=1)
def _one_word_names() -> frozenset[str]:
    names = {n for pair in every_pair() for n in pair}
    stems = [_stems(n) for n in names]
    return frozenset(s[0] for s in stems if len(s) == 1)


@lru_cache(maxsize=4096)
def shadowed(text: str) -> frozenset[str]:
    """Stems of one-word names inside a longer name the text names, which mean something else there: "stomach
    flu" is gastroenteritis, so its "flu" is not influenza."""
    terms = set(_stems(text))
    inside = [name for name in _stemmed_pairs() if len(name) >= 2 and name <= terms]
    return frozenset().union(*inside) & _one_word_names()
