"""Evaluator metrics on a hand-made run with rule-based judges (no models)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from biocite.evaluator.evaluate import Evaluator, bootstrap_ci, compare, summarise
from biocite.evaluator.judges import SUPPORT_LABELS, UNDETERMINED, Verdict
from biocite.evaluator.runs import Run, RunEntry
from biocite.evaluator.sources import DictSource, windows
from biocite.records import Answer, AnswerSentence, Citation, Document, Trace


class KeywordSupport:
    """Supports if the window has the sentence's first word; Contradicts on 'not <word>'; ??? undetermined."""

    name = "rule"
    labels = SUPPORT_LABELS

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        out = []
        for sentence, window in pairs:
            kw = sentence.split()[0].lower()
            if "???" in sentence:
                out.append(Verdict(label=UNDETERMINED, raw="??"))
            elif f"not {kw}" in window.lower():
                out.append(Verdict(label="Contradicts"))
            elif kw in window.lower():
                out.append(Verdict(label="Supports"))
            else:
                out.append(Verdict(label="Not relevant"))
        return out


class LengthCompleteness:
    name = "rule"
    labels = ["Required", "Unnecessary", "Borderline", "Inappropriate"]

    def judge(self, pairs):
        return [Verdict(label="Required" if len(s.split()) > 3 else "Unnecessary") for _, s in pairs]


DOCS = {
    "1": Document(
        pmid="1",
        title="Aspirin study",
        abstract="Aspirin reduces fever. It is cheap. Patients liked it. Dose was low.",
    ),
    "2": Document(pmid="2", title="Other", abstract="Ibuprofen is not ibuprofen-like. Zinc helps colds."),
    "3": Document(pmid="3", title="Zinc", abstract="Zinc shortens colds in adults."),
}


def _entry(topic: str, sentences: list[AnswerSentence], retrieved=(), abstained=False) -> RunEntry:
    ans = Answer(
        question="q?", sentences=sentences, abstained=abstained, trace=Trace(retrieved=list(retrieved))
    )
    return RunEntry(topic_id=topic, question="q?", answer=ans)


def _evaluator(metrics=("completeness", "correctness", "citation")) -> Evaluator:
    return Evaluator(
        metrics=list(metrics),
        source=DictSource(DOCS),
        completeness_judge=LengthCompleteness(),
        support_judge=KeywordSupport(),
    )


def test_windows() -> None:
    assert windows(["a", "b"]) == ["a b"]
    assert windows(["a", "b", "c", "d"]) == ["a b c", "b c d"]
    assert windows([]) == []


def test_citation_support_correctness_and_misattribution() -> None:
    entry = _entry(
        "t1",
        [
            AnswerSentence(
                text="Aspirin reduces fever in adults.", citations=[Citation(pmid="1"), Citation(pmid="2")]
            ),
            AnswerSentence(
                text="Zinc shortens colds.", citations=[Citation(pmid="1")]
            ),  # supported only by uncited 3
            AnswerSentence(
                text="Ibuprofen is ibuprofen-like.", citations=[Citation(pmid="2"), Citation(pmid="99")]
            ),
            AnswerSentence(text="Uncited claim here."),
        ],
        retrieved=["3"],
    )
    r = _evaluator().evaluate_entry(entry)
    s = r.sentences
    assert [c.label for c in s[0].citations] == ["Supports", "Not relevant"]
    assert s[0].correct and s[0].correct_via == "1" and not s[0].misattributed
    assert s[1].correct and s[1].misattributed and s[1].supported_by_uncited == ["3"]
    assert [c.label for c in s[2].citations] == ["Contradicts", "missing"] and s[2].correct is False
    assert s[3].correct is False and s[3].citations == []
    assert r.citations_missing == 1
    assert r.scores["citation_coverage"] == 0.75
    assert r.scores["support_rate"] == pytest.approx(1 / 4)  # judged pairs: S, NR, NR(zinc vs 1), C
    assert r.scores["contradiction_rate"] == pytest.approx(1 / 4)
    assert r.scores["correctness"] == pytest.approx(2 / 4)
    assert r.scores["misattribution_rate"] == pytest.approx(1 / 4)
    assert r.scores["completeness"] == pytest.approx(1 / 4)  # only sentence 1 has > 3 words
    assert "Aspirin reduces fever" in s[0].citations[0].evidence


