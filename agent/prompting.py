"""Prompts live in `agent/prompts/<name>.txt`: a `### system` and a `### user` section, and optionally worked
examples before the user section (`### example user` / `### example assistant` pairs, sent as earlier turns
of the chat, unformatted)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

_EXAMPLE_USER, _EXAMPLE_ASSISTANT = "example user", "example assistant"


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str
    user: str
    examples: tuple[tuple[str, str], ...] = ()  # (user turn, assistant turn)

    def messages(self, **values: object) -> list[BaseMessage]:
        turns: list[BaseMessage] = [SystemMessage(self.system.format(**values))]
        for asked, answered in self.examples:
            turns += [HumanMessage(asked), AIMessage(answered)]
        return [*turns, HumanMessage(self.user.format(**values))]

    def text(self) -> str:
        """Everything the prompt sends besides the values (what a fingerprint of it hashes)."""
        return "\n".join([self.system, *(f"{u}\n{a}" for u, a in self.examples), self.user])


def parse_prompt(name: str, text: str) -> Prompt:
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("### "):
            sections.append((line[4:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
    names = [title for title, _ in sections]
    bodies = ["\n".join(body).strip() for _, body in sections]
    pairs = names[1:-1]
    if (
        names[:1] != ["system"]
        or names[-1:] != ["user"]
        or pairs != [_EXAMPLE_USER, _EXAMPLE_ASSISTANT] * (len(pairs) // 2)
    ):
        raise ValueError(
            f"prompt {name}.txt needs a '### system' section, then optional '### {_EXAMPLE_USER}' / "
            f"'### {_EXAMPLE_ASSISTANT}' pairs, then a '### user' section"
        )
    examples = tuple(zip(bodies[1:-1:2], bodies[2:-1:2], strict=True))
    return Prompt(name, bodies[0], bodies[-1], examples)


@cache
def load_prompt(name: str) -> Prompt:
    text = resources.files("biocite.agent").joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8")
    return parse_prompt(name, text)
