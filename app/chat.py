"""`biocite chat`: a terminal chat over the answering graph. Follow-ups are rewritten from the conversation
held by a LangGraph checkpointer (one thread per session, new thread on /reset); tokens stream as written,
each step shows progress, and the verified answer is printed with its evidence."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from rich.console import Console
from rich.markup import escape

from biocite.agent.graph import Agent, make_checkpointer
from biocite.agent.render import render_answer, render_evidence, render_references
from biocite.app.documents import document_views, print_document
from biocite.errors import BiociteError
from biocite.index.hybrid import open_retriever
from biocite.records import Answer
from biocite.settings import Settings

HELP = (
    "Ask a biomedical question; follow-ups use the conversation.\n"
    "/sources  references of the last answer   /evidence N  evidence behind sentence N\n"
    "/abstract N  the whole abstract of reference N, its quoted sentences marked\n"
    "/reset    forget the conversation          /quit        leave (or Ctrl-D)"
)
QUIET_NODES = {"contextualize", "finalize"}


class ChatSession:
    def __init__(self, agent: Agent, console: Console, mode: str | None = None) -> None:
        self.agent = agent
        self.console = console
        self.mode = mode
        self.thread_id = uuid.uuid4().hex
        self.last: Answer | None = None

    def command(self, line: str) -> bool:
        """Run a /command; False means quit."""
        name, _, arg = line.partition(" ")
        if name in ("/quit", "/exit", "/q"):
            return False
        if name == "/reset":
            self.thread_id, self.last = uuid.uuid4().hex, None
            self.console.print("[dim]conversation cleared[/dim]")
        elif name == "/help":
            self.console.print(HELP)
        elif name not in ("/sources", "/evidence", "/abstract"):
            self.console.print(f"[yellow]unknown command {escape(name)}[/yellow]; /help lists them")
        elif self.last is None:
            self.console.print("[yellow]no answer yet[/yellow]")
        elif name == "/sources":
            render_references(self.console, self.last) if self.last.references else self.console.print(
                "no sources"
            )
        elif name == "/evidence":
            if not arg.strip().isdigit():
                self.console.print("[yellow]usage: /evidence N (a sentence number)[/yellow]")
            else:
                render_evidence(self.console, self.last, int(arg))
        elif not arg.strip().isdigit():
            self.console.print(
                "[yellow]usage: /abstract N (a reference number, as /sources lists them)[/yellow]"
            )
        else:
            self.show_abstract(int(arg))
        return True

    def show_abstract(self, number: int) -> None:
        """`/abstract N`: reference N's whole abstract, the sentences the answer quotes from it marked."""
        assert self.last is not None
        pmids = self.last.cited_pmids  # numbered as the answer's [N] marks
        if not 1 <= number <= len(pmids):
            self.console.print(f"[yellow]no reference {number}; the answer cites {len(pmids)}[/yellow]")
            return
        pmid = pmids[number - 1]
        quoted = {
            e.sentence_index
            for s in self.last.sentences
            for c in s.citations
            if c.pmid == pmid
            for e in c.evidence
        }
        for view in document_views(self.agent.retriever.documents, [pmid]):
            print_document(self.console, view, quoted)

    def answer(self, question: str) -> None:
        streaming = False
        for event in self.agent.stream(question, mode=self.mode, thread_id=self.thread_id):
            kind = event["event"]
            if kind == "token":
                if not streaming:
                    self.console.print("[dim]draft:[/dim] ", end="")
                    streaming = True
                self.console.print(event["text"], end="", style="dim", markup=False, highlight=False)
                continue
            if streaming:
                self.console.print()
                streaming = False
            if kind == "start" and event["node"] not in QUIET_NODES:
                self.console.print(f"[dim]· {event['node']}[/dim]")
            elif kind == "step":
                self.console.print(f"[dim]  {escape(event['detail'])}[/dim]")
            elif kind == "answer":
                self.last = event["answer"]
                self.console.print()
                render_answer(self.console, self.last)

    def run(self, read: Callable[[], str]) -> None:
        self.console.print(f"[dim]{HELP}[/dim]")
        while True:
            try:
                line = read().strip()
            except (EOFError, KeyboardInterrupt):
                self.console.print()
                return
            if not line:
                continue
            if line.startswith("/"):
                if not self.command(line):
                    return
                continue
            try:
                self.answer(line)
            except KeyboardInterrupt:
                self.console.print("\n[yellow]interrupted[/yellow]")
            except BiociteError as exc:
                self.console.print(f"[red]error:[/red] {escape(str(exc))}")


def run_chat(settings: Settings, mode: str | None = None, console: Console | None = None) -> None:
    console = console or Console()
    agent = Agent(settings, retriever=open_retriever(settings), checkpointer=make_checkpointer())
    session = ChatSession(agent, console, mode)
    session.run(lambda: console.input("[bold green]you>[/bold green] "))
