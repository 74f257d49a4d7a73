"""Two names of one drug: the international or British name and the United States one.

A British clinician asks about "paracetamol", "adrenaline" or "ciclosporin"; American abstracts say
"acetaminophen", "epinephrine", "cyclosporine". The shipped corpus has 16 abstracts naming paracetamol and 17
naming acetaminophen, only 3 of them both; "Does ciclosporin cause hypertension?" abstained ("no indexed
abstract mentions 'ciclosporin'") over 19 abstracts on cyclosporine. Search adds a query word's other names
to its BM25 terms (`biocite.index.hybrid`), and the agent's coverage counts either name as the drug
(`biocite.agent.coverage`).

The pairs are the recommended international nonproprietary names (rINN, which the United Kingdom adopted in
place of most former British Approved Names) against the United States Adopted Names where the two differ,
and the former British names still common in the literature. One word each side: a two-word name ("glyceryl
trinitrate") would need phrase matching. Drugs that are related but not the same (carbimazole and
methimazole) are not listed.
"""

from __future__ import annotations

from functools import lru_cache

# (one name, another name of the same drug); a name may occur in several pairs (cyclosporin).
PAIRS: list[tuple[str, str]] = [
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


@lru_cache(maxsize=1)
def _other_names() -> dict[str, tuple[str, ...]]:
    names: dict[str, list[str]] = {}
    for one, other in PAIRS:
        names.setdefault(one, []).append(other)
        names.setdefault(other, []).append(one)
    return {name: tuple(others) for name, others in names.items()}


def other_names(word: str) -> tuple[str, ...]:
    """The other names of the drug a lower-case word names ("paracetamol" -> ("acetaminophen",)); () if none."""
    return _other_names().get(word, ())
