"""HTML report: self-contained, escaped, with the drill-down and plots."""

from __future__ import annotations

from biocite.evaluator.evaluate import CitationResult, QuestionResult, SentenceResult, summarise
from biocite.evaluator.nuggets import NuggetResult
from biocite.evaluator.report import highlight, render


def _doc():
    q = QuestionResult(
        topic_id="1",
        question="<script>alert(1)</script>?",
        outcome="answered",
        sentences=[
            SentenceResult(
                text="Aspirin reduces fever & pain.",
                completeness="Required",
                correct=True,
                citations=[CitationResult(pmid="12", label="Supports", evidence="Aspirin reduced fever.")],
            )
        ],
        scores={"support_rate": 1.0},
    )
    a = QuestionResult(topic_id="2", question="q", outcome="abstained", abstain_reason="thin <evidence>")
    return {
        "run": {"name": "r<1>", "path": "p", "format": "biocite"},
        "judges": {"judge": "head"},
        "overall": summarise([q, a], 100, 1),
        "questions": [q.model_dump(), a.model_dump()],
        "timing": {"seconds": 1.0},
        "notes": ["proxy"],
    }


def test_render_escapes_and_is_self_contained() -> None:
    html = render(_doc())
    assert "<script>" not in html and "&lt;script&gt;" in html and "thin &lt;evidence&gt;" in html
    assert "<svg" in html and "support_rate" in html and "<details open>" in html
    assert "src=" not in html and "<link" not in html  # nothing loaded from outside
    assert "<mark>Aspirin</mark>" in html and "<mark>fever</mark>" in html


def test_highlight_marks_shared_words() -> None:
    assert highlight("Fever <b> fell", "fever dropped") == [
        ("", False),
        ("Fever", True),
        (" <b> fell", False),
    ]


def test_evidence_markup_is_escaped_inside_marks() -> None:
    doc = _doc()
    doc["questions"][0]["sentences"][0]["citations"][0]["evidence"] = "Aspirin <img src=x> reduced fever."
    html = render(doc)
    assert "&lt;img src=x&gt;" in html and "<img" not in html and "<mark>Aspirin</mark>" in html


def test_unjudged_citations_are_listed_not_hidden() -> None:
    doc = _doc()
    doc["questions"][0]["sentences"][0]["citations"] = []
    doc["questions"][0]["sentences"][0]["cited"] = ["77"]
    html = render(doc)
    assert "PMID 77" in html and "citation support not evaluated" in html


def test_a_matched_nuggets_number_is_named_by_the_matchers_score() -> None:
    """The judges info names the score; an evaluation saved before it was recorded has it in the model id."""
    doc = _doc()
    nuggets = NuggetResult(
        answer_nuggets=["Aspirin reduces fever"],
        gold_nuggets=["Aspirin lowers fever"],
        alignments=[(0, 0, 0.91, 0.88)],
        precision=1.0,
        recall=1.0,
        nuggetizer="clauses",
    )
    doc["questions"][0]["nuggets"] = nuggets.model_dump()
    assert "(token recall 0.91, P 0.88)" in render(doc)
    doc["judges"] = {"nugget_matcher": "minilm:llm-yes:llm:qwen1.5b:bgmm:abc:t0.5", "nugget_score": "llm-yes"}
    assert "(LLM P(yes) 0.91, P 0.88)" in render(doc)
    del doc["judges"]["nugget_score"]
    assert "(LLM P(yes) 0.91, P 0.88)" in render(doc)
