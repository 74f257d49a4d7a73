"""Claims about another population than their evidence (support rule 8: `biocite.populations`): what the rule
catches beyond the support model, and how often it fires on claims the evidence supports.

Found asking `biocite check "In children with type 2 diabetes, metformin improves glycaemic control." --text
"<a trial of 1,203 adults with type 2 diabetes ...>"`: supports 0.94 (a mouse study cited for patients, or a
trial in men cited for women, read the same way).

1. False alarms (the rule alone, no model): the rule firing on pairs the evidence supports.
   - Citation-Integrity SUPPORT claims against their cited abstract (TRAIN: where the word lists were set,
     after reading the TRAIN claims it fired on; DEV: held out, read once);
   - PubMedQA conclusions against their own abstract without the conclusion (the shared split: TRAIN 300 /
     HELD-OUT 200);
   - the agent's generated sentences kept in the saved held-out runs (`bench/agent_answers_generate_run*.json`)
     against each cited abstract.
2. Swapped populations, the support model alone vs with the rule (the share judged NOT supports), and the same
   claims as written (the share judged supports, which the rule must not lower):
   - corpus restatements: sentences of the embedded corpus that name one group on an axis, against their whole
     abstract, with that group's words replaced by the opposite group's (children <-> adults, women <-> men,
     patients <-> mice ...);
   - held-out PubMedQA conclusions that name one group, swapped the same way, against their abstract.
   The swaps use words of the rule's own lists, so these read as "how often the abstract names its
   population plainly enough", not as generalisation to unseen words.
3. Animal studies (the answers' caveat, `studied_in_animals`): on the corpus abstracts that carry MeSH, the
   word reading (names animals, mentions no people) against NLM's check tags (Animals and not Humans).

    python bench/populations.py
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from unittest import mock  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reversals import citint_rows, pubmedqa_rows, restatement_rows  # noqa: E402

from biocite.populations import other_population, studied_in_animals  # noqa: E402
from biocite.sentences import split_text  # noqa: E402
from biocite.support import SupportModel  # noqa: E402
from biocite.support_data import CORPUS_FILE, load_abstracts  # noqa: E402

Rows = list[tuple[str, list[str]]]
BENCH = Path(__file__).resolve().parent

# each group's words -> the opposite group's (the claims of section 2)
SWAPS = {
    "children": "adults", "child": "adult", "infants": "adults", "adolescents": "adults", "kids": "adults",
    "paediatric": "adult", "pediatric": "adult", "neonates": "adults", "newborns": "adults",
    "schoolchildren": "adults", "adults": "children", "adult": "child", "elderly": "paediatric",
    "women": "men", "men": "women", "woman": "man", "man": "woman", "mothers": "fathers", "fathers": "mothers",
    "girls": "boys", "boys": "girls",
    "patients": "mice", "people": "mice", "humans": "mice", "participants": "rats", "volunteers": "rats",
    "mice": "patients", "rats": "patients", "rodents": "patients", "dogs": "patients", "pigs": "patients",
    "rabbits": "patients",
}  # fmt: skip
_WORD = re.compile(r"\b(" + "|".join(sorted(SWAPS, key=len, reverse=True)) + r")\b", re.I)


def swapped_kind(claim: str) -> str | None:
    """The kind (age, sex, species) of the claim's first word the swap table knows."""
    m = _WORD.search(claim)
    return _kind(m.group(1).lower()) if m else None


def swapped(claim: str) -> str | None:
    """The claim with every word of the first-named group's axis replaced by the opposite group's."""
    kind = swapped_kind(claim)
    if kind is None:
        return None

    def repl(x: re.Match[str]) -> str:
        word = x.group(1)
        new = SWAPS[word.lower()]
        return new[0].upper() + new[1:] if word[0].isupper() else new

    # only the words of the same kind as the first one (people/animals, age, sex) are replaced
    out = _WORD.sub(lambda x: repl(x) if _kind(x.group(1).lower()) == kind else x.group(0), claim)
    return out if out != claim else None


def _kind(word: str) -> str:
    if word in ("women", "men", "woman", "man", "mothers", "fathers", "girls", "boys"):
        return "sex"
    if word in ("patients", "people", "humans", "participants", "volunteers") or SWAPS[word] == "patients":
        return "species"
    return "age"


