"""The terminal chat and the renderer, driven by scripted input over the fake index."""

from __future__ import annotations

import io

from agent_fakes import FakeRetriever, agent_settings, fake_model, overlap_judge
from rich.console import Console

from biocite.agent.graph import Agent, make_checkpointer
from biocite.app.chat import ChatSession


def scripted(lines: list[str], end: type[BaseException] = EOFError):
    queue = list(lines)

    def read() -> str:
        if not queue:
            raise end()
        return queue.pop(0)

    return read


def session(*responses: str) -> tuple[ChatSession, io.StringIO]:
    out = io.StringIO()
    agent = Agent(
        agent_settings(),
        retriever=FakeRetriever(),
        chat_model=fake_model(*responses),
        judge=overlap_judge,
        checkpointer=make_checkpointer(),
    )
    return ChatSession(agent, Console(file=out, width=200, color_system=None), mode="generate"), out


def test_chat_streams_tokens_renders_and_answers_commands() -> None:
    chat, out = session("Metformin reduced body weight in adults with type 2 diabetes [1].")
    chat.run(
        scripted(
            [
                "/sources",
                "/typo",  # unknown before any answer too, not "no answer yet"
                "Does metformin reduce body weight in type 2 diabetes?",
                "/sources",
                "/evidence 1",
                "/evidence 7",
                "/evidence x",
                "/abstract 1",
                "/abstract 9",
                "/abstract x",
                "/bogus",
                "/reset",
                "/sources",
                "Cuál es el tratamiento de la diabetes en los niños con metformina?",
                "/quit",
                "never read",
            ]
        )
    )
    text = out.getvalue()
    assert "no answer yet" in text
    assert "draft: Metformin reduced body weight" in text  # streamed tokens
    assert "· retrieve" in text and "· verify" in text  # progress
    assert "1. Metformin reduced body weight in adults with type 2 diabetes. [1]" in text
    assert "https://pubmed.ncbi.nlm.nih.gov/111/" in text
    assert "no sentence 7" in text and "usage: /evidence N" in text and "unknown command /bogus" in text
    assert "conversation cleared" in text
    assert text.count("no answer yet") == 2 and "unknown command /typo" in text
    # /abstract N: reference N's whole abstract, numbered, the quoted sentence marked and the others not
    lines = [line.strip() for line in text.splitlines()]
    assert "PMID 111 · 2020 · https://pubmed.ncbi.nlm.nih.gov/111/" in lines
    assert "»  0  Metformin reduced body weight in adults with type 2 diabetes." in lines
    unquoted = [
        line for line in lines if line.endswith("Gastrointestinal adverse events were the most common.")
    ]
    assert unquoted and unquoted[0][0].isdigit()  # numbered, not marked
    assert "no reference 9; the answer cites 1" in text and "usage: /abstract N" in text
    assert "error: the question does not look like English" in text
    assert chat.last is None  # cleared by /reset, and the refused question gave no answer


def test_chat_exits_cleanly_on_ctrl_c_at_the_prompt() -> None:
    chat, out = session("x")
    chat.run(scripted([], end=KeyboardInterrupt))
    assert "/quit" in out.getvalue()
