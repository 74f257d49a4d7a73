"""The shipped K-QA physician labels: each row keeps every physician's own label beside the majority."""

from collections import Counter

from biocite.kqa import load_nli_labels

LABELS = {"Entailment", "Neutral", "Contradiction"}


def test_nli_rows_keep_each_physicians_label_and_the_majority_agrees_with_them() -> None:
    rows = load_nli_labels()
    assert len(rows) == 399
    assert all(len(r.annotators) == 3 and set(r.annotators) <= LABELS for r in rows)
    for r in rows:
        label, votes = Counter(r.annotators).most_common(1)[0]
        if votes >= 2:
            assert r.label == label, r.claim