def generated_rows() -> Rows:
    """Each kept sentence of the saved generated runs against each abstract it cites (the bottom line and
    the LLM's own verdict sentences left out)."""
    abstracts = load_abstracts()
    rows = []
    for path in sorted(BENCH.glob("agent_answers_generate_run*.json")):
        for record in json.loads(path.read_text())["records"]:
            for s in (record.get("answer") or {}).get("sentences", []):
                if s.get("kind") == "bottom_line":
                    continue
                for c in s.get("citations", []):
                    text = abstracts.get(str(c["pmid"]), "")
                    if text:
                        rows.append((s["text"], split_text(text)))
    return rows


def fires(rows: Rows) -> str:
    hits = [other_population(c, s) for c, s in rows]
    n = sum(h is not None for h in hits)
    axes = Counter(h.axis for h in hits if h)
    return f"{n}/{len(rows)} = {n / max(len(rows), 1):.3f}" + (f" {dict(axes)}" if axes else "")


def labels(model: SupportModel, rows: Rows, rule: bool) -> list[str]:
    off: Callable[..., None] = lambda *_: None  # noqa: E731
    with mock.patch("biocite.support.other_population", other_population if rule else off):
        return [model.check_sentences(c, s)[0].label for c, s in rows]


def share(values: list[str], want: Callable[[str], bool]) -> str:
    n = sum(map(want, values))
    return f"{n}/{len(values)} = {n / max(len(values), 1):.3f}"


def named_rows(rows: Rows, n: int) -> tuple[Rows, Rows]:
    """(swapped, as written): the first n rows whose claim names a group the swap table knows."""
    out, original = [], []
    for claim, sentences in rows:
        new = swapped(claim)
        if new:
            out.append((new, sentences))
            original.append((claim, sentences))
        if len(out) >= n:
            break
    return out, original


def animal_studies() -> str:
    """The word reading of an animal study against the MeSH check tags, on the corpus abstracts with MeSH."""
    tagged = found = false = n = 0
    with CORPUS_FILE.open() as f:
        for line in f:
            doc = json.loads(line)
            if not doc.get("mesh"):
                continue
            n += 1
            gold = studied_in_animals("", doc["mesh"])
            read = studied_in_animals(f"{doc.get('title', '')} {doc.get('abstract', '')}")
            tagged, found, false = tagged + gold, found + (gold and read), false + (read and not gold)
    return (
        f"{n} abstracts with MeSH: {tagged} tagged animal-only; the words find {found} of them, {false} false"
    )


def main() -> None:
    print("1. the rule firing on supported pairs (false alarms)")
    for split in ("train", "dev"):
        print(f"   Citation-Integrity {split} SUPPORT claims: {fires(citint_rows(split, 'supports'))}")
    print(
        f"   (for reference) Citation-Integrity dev REFUTE claims: {fires(citint_rows('dev', 'contradicts'))}"
    )
    for side in ("train", "held-out"):
        print(f"   PubMedQA {side} conclusions vs their abstract: {fires(pubmedqa_rows(side))}")
    print(f"   the agent's kept generated sentences vs each cited abstract: {fires(generated_rows())}")

    model = SupportModel.load()
    print("2. swapped populations judged NOT supports: support model alone -> with the rule;")
    print("   the same claims as written judged supports: alone -> with the rule")
    sets = [
        ("corpus restatements vs their abstract", named_rows(restatement_rows(), 200)),
        ("held-out PubMedQA conclusions vs their abstract", named_rows(pubmedqa_rows("held-out"), 200)),
    ]
    for name, (changed, original) in sets:
        row_kinds = [swapped_kind(c) for c, _ in original]
        kinds = Counter(row_kinds)
        alone, ruled = labels(model, changed, False), labels(model, changed, True)
        kept_alone, kept_ruled = labels(model, original, False), labels(model, original, True)
        print(f"   {name} ({len(changed)}; {dict(kinds)}):")
        not_sup: Callable[[str], bool] = lambda v: v != "supports"  # noqa: E731
        sup: Callable[[str], bool] = lambda v: v == "supports"  # noqa: E731
        print(f"      swapped, NOT supports: {share(alone, not_sup)} -> {share(ruled, not_sup)}")
        print(f"      as written, supports:  {share(kept_alone, sup)} -> {share(kept_ruled, sup)}")
        for kind in sorted(kinds):
            idx = [i for i, k in enumerate(row_kinds) if k == kind]
            print(
                f"      {kind}: swapped NOT supports {share([alone[i] for i in idx], not_sup)} -> "
                f"{share([ruled[i] for i in idx], not_sup)}"
            )
    print(f"3. animal studies, the words vs the MeSH check tags: {animal_studies()}")


if __name__ == "__main__":
    main()
