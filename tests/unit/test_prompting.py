"""Prompt files: system, optional worked examples (earlier chat turns), user."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from biocite.agent.prompting import load_prompt, parse_prompt

TEXT = """### system
Answer {style}.
### example user
Is water wet? {not a field}
### example assistant
yes
### user
{question}
"""


def test_examples_are_earlier_turns_sent_as_written() -> None:
    prompt = parse_prompt("t", TEXT)
    messages = prompt.messages(style="briefly", question="Is ice cold?")
    assert [type(m) for m in messages] == [SystemMessage, HumanMessage, AIMessage, HumanMessage]
    assert [m.content for m in messages] == [
        "Answer briefly.",
        "Is water wet? {not a field}",
        "yes",
        "Is ice cold?",
    ]


def test_a_prompt_without_examples_hashes_as_before() -> None:
    prompt = parse_prompt("t", "### system\nS\n### user\nU\n")
    assert prompt.examples == () and prompt.text() == "S\nU"


@pytest.mark.parametrize(
    "text",
    [
        "### user\nU\n### system\nS\n",  # user before system
        "### system\nS\n### example user\nQ\n### user\nU\n",  # an example without its answer
        "### system\nS\n### example assistant\nA\n### example user\nQ\n### user\nU\n",  # answer before question
        "### system\nS\n",  # no user section
    ],
)
def test_malformed_prompt_files_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="needs a '### system' section"):
        parse_prompt("t", text)


def test_every_shipped_prompt_parses() -> None:
    for name in ("contextualize", "rewrite", "generate", "relevance", "verdict", "support"):
        assert load_prompt(name).user
