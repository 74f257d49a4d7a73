"""Prompts live in `agent/prompts/<name>.txt` with a `### system` and a `### user` section."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str
    user: str

    def messages(self, **values: object) -> list[BaseMessage]:
        return [SystemMessage(self.system.format(**values)), HumanMessage(self.user.format(**values))]


@cache
def load_prompt(name: str) -> Prompt:
    text = resources.files("biocite.agent").joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8")
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("### "):
            current = line[4:].strip()
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    if set(sections) != {"system", "user"}:
        raise ValueError(f"prompt {name}.txt needs exactly a '### system' and a '### user' section")
    return Prompt(name, "\n".join(sections["system"]).strip(), "\n".join(sections["user"]).strip())