def test_undetermined_is_counted_not_zero() -> None:
    entry = _entry("t2", [AnswerSentence(text="??? strange", citations=[Citation(pmid="1")])])
    r = _evaluator(["citation", "correctness"]).evaluate_entry(entry)
    assert r.sentences[0].citations[0].label == UNDETERMINED
    assert r.undetermined["citation"] == 1 and r.undetermined["correctness"] == 1
    assert r.scores["support_rate"] is None and r.scores["correctness"] is None


def test_abstention_is_its_own_outcome() -> None:
    ev = _evaluator()
    results = [
        ev.evaluate_entry(_entry("a", [], abstained=True)),
        ev.evaluate_entry(
            _entry("b", [AnswerSentence(text="Aspirin reduces fever a lot.", citations=[Citation(pmid="1")])])
        ),
    ]
    assert results[0].outcome == "abstained" and results[0].scores == {}
    summary = summarise(results, samples=200, seed=1)
    assert summary["abstained"] == 1 and summary["answered"] == 1
    assert summary["metrics"]["support_rate"] == {"mean": 1.0, "ci95": [1.0, 1.0], "n": 1}
    assert (
        summary["metrics"]["nugget_recall"]["n"] == 0 and summary["metrics"]["nugget_recall"]["mean"] is None
    )


def test_bootstrap_and_compare() -> None:
    lo, hi = bootstrap_ci([0.0, 1.0] * 20, samples=2000, seed=3)
    assert 0.3 < lo < 0.5 < hi < 0.7
    ev = _evaluator(["citation"])
    good = _entry("x", [AnswerSentence(text="Aspirin reduces fever.", citations=[Citation(pmid="1")])])
    bad = _entry("x", [AnswerSentence(text="Aspirin reduces fever.", citations=[Citation(pmid="3")])])
    out = compare([ev.evaluate_entry(good)], [ev.evaluate_entry(bad)], samples=100, seed=1)
    assert (
        out["metrics"]["support_rate"]["mean_diff"] == 1.0 and out["metrics"]["support_rate"]["n_paired"] == 1
    )


def test_run_level(tmp_path) -> None:
    ev = _evaluator(["citation"])
    run = Run(
        run_name="r",
        path="p",
        format="biocite",
        entries=[_entry("a", [AnswerSentence(text="Aspirin is cheap.", citations=[Citation(pmid="1")])])],
    )
    assert ev.evaluate_run(run)[0].scores["support_rate"] == 1.0


def test_unknown_metric() -> None:
    with pytest.raises(ValueError):
        Evaluator(metrics=["bogus"])


def test_uncited_candidates_are_the_most_similar() -> None:
    import numpy as np

    vocab = ["zinc", "aspirin", "cats"]

    def embed(texts):
        v = np.array([[float(w in t.lower()) for w in vocab] for t in texts]) + 1e-3
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    ev = Evaluator(metrics=["correctness"], embed=embed, uncited_per_sentence=1)
    doc_windows = {"a": ["cats purr"], "b": ["zinc shortens colds"], "c": ["aspirin lowers fever"]}
    out = ev._uncited_candidates(
        ["Zinc helps.", "Aspirin and zinc help."], [[], ["c"]], ["a", "b", "c"], doc_windows
    )
    assert out == [["b"], ["b"]]  # sentence 2 already cites c, so its best uncited candidate is b


def test_uncited_selection_is_cached(tmp_path) -> None:
    import numpy as np

    from biocite.evaluator.judges import JudgeCache

    calls = []

    def embed(texts):
        calls.append(len(texts))
        v = np.array([[float("zinc" in t.lower()), float("cats" in t.lower()), 1e-3] for t in texts])
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    doc_windows = {"a": ["cats purr"], "b": ["zinc shortens colds"], "c": ["dogs bark"]}
    args = (["Zinc helps."], [[]], ["a", "b", "c"], doc_windows)
    first = Evaluator(
        metrics=["correctness"], embed=embed, uncited_per_sentence=1, cache=JudgeCache(tmp_path / "c.jsonl")
    )._uncited_candidates(*args)
    again = Evaluator(
        metrics=["correctness"], embed=embed, uncited_per_sentence=1, cache=JudgeCache(tmp_path / "c.jsonl")
    )._uncited_candidates(*args)
    assert first == again == [["b"]] and len(calls) == 1
