"""Terminal rendering of an Answer: sentences with numbered citations, the quoted evidence under each
sentence (contributory phrases in bold), and the references with PubMed links."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from biocite.records import Answer, AnswerSentence, Evidence


def reference_numbers(answer: Answer) -> dict[str, int]:
    return {pmid: i for i, pmid in enumerate(answer.cited_pmids, start=1)}


def highlighted(evidence: Evidence) -> Text:
    """The evidence sentence with its contributory phrases in bold (offsets are into the abstract)."""
    text = Text(evidence.span.text, style="dim")
    for phrase in evidence.phrases:
        start, end = phrase.start - evidence.span.start, phrase.end - evidence.span.start
        if 0 <= start < end <= len(evidence.span.text):
            text.stylize("bold", start, end)
    return text


def render_sentence(console: Console, number: int, sentence: AnswerSentence, refs: dict[str, int]) -> None:
    marks = "".join(f"[{refs[c.pmid]}]" for c in sentence.citations)
    support = f"  (support {sentence.support:.2f})" if sentence.support is not None else ""
    console.print(f"{number}. {escape(sentence.text)} [cyan]{escape(marks)}[/cyan][dim]{support}[/dim]")
    for citation in sentence.citations:
        for evidence in citation.evidence:
            line = Text(f"     [{refs[citation.pmid]}] “", style="dim")
            line.append_text(highlighted(evidence))
            line.append("”", style="dim")
            console.print(line)


def render_evidence(console: Console, answer: Answer, number: int) -> None:
    """`/evidence N` in chat: every evidence span behind sentence N."""
    if not 1 <= number <= len(answer.sentences):
        console.print(f"[yellow]no sentence {number}; the answer has {len(answer.sentences)}[/yellow]")
        return
    render_sentence(console, number, answer.sentences[number - 1], reference_numbers(answer))


def render_references(console: Console, answer: Answer) -> None:
    refs = reference_numbers(answer)
    for reference in answer.references:
        year = f" ({reference.year})" if reference.year else ""
        console.print(
            f"[cyan][{refs[reference.pmid]}][/cyan] PMID {reference.pmid}{year} {escape(reference.display_title)}\n"
            f"    [link={reference.url}]{reference.url}[/link]"
        )


def bottom_line(answer: Answer) -> str | None:
    """ "Verdict: yes (p 0.82)" for yes/no questions; the concepts no evidence mentions, if any."""
    parts = []
    if answer.verdict:
        p = (
            f" (probability {answer.verdict_probability:.2f})"
            if answer.verdict_probability is not None
            else ""
        )
        parts.append(f"Verdict: {answer.verdict_shown}{p}")
    if answer.not_covered:
        parts.append("not covered by the evidence: " + ", ".join(answer.not_covered))
    return "; ".join(parts) or None


def render_answer(console: Console, answer: Answer, *, show_trace: bool = False) -> None:
    line = bottom_line(answer)
    if line:
        console.print(f"[bold]{escape(line)}[/bold]")
    for reading in answer.readings:  # a question word read otherwise changes what was answered: always said
        console.print(f"[dim]{escape(reading)}[/dim]")
    for caveat in answer.caveats:  # e.g. only animal studies are cited: said before any sentence
        console.print(f"[yellow]Caveat: {escape(caveat)}.[/yellow]")
    if answer.abstained:
        console.print(f"[yellow]No answer.[/yellow] {escape(answer.abstain_reason or '')}")
    else:
        refs = reference_numbers(answer)
        for number, sentence in enumerate(answer.sentences, start=1):
            render_sentence(console, number, sentence, refs)
        console.print()
        render_references(console, answer)
    seconds = sum(t.seconds for t in answer.trace.timings)
    console.print(
        f"[dim]mode {answer.mode}; {answer.trace.rounds} round(s); {len(answer.trace.retrieved)} abstracts "
        f"retrieved; {seconds:.1f} s[/dim]"
    )
    if show_trace:
        for note in answer.trace.notes:
            if note in answer.readings:
                continue  # printed under the bottom line already
            console.print(f"[dim]  note: {escape(note)}[/dim]")
