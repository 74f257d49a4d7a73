"""The support model's data, features and input checks (no model weights needed)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from biocite.app.check import parse_pairs
from biocite.errors import InputError
from biocite.support import (
    LABELS,
    RANK_FEATURES,
    Aggregator,
    Ranker,
    cheap_features,
    clause_quote_index,
    numbers,
    passage_features,
    phrases,
    sentence_spans,
    verbatim_index,
)
from biocite.support_data import (
    HARD_LABEL,
    TEMPLATES,
    Pair,
    balanced,
    bucket,
    calibration_side,
    citint_claims,
    clean_claim,
    fingerprint,
    hard_cases,
    pubmedqa_passages,
)


def test_phrases_have_exact_offsets_and_join_across_stopwords() -> None:
    text = "Intro. Aspirin reduced the risk of recurrent stroke by 22%."
    start = text.index("Aspirin")
    spans = phrases("Aspirin lowers the risk of stroke", text, start, len(text))
    assert spans and all(text[s.start : s.end] == s.text for s in spans)
    assert spans[0].text.startswith("Aspirin")
    assert any("risk of recurrent stroke" in s.text or s.text == "stroke" for s in spans)


def test_sentence_spans_index_the_text() -> None:
    text = "Aspirin reduced stroke. Bleeding was rare (P<.05). Costs fell."
    spans = sentence_spans(text)
    assert len(spans) == 3
    assert [text[a:b] for a, b in spans][1] == "Bleeding was rare (P<.05)."


def test_every_perturbation_type_has_train_and_held_out_templates() -> None:
    for kind, templates in TEMPLATES.items():
        flags = {held for _, held in templates.values()}
        assert flags == {True, False}, kind
        assert HARD_LABEL[kind] != "supports"


def test_hard_cases_change_the_claim_and_keep_template_sets_apart() -> None:
    claims, _ = citint_claims("dev")
    train = hard_cases(claims, held_out=False, seed=1)
    held = hard_cases(claims, held_out=True, seed=1)
    held_names = {n for t in TEMPLATES.values() for n, (_, h) in t.items() if h}
    assert train and held
    assert not {p.template for p in train} & held_names
    assert {p.template for p in held} <= held_names
    by_id = {c.id: c for c in claims}
    assert all(p.claim != by_id[p.group].claim and p.label != "supports" for p in train + held)
    assert {p.source.split(":")[1] for p in held} == set(HARD_LABEL)


def test_direction_flip_and_number_change() -> None:
    flip = TEMPLATES["direction"]["up_down"][0]
    assert flip("Exercise increased insulin sensitivity.", random.Random(0), []) == (
        "Exercise decreased insulin sensitivity."
    )
    change = TEMPLATES["number"]["replace"][0]
    new = change("Mortality fell by 22% in COVID-19 patients.", random.Random(0), [])
    assert new is not None and "22%" not in new and "COVID-19" in new


def test_clean_claim_drops_citation_markers() -> None:
    assert clean_claim("Aspirin works [<|cit|>] and (<|other_cit|>) helps.") == "Aspirin works and helps."


def test_splits_are_seeded_and_stable() -> None:
    assert bucket("Question A", 13) == bucket("question  a", 13)
    assert bucket("Question A", 13) != bucket("Question A", 14)
    share = np.mean([calibration_side(f"claim{i}", 13) for i in range(2000)])
    assert 0.1 < share < 0.2


def test_balanced_is_deterministic_and_balances_labels() -> None:
    pairs = [Pair(f"c{i}", "e", LABELS[i % 4] if i < 400 else "supports", "s", f"g{i}") for i in range(800)]
    a, b = balanced(pairs, 200, 3), balanced(pairs, 200, 3)
    assert a == b and fingerprint(a) == fingerprint(b)
    assert {lab: sum(p.label == lab for p in a) for lab in LABELS} == dict.fromkeys(LABELS, 50)


def test_cheap_features_and_aggregator_probabilities() -> None:
    assert cheap_features("Mortality fell by 22%.", "It fell by 22% overall.")[0] == 1.0
    assert cheap_features("Mortality fell by 22%.", "It fell by 35% overall.")[0] == 0.0
    assert len(cheap_features("a b", "c d")) == 2
    assert numbers("22% of 2,000 (3-fold), twice") == {22.0, 2000.0, 3.0, 2.0}
    rng = np.random.default_rng(0)
    cheap = [1.0, 0.5]
    x = np.stack(
        [passage_features(rng.dirichlet(np.ones(4), size=5), rng.random(5), cheap) for _ in range(40)]
    )
    y = [LABELS[i % 4] for i in range(40)]
    agg = Aggregator.fit(x, y, seed=0)
    p = agg.predict_proba(x)
    assert p.shape == (40, 4) and np.allclose(p.sum(axis=1), 1)
    again = Aggregator.model_validate_json(agg.model_dump_json())
    assert np.allclose(again.predict_proba(x), p)


def test_ranker_orders_sentences_by_learned_score() -> None:
    rng = np.random.default_rng(1)
    x = rng.random((60, len(RANK_FEATURES)))
    ranker = Ranker.fit(x, list(x[:, 3] > 0.5), seed=0)  # the cosine column decides
    probs = np.full((3, 4), 0.25)
    cos = np.array([0.1, 0.9, 0.3])
    agg = Aggregator(coef=[], intercept=[], mean=[], scale=[], ranker=ranker)
    assert int(np.argmax(agg.rank("c", ["a", "b", "d"], probs, cos))) == 1


def test_pairs_file_errors_name_the_line(tmp_path) -> None:
    good = {"claim": "Aspirin reduces stroke.", "evidence": "Aspirin reduced stroke."}
    cases = {
        "not valid JSON": "{oops",
        "not valid UTF-8": "\udcff",
        "field 'evidence' or 'pmids' is missing": json.dumps({"claim": "x"}),
        "the claim is empty": json.dumps({"claim": " ", "evidence": "y"}),
        "field 'pmids' must be": json.dumps({"claim": "x", "pmids": []}),
        "field 'pmids': a PMID is empty": json.dumps({"claim": "x", "pmids": [" "]}),
        "field 'pmids': 51 PMIDs; the limit is 50": json.dumps({"claim": "x", "pmids": list(range(51))}),
        "field 'evidence': the evidence text is empty": json.dumps({"claim": "x", "evidence": " "}),
        "field 'evidence': the evidence text is 50001 characters": json.dumps(
            {"claim": "x", "evidence": "a" * 50_001}
        ),
        "the claim is 2001 characters": json.dumps({"claim": "c" * 2001, "evidence": "y"}),
    }
    for message, bad in cases.items():
        path = tmp_path / "pairs.jsonl"
        path.write_text(json.dumps(good) + "\n" + bad + "\n", errors="surrogateescape")
        with pytest.raises(InputError, match=f"pairs.jsonl:2: .*{message}"):
            parse_pairs(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps({"claim": "y", "pmids": ["1", 2]}) + "\n")
    rows = parse_pairs(path)
    assert [n for n, _ in rows] == [1, 2] and rows[1][1].pmids == ["1", "2"]
    # written on Windows: a byte-order mark and CRLF line ends are read; an empty file is refused
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(good).encode() + b"\r\n")
    assert parse_pairs(path)[0][1].claim == good["claim"]
    path.write_text("\n")
    with pytest.raises(InputError, match="pairs.jsonl: the file is empty"):
        parse_pairs(path)


def test_verbatim_index_finds_the_claim_as_a_whole_sentence_only() -> None:
    sentences = [
        "Methods were standard.",
        "Ketamine sedation was successful and well tolerated in all cases.",
    ]
    assert verbatim_index("ketamine sedation was successful, and well tolerated in all cases", sentences) == 1
    assert verbatim_index("Ketamine sedation was successful.", sentences) is None  # a part is not a copy
    assert verbatim_index("It is not true that methods were standard.", sentences) is None
    assert verbatim_index("", sentences) is None
    # two consecutive sentences, as an extractive answer quotes a sentence that refers back
    pair = f"{sentences[0]} {sentences[1]}"
    assert verbatim_index(pair, sentences) == 1
    assert verbatim_index(f"{sentences[1]} {sentences[0]}", sentences) is None
    # an extractive answer quotes "CONCLUSIONS: X" as "X" (agent/extractive.py)
    assert (
        verbatim_index("Ketamine was safe.", ["Methods were standard.", "CONCLUSIONS: Ketamine was safe."])
        == 1
    )
    # an abbreviation the passage defines, written out or not (held-out generate run 121-150: the conclusion
    # with "MSCC" spelled out was judged not Supports against its own abstract)
    abstract = [
        "We studied metastatic spinal cord compression (MSCC) in the elderly.",
        "Elderly patients with MSCC did not benefit from surgery in addition to radiotherapy.",
    ]
    spelled = "Elderly patients with metastatic spinal cord compression did not benefit from surgery in addition to radiotherapy."
    assert verbatim_index(spelled, abstract) == 1
    assert verbatim_index(spelled, abstract[1:]) is None  # not defined in what was given
    assert verbatim_index(spelled, abstract[1:], passage=" ".join(abstract)) == 0
    assert verbatim_index("We studied MSCC in the elderly.", abstract) == 0
    assert verbatim_index("Elderly patients with MSCC benefited from surgery.", abstract) is None


CLAUSE_SENTENCES = [
    "Ketamine sedation was successful and well tolerated in all cases.",
    "Since BP readings in a GP surgery are often raised, GPs might consider home readings.",
    "If the dose is doubled, mortality increases.",
    "Aspirin reduced stroke in men but not in women.",
    "The difference between drug A and drug B was significant.",
    "It is not true that methods were standard.",
    "Mortality was reduced with drug A and drug B combined.",
    "Pain was reduced in the first week, and function improved by the third.",
    "In patients with preoperative prostatic infiltration, prostatic resection is necessary.",
]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("Ketamine sedation was successful.", 0),  # the first conjunct: "A and B" asserts A
        ("GPs might consider home readings.", 1),  # the main clause after a causal lead-in
        ("The study found that GPs might consider home readings.", 1),  # a reporting frame is read through
        ("Mortality increases.", None),  # the main clause of a condition is not asserted
        ("Aspirin reduced stroke.", None),  # a restriction cut off is left to the model
        ("The difference between drug A.", None),  # a joint argument cut in two
        ("Methods were standard.", None),  # not a clause the sentence asserts
        ("Mortality was reduced with drug A.", None),  # "A and B combined": A alone was not tested
        ("Pain was reduced in the first week.", 7),  # ", and ..." joins two clauses
        (
            "Prostatic resection is necessary in patients with preoperative prostatic infiltration.",
            8,
        ),  # lead moved
        ("Mortality increases if the dose is doubled.", 2),  # a condition moved to the end is still stated
        ("Prostatic resection is necessary.", None),  # a restriction cut off is not a moved lead
        ("However, GPs might consider home readings.", 1),  # a discourse marker on the claim is read through
        ("The evidence suggests that GPs might consider home readings.", 1),
        ("Studies found that GPs might consider home readings.", 1),
        ("However, mortality increases.", None),  # the marker goes, the condition stays cut off
        ("Ketamine sedation", None),  # too short to be a claim
        ("", None),
    ],
)
def test_clause_quote_index_accepts_only_clauses_the_sentence_asserts(
    claim: str, expected: int | None
) -> None:
    assert clause_quote_index(claim, CLAUSE_SENTENCES) == expected


def test_near_miss_scores_are_rank_bm25s_own() -> None:
    """The near-miss abstracts (and so the training pairs and their fingerprint) do not depend on the speed-up:
    40 dev claims score the same floats over the Citation-Integrity abstracts as with rank-bm25's BM25Okapi."""
    from rank_bm25 import BM25Okapi

    from biocite.support_data import NearMiss
    from biocite.tokenize import tokenize, tokenize_many

    claims, corpus = citint_claims("dev")
    near = NearMiss({str(k): v for k, v in corpus.items()})
    reference = BM25Okapi(list(tokenize_many(" ".join(near.docs[i]) for i in near.ids)))
    for claim in claims[:40]:
        query = tokenize(claim.claim) + ["no-such-term"]
        assert np.array_equal(near.bm25.get_scores(query), reference.get_scores(query))


def test_pubmedqa_passages_are_whole_abstracts_without_their_conclusion_and_never_held_out() -> None:
    """The aggregator's real-length rows: a held-back TRAIN question's conclusion against its own abstract (the
    conclusion removed, so no sentence quotes it) and against two other abstracts; no held-out question."""
    rows = pubmedqa_passages("train", 13, keep=lambda group: calibration_side(group, 13))
    cited = [r for r in rows if r.kind == "pubmedqa_cited"]
    assert cited and all(r.label == "supports" for r in cited)
    assert {r.kind for r in rows} == {"pubmedqa_cited", "pubmedqa_near", "pubmedqa_random"}
    assert all(r.label == "not_relevant" for r in rows if r.kind != "pubmedqa_cited")
    assert all(r.claim not in " ".join(r.sentences) for r in cited)
    assert float(np.median([len(r.sentences) for r in cited])) >= 8  # Citation-Integrity's have 5
    held_out = {r.claim for r in pubmedqa_passages("held_out", 13)}
    assert held_out and not held_out & {r.claim for r in rows}
