"""A question that leans on an earlier one, asked with none ("What about in children?"), is recognised
(`reads_as_follow_up`), and no real question in data/ is taken for one."""

from __future__ import annotations

import json
from functools import cache

import pytest

from biocite.agent.checks import reads_as_follow_up
from biocite.agent.coverage import DocumentFrequencies
from biocite.index.readers import read_documents
from biocite.settings import DATA_DIR
from biocite.tokenize import tokenize


@cache
def corpus_frequencies() -> DocumentFrequencies:
    """Document frequencies of the embedded corpus, tokenized as the index tokenizes it."""
    docs = read_documents([DATA_DIR / "corpus" / "abstracts.jsonl"])
    return DocumentFrequencies.from_token_lists(tokenize(d.text, stem=True) for d in docs.values())


def data_questions() -> list[str]:
    pubmedqa = json.loads((DATA_DIR / "pubmedqa" / "dev_questions.json").read_text())
    questions = [q["question"] for q in pubmedqa.values()]
    for year in (2024, 2025):
        topics = json.loads((DATA_DIR / "biogen" / f"BioGen{year}topics.json").read_text())
        topics = topics.get("topics", topics) if isinstance(topics, dict) else topics
        questions += [t.get("question") or t.get("topic") or t.get("body") for t in topics]
    with (DATA_DIR / "kqa" / "questions_w_answers.jsonl").open() as f:
        questions += [json.loads(line)["Question"] for line in f if line.strip()]
    return questions


@pytest.mark.parametrize(
    "question",
    ["What about in children?", "Is it safe?", "Does it work in children?", "And in adults?",
     "How about side effects?", "Is this safe during pregnancy?", "Does it reduce mortality?",
     "What were the adverse events?", "What was the dose?", "What is the prognosis?",
     "How long was the follow-up?", "What about the long term?", "And at one year?", "How about in the long run?"],
)  # fmt: skip
def test_a_question_with_nothing_of_its_own_reads_as_a_follow_up(question: str) -> None:
    assert reads_as_follow_up(question, corpus_frequencies())


@pytest.mark.parametrize(
    "question",
    ["What about metformin in children?", "Is aspirin safe?", "Is it safe to take ibuprofen in pregnancy?",
     "What are the side effects of statins?", "Does exercise work in children?",
     "The yeast infection is not transferable?", "What is the dose of amoxicillin for otitis media?",
     # a definite phrase that says whose is a whole question, however common its words
     "What is the treatment of hypertension?", "What are the risk factors for stroke?",
     "What are the symptoms of diabetes?", "What is the effect of exercise on depression?",
     "How is the diagnosis of cancer made?", "What is the role of surgery in cancer?",
     "How does the immune system work?", "How do vaccines work in the body?"],
)  # fmt: skip
def test_a_question_naming_its_own_subject_does_not(question: str) -> None:
    assert not reads_as_follow_up(question, corpus_frequencies())


def test_no_question_in_the_data_reads_as_a_follow_up() -> None:
    questions = data_questions()
    assert len(questions) == 796 and all(questions)
    assert [q for q in questions if reads_as_follow_up(q, corpus_frequencies())] == []


def test_a_small_index_has_no_generic_terms() -> None:
    """In 40 abstracts every term is in over 1 % of them; under 50 documents a term still counts as the
    question's own, so the check does not fire."""
    small = DocumentFrequencies.from_token_lists([["children", "safe"]] * 40)
    assert not reads_as_follow_up("Is it safe in children?", small)
