"""Build bench/agent_unanswerable_swapped.json (issue 12): real questions made unanswerable by swapping a key
entity for one absent from the corpus.

Source questions: the PubMedQA development questions of the HELD-OUT part of the split by question (seed 13,
60/40, `biocite.pubmedqa.split_questions`), in split order. For each, the key concept with the most
specific term (lowest document frequency in the index, `agent/coverage.py`) is replaced by a disease name
(when the concept reads like a disease) or a drug name from the lists below, taken in turn. Every
replacement is checked absent from every indexed title and abstract (case-insensitive substring), and
each written question records it under `absent_terms`, as in bench/agent_unanswerable.json.

    python bench/make_unanswerable_swapped.py [--n 70]
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from biocite.agent.coverage import DocumentFrequencies, key_concepts  # noqa: E402
from biocite.index.build import open_index  # noqa: E402
from biocite.pubmedqa import load_questions, split_questions  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

OUT = Path(__file__).with_name("agent_unanswerable_swapped.json")
DRUGS = """tirzepatide lecanemab donanemab nirsevimab inclisiran finerenone mavacamten sotatercept zuranolone
resmetirom vutrisiran tofersen teplizumab bimekizumab deucravacitinib risankizumab efgartigimod mirikizumab
olezarsen obicetrapib aprocitentan iptacopan pegcetacoplan crovalimab elacestrant capivasertib
zilebesiran lepodisiran fezolinetant daridorexant""".split()
DISEASES = [
    "mpox", "Oropouche fever", "alpha-gal syndrome", "VEXAS syndrome", "Nipah virus encephalitis",
    "Candida auris candidemia", "long COVID", "EVALI", "MIS-C", "chikungunya arthritis",
]  # fmt: skip
_DISEASE_LIKE = re.compile(
    r"(?:disease|syndrome|cancer|carcinoma|itis|osis|emia|pathy|diabetes|infection|disorder|tumou?r|"
    r"fracture|injury|failure|stroke|asthma|sepsis|lymphoma|leukemia|leukaemia|obesity|depression)\b",
    re.IGNORECASE,
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=70)
    args = parser.parse_args()
    settings = load_settings(None, [])
    index = open_index(settings)
    store = index.docs
    texts = [d.text.casefold() for d in store.get_many(store.pmids()).values()]
    absent = {t: not any(t.casefold() in x for x in texts) for t in [*DRUGS, *DISEASES]}
    drugs = [d for d in DRUGS if absent[d]]
    diseases = [d for d in DISEASES if absent[d]]
    df = DocumentFrequencies.from_token_lists(t for _, t in store.iter_tokens())
    _, held_out = split_questions(load_questions())
    out = []
    for question in held_out:
        concepts = key_concepts(question.question, df, settings.agent.max_concept_df)
        if not concepts:
            continue
        target = min(concepts, key=lambda c: min(df.share(t) if " " not in t else 1.0 for t in c.terms))
        pool = diseases if _DISEASE_LIKE.search(target.text) else drugs
        entity = pool[len(out) % len(pool)]
        swapped = question.question.replace(target.text, entity, 1)
        if swapped == question.question:
            continue
        out.append(
            {
                "question": swapped,
                "absent_terms": [entity.casefold()],
                "from_pmid": question.pmid,
                "swapped": target.text,
            }
        )
        if len(out) >= args.n:
            break
    spec = {
        "about": "Held-out PubMedQA questions with their most specific key concept swapped for an entity "
        "absent from the corpus (bench/make_unanswerable_swapped.py).",
        "questions": out,
    }
    OUT.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(out)} questions written to {OUT} ({len(drugs)} drugs, {len(diseases)} diseases absent)")


if __name__ == "__main__":
    main()
