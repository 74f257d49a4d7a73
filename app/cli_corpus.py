"""`biocite corpus ...`: getting PubMed itself (issue 14). Kept apart from cli.py to keep merges simple."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from biocite.errors import BiociteError
from biocite.files import output_folder

corpus_app = typer.Typer(no_args_is_help=True, help="Download the PubMed baseline and update files.")
console = Console()
err_console = Console(stderr=True)


class _Bar:
    """One bar over every file: bytes, speed and ETA (files not yet started count at the mean size)."""

    def __init__(self, progress: Progress, n_files: int) -> None:
        self.progress, self.n_files = progress, n_files
        self.task = progress.add_task("PubMed", total=None)
        self.done: dict[str, int] = {}
        self.sizes: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, name: str, done: int, total: int | None) -> None:
        with self.lock:
            self.done[name] = done
            if total is not None:
                self.sizes[name] = total
            mean = sum(self.sizes.values()) / len(self.sizes) if self.sizes else 0
            unseen = max(self.n_files - len(self.sizes), 0)
            self.progress.update(
                self.task,
                completed=sum(self.done.values()),
                total=sum(self.sizes.values()) + unseen * mean or None,
            )


@corpus_app.command("download")
def corpus_download(
    out: Annotated[Path, typer.Option("--out", help="Folder for baseline/ and updatefiles/.")],
    baseline: Annotated[
        str | None, typer.Option("--baseline", help="Baseline file numbers, e.g. 1-50 or 1-3,7.")
    ] = None,
    updates: Annotated[bool, typer.Option("--updates", help="Every daily update file.")] = False,
    everything: Annotated[bool, typer.Option("--all", help="The whole baseline and every update.")] = False,
    mirror: Annotated[
        str | None, typer.Option("--mirror", help="URL holding baseline/ and updatefiles/ (default: NLM).")
    ] = None,
    connections: Annotated[int, typer.Option("--connections", min=1, max=32, help="Parallel files.")] = 4,
    retries: Annotated[int, typer.Option("--retries", min=0, help="Extra tries per file.")] = 5,
    backoff: Annotated[float, typer.Option("--backoff", min=0, help="First retry wait (s), doubled.")] = 1.0,
) -> None:
    """Fetch NLM's files with their published MD5s verified; resumable; exit 2 naming any file not verified."""
    from biocite.index.download import DEFAULT_MIRROR, DownloadOptions, download, make_client, select_files

    output_folder(out)  # before any listing or download
    options = DownloadOptions(
        mirror=mirror or DEFAULT_MIRROR, connections=connections, retries=retries, backoff_s=backoff
    )
    with make_client(options) as client:
        files = select_files(
            client, options.mirror, baseline=baseline, updates=updates, everything=everything
        )
        columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                   TextColumn("ETA"), TimeRemainingColumn())  # fmt: skip
        with Progress(*columns, console=err_console, transient=True) as progress:
            report = download(out, files, options, client, _Bar(progress, len(files)))
    typer.echo(report.summary())
    if report.failed:
        named = "; ".join(f"{f.path} ({f.error})" for f in report.failed)
        raise BiociteError(f"{len(report.failed)} of {len(report.files)} files not verified: {named}")
