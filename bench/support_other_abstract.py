"""The support model on real, long abstracts (issue 13): each kept sentence of the saved held-out generate runs
(`bench/agent_answers_generate_run*.json`, PubMedQA dev, seed-13 split by question) judged against its cited
abstract, a random other abstract of the embedded corpus, and the corpus abstract sharing the most words with it
(other than the cited one: a same-topic abstract). Citation-Integrity, where the other figures come from, stores
abstracts of at most 5 sentences; the corpus's have a median of 10.

Then the 200 held-out PubMedQA questions (the same split): each question's first conclusion sentence against its own
abstract with the conclusion removed, the near-miss (BM25) abstract and a random one
(`support_data.pubmedqa_passages`; the support model fits its aggregator on the held-back TRAIN questions' passages
built the same way, never on these), and the same conclusions changed by the HELD-OUT hard-case templates (negation,
direction, number, swap, extra clause; up to 60 of each) against their own abstract: the hard cases at real length.

Prints the share judged Supports for each. `--read-top K` judges each passage by its K best-ranked sentences only
(the experiment of reading a long abstract the way the aggregator was fitted: tried and not shipped, see
docs/FIGURES.md).

    python bench/support_other_abstract.py [--read-top 5]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import re
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from biocite.settings import load_settings  # noqa: E402
from biocite.support import SupportModel  # noqa: E402
from biocite.support_data import as_claims, hard_cases, pubmedqa_passages, sample_per_type  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]{4,}", text.lower()))


def kept_claims(docs: dict[str, str]) -> list[tuple[str, str]]:
    """(sentence, first cited PMID) of every kept non-bottom-line sentence of the saved runs."""
    claims = []
    for path in sorted(glob.glob(str(ROOT / "bench" / "agent_answers_generate_run*.json"))):
        for record in json.loads(Path(path).read_text())["records"]:
            for s in record["answer"].get("sentences", []):
                if (
                    s["citations"]
                    and not s["text"].startswith("Bottom line")
                    and s["citations"][0]["pmid"] in docs
                ):
                    claims.append((s["text"], s["citations"][0]["pmid"]))
    return claims


def supports(model: SupportModel, pairs: list[tuple[str, str]], top: int | None) -> float:
    if top is None:
        verdicts = model.check_many(pairs)
    else:  # the passage's `top` best-ranked sentences only, in their order in the abstract
        verdicts = []
        for claim, text in pairs:
            sents = [text[s:t] for s, t in model.judged_spans(claim, text)]
            ((p, cos),) = model.score([claim], [sents])
            keep = sorted(
                np.argsort(-model.aggregator.rank(claim, sents, p, cos), kind="stable")[:top].tolist()
            )
            verdicts.append(model.check_sentences(claim, [sents[i] for i in keep])[0])
    return round(sum(v.label == "supports" for v in verdicts) / len(verdicts), 3)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--read-top", type=int, default=None, help="judge by the K best-ranked sentences only"
    )
    args = parser.parse_args()
    model = SupportModel.load(load_settings(None, []))
    rows = (json.loads(line) for line in (ROOT / "data" / "corpus" / "abstracts.jsonl").open())
    docs = {r["pmid"]: r["abstract"] for r in rows}
    words = {p: _words(a) for p, a in docs.items()}
    pmids, rng = sorted(docs), random.Random(13)
    claims = kept_claims(docs)
    others = []
    for claim, cited in claims:
        claim_words = _words(claim)
        near = max((p for p in pmids if p != cited), key=lambda p: len(claim_words & words[p]))
        others.append((rng.choice([p for p in pmids if p != cited]), near))
    print(
        f"kept sentences: {len(claims)}; reading: {'all sentences' if args.read_top is None else f'top {args.read_top}'}"
    )
    for name, pick in (("cited", lambda i: claims[i][1]), ("random other", lambda i: others[i][0]),
                       ("most-overlapping other", lambda i: others[i][1])):  # fmt: skip
        pairs = [(claims[i][0], docs[pick(i)]) for i in range(len(claims))]
        print(f"  judged Supports against the {name} abstract: {supports(model, pairs, args.read_top)}")
    passages = pubmedqa_passages("held_out", 13)
    print(f"held-out PubMedQA conclusions: {sum(p.kind == 'pubmedqa_cited' for p in passages)}")
    for kind in ("cited", "near", "random"):
        pairs = [(p.claim, " ".join(p.sentences)) for p in passages if p.kind == f"pubmedqa_{kind}"]
        print(f"  judged Supports against the {kind} abstract: {supports(model, pairs, args.read_top)}")
    print("  changed by a held-out template, judged NOT Supports against their own abstract:")
    claims_by_id = {c.id: c for c in as_claims(passages)}
    cases, rng = hard_cases(list(claims_by_id.values()), held_out=True, seed=14), random.Random(14)
    for kind, items in sample_per_type(cases, 60, rng).items():
        pairs = [(h.claim, " ".join(claims_by_id[h.group].sentences)) for h in items]
        print(f"    {kind} (n = {len(items)}): {round(1 - supports(model, pairs, args.read_top), 3)}")


if __name__ == "__main__":
    main()
