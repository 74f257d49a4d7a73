"""The fault-injection table: bad input, broken files, killed processes and hostile corpus text, each run
through the real installed `biocite` executable in a subprocess.

Every case states the exit code it must end with (0 ok, 1 failure outside the user's input, 2 usage error
or fixable problem, 130 Ctrl-C). Every case is also checked for: no "Traceback" anywhere; on failure
exactly one line on stderr, starting "error:" (index-changing commands run with -q, so no progress bars);
and its own check (the index still holds every document, no wrong hit, the message names the file...).

One small index is built per run (`Lab.base`) and copied for each case that changes or damages it.
`tests/cli/test_faults.py` runs the table under pytest; `bench/faults.py` prints it with the totals.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import MINI_CORPUS, write_jsonl

EXE = shutil.which("biocite", path=str(Path(sys.executable).parent)) or shutil.which("biocite") or "biocite"
MINI_PMIDS = sorted(r["pmid"] for r in MINI_CORPUS)
TIMEOUT = 300


@dataclass
class Result:
    rc: int
    out: str
    err: str


@dataclass
class Lab:
    """A scratch folder with the base index (built once) and the files the cases feed in."""

    root: Path
    base_home: Path = field(init=False)

    def __post_init__(self) -> None:
        self.base_home = self.root / "base-home"

    def env(self, home: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BIOCITE_")}
        env.update(
            BIOCITE_HOME=str(home),
            BIOCITE_PRESET="test",
            HF_HUB_OFFLINE="1",
            OMP_WAIT_POLICY="PASSIVE",
            TOKENIZERS_PARALLELISM="false",
            COLUMNS="80",
        )
        return env

    def run(self, home: Path, args: list[str], stdin: bytes | None = None) -> Result:
        proc = subprocess.run(
            [EXE, *args],
            input=stdin if stdin is not None else b"",
            capture_output=True,
            env=self.env(home),
            cwd=self.root,
            timeout=TIMEOUT,
        )
        return Result(
            proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
        )

    def build_base(self) -> None:
        corpus = write_jsonl(self.root / "mini.jsonl", MINI_CORPUS)
        result = self.run(self.base_home, ["-q", "index", "build", "--corpus", str(corpus)])
        if result.rc != 0:
            raise RuntimeError(f"base index build failed ({result.rc}): {result.err}")

    def fresh_home(self, name: str, with_index: bool = True) -> Path:
        home = self.root / "cases" / name
        if home.exists():
            shutil.rmtree(home)
        if with_index:
            shutil.copytree(self.base_home, home)
        else:
            home.mkdir(parents=True)
        return home

    def file(self, name: str, data: bytes | str) -> Path:
        path = self.root / "files" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path


def index_dir(home: Path) -> Path:
    return home / "index" / "default"


def info(lab: Lab, home: Path) -> dict:
    result = lab.run(home, ["index", "info", "--json"])
    return json.loads(result.out) if result.rc == 0 else {}


def search_pmids(lab: Lab, home: Path, query: str, k: int = 4) -> tuple[int, list[str]]:
    result = lab.run(home, ["search", query, "-k", str(k), "--json"])
    return result.rc, [h["pmid"] for h in json.loads(result.out)] if result.rc == 0 else []


# --- checks (return a problem, or None) -----------------------------------------------------------------

Check = Callable[[Lab, Path, Result], str | None]


def all_docs_kept(lab: Lab, home: Path, _: Result) -> str | None:
    """The index is complete, holds every document it held, and still answers with the right abstract."""
    manifest = info(lab, home)
    if manifest.get("status") != "complete" or manifest.get("documents") != len(MINI_PMIDS):
        return f"index after the failure: {manifest.get('status')}, {manifest.get('documents')} documents"
    rc, pmids = search_pmids(lab, home, "aspirin recurrent stroke")
    if rc != 0 or not pmids or pmids[0] != "1001":
        return f"search after the failure: exit {rc}, hits {pmids}"
    return None


def count_kept(lab: Lab, home: Path, _: Result) -> str | None:
    """For a command refused before it touched anything: the index is complete with every document."""
    manifest = info(lab, home)
    if manifest.get("status") != "complete" or manifest.get("documents") != len(MINI_PMIDS):
        return f"index after the failure: {manifest.get('status')}, {manifest.get('documents')} documents"
    return None


def names(*words: str) -> Check:
    def check(_: Lab, __: Path, result: Result) -> str | None:
        text = result.err + result.out
        missing = [w for w in words if w not in text]
        return f"output does not name {missing}" if missing else None

    return check


def both(*checks: Check) -> Check:
    def check(lab: Lab, home: Path, result: Result) -> str | None:
        for one in checks:
            problem = one(lab, home, result)
            if problem:
                return problem
        return None

    return check


# --- the cases ----------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    args: list[str]
    expect: int
    setup: Callable[[Lab, Path], None] | None = None  # prepares the case's home (files, damage)
    check: Check | None = None
    stdin: bytes | None = None
    index: bool = True  # start from a copy of the base index
    runner: Callable[[Lab, Path, Case], Result] | None = None  # instead of one plain run


def _truncate(rel: str, keep: float = 0.5) -> Callable[[Lab, Path], None]:
    def setup(_: Lab, home: Path) -> None:
        path = index_dir(home) / rel
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * keep)])

    return setup


def _overwrite_faiss(_: Lab, home: Path) -> None:
    """Same size, other vectors: the hits would silently be wrong."""
    path = index_dir(home) / "dense.faiss"
    data = bytearray(path.read_bytes())
    for i in range(len(data) - 1536, len(data) - 4, 4):
        data[i : i + 4] = b"\x00\x00\x80\x3f"
    path.write_bytes(bytes(data))


def _shuffle_ids(_: Lab, home: Path) -> None:
    path = index_dir(home) / "dense_ids.json"
    meta = json.loads(path.read_text())
    meta["ids"] = meta["ids"][::-1]
    path.write_text(json.dumps(meta))


def _flip_bm25(_: Lab, home: Path) -> None:
    path = next((index_dir(home) / "bm25").rglob("data.csc.index.npy"))
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x40
    path.write_bytes(bytes(data))


def _garbage_manifest(_: Lab, home: Path) -> None:
    (index_dir(home) / "manifest.json").write_text("{ not json")


def _remove(rel: str) -> Callable[[Lab, Path], None]:
    def setup(_: Lab, home: Path) -> None:
        (index_dir(home) / rel).unlink()

    return setup


def _repair_then_search(lab: Lab, home: Path, case: Case) -> Result:
    """Damage the store, rebuild with no --corpus (the manifest's own sources), then search."""
    _truncate("docs.sqlite", 0.3)(lab, home)
    broken = lab.run(home, ["search", "aspirin"])
    if broken.rc != 2:
        return Result(broken.rc, broken.out, "damaged store not refused: " + broken.err)
    return lab.run(home, case.args)


def _serve_on_a_port_in_use(lab: Lab, home: Path, case: Case) -> Result:
    """uvicorn loaded the models, then logged "address already in use" and exited 3."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        return lab.run(home, [*case.args, "--port", str(taken.getsockname()[1])])


def _wait_reading_stdin(pid: int, timeout: float = 60) -> None:
    """Until the process blocks in read(0, ...) (Linux x86-64: /proc/PID/syscall; elsewhere: 1 s idle)."""
    import psutil

    syscall = Path(f"/proc/{pid}/syscall")
    deadline, idle_since, last = time.monotonic() + timeout, time.monotonic(), -1.0
    while time.monotonic() < deadline:
        try:
            fields = syscall.read_text().split()
        except OSError:
            fields = []
        if fields and fields[0].isdigit():
            if fields[0] == "0" and len(fields) > 1 and int(fields[1], 16) == 0:
                return
        else:
            cpu = sum(psutil.Process(pid).cpu_times()[:2])
            if cpu != last:
                last, idle_since = cpu, time.monotonic()
            elif time.monotonic() - idle_since > 1.0:
                return
        time.sleep(0.05)


def _sigint_as_in_a_terminal() -> None:
    """A runner started in the background without job control (`cmd &`) ignores SIGINT, and its children
    inherit that, so Python would never see Ctrl-C; a user's terminal delivers it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _ctrl_c(lab: Lab, home: Path, case: Case) -> Result:
    """Ctrl-C while `search -` waits for its query on stdin: exit 130, one line, no traceback."""
    proc = subprocess.Popen(
        [EXE, *case.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=lab.env(home), cwd=lab.root, preexec_fn=_sigint_as_in_a_terminal,
    )  # fmt: skip
    _wait_reading_stdin(proc.pid)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return Result(proc.returncode, out.decode(), err.decode())


def _kill_mid_add(lab: Lab, home: Path, case: Case) -> Result:
    """kill -9 an `index add` while it works in its staging copy: the index stays complete and whole."""
    from tests.conftest import write_question_corpus

    extra = lab.root / "files" / "forty.jsonl"
    extra.parent.mkdir(parents=True, exist_ok=True)
    write_question_corpus(extra)
    proc = subprocess.Popen(
        [EXE, "-q", "index", "add", str(extra)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=lab.env(home), cwd=lab.root,
    )  # fmt: skip
    staging = index_dir(home).with_name("default.staging")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (staging / "manifest.json").is_file() and proc.poll() is None:
        time.sleep(0.02)
    time.sleep(0.3)
    proc.kill()
    proc.wait()
    if proc.returncode != -signal.SIGKILL:
        return Result(1, "", f"the add finished before it could be killed (exit {proc.returncode})")
    return lab.run(home, case.args)


def _ctrl_c_first_build_then_resume(lab: Lab, home: Path, case: Case) -> Result:
    """Ctrl-C a first build of a user corpus: exit 130; `index build` with no --corpus then resumes that
    corpus (it used to rebuild the default corpus into the user's index)."""
    from tests.conftest import write_question_corpus

    corpus = lab.root / "files" / "forty.jsonl"
    corpus.parent.mkdir(parents=True, exist_ok=True)
    write_question_corpus(corpus)
    proc = subprocess.Popen(
        [EXE, "-q", "index", "build", "--corpus", str(corpus)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=lab.env(home), cwd=lab.root, preexec_fn=_sigint_as_in_a_terminal,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while (
        time.monotonic() < deadline
        and not (index_dir(home) / "docs.sqlite").is_file()
        and proc.poll() is None
    ):
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if proc.returncode != 130 or err.decode().strip() != "interrupted; finished work was saved":
        return Result(1, "", f"problem: Ctrl-C: exit {proc.returncode}, stderr {err.decode()[-200:]!r}")
    result = lab.run(home, case.args)
    documents = info(lab, home).get("documents")
    problem = "" if documents == 40 else f"\nproblem: resumed index holds {documents} documents, expected 40"
    return Result(result.rc, result.out, result.err + problem)


def _hostile_corpus(lab: Lab, home: Path) -> None:
    """Markup in a title and a sentence, bad PMIDs, a 25 MB abstract, a long title (no wrap when piped)."""
    long_sentence = "Randomised patients with migraine received riboflavin daily for months. "
    rows = [
        {"pmid": "7001", "title": "[/bold] Bold claims [red]about[/red] migraine prophylaxis " + "x" * 90,
         "abstract": "Riboflavin [/bold] reduced migraine days [link=x]by half[/link]. It was well tolerated."},
        {"pmid": "abc/../../etc", "title": "t", "abstract": "Path traversal PMID."},
        {"pmid": "-5", "title": "t", "abstract": "Negative PMID."},
        {"pmid": "0", "title": "t", "abstract": "Zero PMID."},
        {"pmid": "7002", "title": "A very long abstract",
         "abstract": long_sentence * (25_000_000 // len(long_sentence))},
        *MINI_CORPUS,
    ]  # fmt: skip
    write_jsonl(lab.root / "files" / "hostile.jsonl", rows)


def _hostile_search(lab: Lab, home: Path, case: Case) -> Result:
    corpus = lab.root / "files" / "hostile.jsonl"
    started = time.monotonic()
    built = lab.run(home, ["index", "build", "--corpus", str(corpus)])
    seconds = time.monotonic() - started
    if built.rc != 0:
        return built
    problems = []
    if "truncated" not in built.out or "not a PMID" not in built.out:
        problems.append("build output lists no truncation or PMID warning")
    if seconds > 120:
        problems.append(f"build of the 25 MB abstract took {seconds:.0f} s")
    manifest = info(lab, home)
    if manifest.get("documents") != len(MINI_CORPUS) + 2:
        problems.append(f"{manifest.get('documents')} documents, expected {len(MINI_CORPUS) + 2}")
    result = lab.run(home, case.args)
    if "[/bold] Bold claims [red]about[/red]" not in result.out or "[/bold] reduced" not in result.out:
        problems.append("markup not shown literally")
    if not any(len(line) > 120 for line in result.out.splitlines()):
        problems.append("piped output was hard-wrapped")
    return Result(result.rc, result.out, result.err + "".join(f"\nproblem: {p}" for p in problems))


def _failed_add_keeps(lab: Lab, home: Path) -> None:
    lab.file(
        "good.jsonl", json.dumps({"pmid": "5001", "title": "Zinc", "abstract": "Zinc and colds."}) + "\n"
    )
    lab.file("bad.xml", "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>5002</PMID")


def _runs(lab: Lab, _: Path) -> None:
    valid = json.loads((Path(__file__).parents[2] / "bench/runs/biogen2024_extractive.json").read_text())
    lab.file("valid.json", json.dumps(valid))
    bad = {"team_id": 1, "results": [{"topic_id": "x", "answer": "Text [abc].", "references": ["1"]}] * 3}
    lab.file("invalid.json", json.dumps(bad, indent=1))
    lab.file("latin1.json", '{"team_id": "caf\xe9"}'.encode("latin-1"))
    lab.file("nested.json", "[" * 100_000 + "]" * 100_000)
    lab.file("nan.json", '{"team_id": "t", "run_name": "r", "contact_email": "e", "results": [{"topic_id": '
             '"116", "answer": "x", "score": NaN}]}')  # fmt: skip
    lab.file("empty.json", "")
    lab.file(
        "other_topics.json",
        json.dumps({"results": [{"topic_id": "181", "answer": [{"text": "A.", "citations": ["1"]}]}]}),
    )
    lines = json.dumps(valid, indent=1).splitlines()
    lines[92] = lines[92] + " oops"
    lab.file("line93.json", "\n".join(lines))
    lab.file("noresults.json", json.dumps({**valid, "results": []}))
    lab.file("topics_empty.json", "")
    lab.file(
        "topics_aspirin.json",
        json.dumps({"topics": [{"id": "1", "question": "Does aspirin prevent stroke?"}]}),
    )


def _writes(name: str, text: str) -> Callable[[Lab, Path], None]:
    def setup(lab: Lab, _: Path) -> None:
        lab.file(name, text)

    return setup


def _line_93(_: Lab, __: Path, result: Result) -> str | None:
    return None if ":93:" in result.err else f"error not reported at line 93: {result.err.strip()}"


def _stdout_has(text: str) -> Check:
    def check(_: Lab, __: Path, result: Result) -> str | None:
        return None if text in result.out else f"stdout lacks {text!r}"

    return check


def _stdout_lines_start(*starts: str) -> Check:
    """Each of `starts` opens a line of stdout (leading blanks aside)."""

    def check(_: Lab, __: Path, result: Result) -> str | None:
        lines = [line.strip() for line in result.out.splitlines()]
        missing = [s for s in starts if not any(line.startswith(s) for line in lines)]
        return f"no stdout line opens with {missing}" if missing else None

    return check


def _nothing_beside_files(lab: Lab, _: Path, __: Result) -> str | None:
    beside = sorted(p.name for p in lab.root.glob("files.*"))
    return f"wrote {beside} beside the folder" if beside else None


def _damage_names(rel: str) -> Check:
    return names(rel, "biocite index build")


def f(name: str) -> str:
    return f"files/{name}"


CASES: list[Case] = [
    # --- usage and conventions
    Case("no arguments: help, exit 2", [], 2, index=False, check=_stdout_has("Usage")),
    Case("--version", ["--version"], 0, index=False, check=_stdout_has("biocite 0.")),
    Case("-h", ["-h"], 0, index=False, check=_stdout_has("Usage")),
    Case(
        "-h lists the exit codes, one a line",
        ["-h"],
        0,
        index=False,
        check=_stdout_lines_start(
            "0  success", "1  failed", "2  a usage error", "130  interrupted by Ctrl-C"
        ),
    ),
    Case("subcommand -h", ["search", "-h"], 0, index=False, check=_stdout_has("Usage")),
    Case("missing argument", ["validate"], 2, index=False, check=names("Missing argument")),
    Case(
        "index build given a file without --corpus",
        ["index", "build", "corpus.jsonl"],
        2,
        index=False,
        check=names("corpus.jsonl", "--corpus A --corpus B"),
    ),  # fmt: skip
    Case("search with neither query nor --topics", ["search"], 2, index=False, check=names("empty")),
    Case("-k 0", ["search", "aspirin", "-k", "0"], 2, index=False, check=names("-k")),
    Case("unknown option", ["search", "aspirin", "--bogus"], 2, index=False, check=names("--bogus")),
    Case("unknown command", ["frobnicate"], 2, index=False, check=names("frobnicate")),
    Case("empty query", ["search", "  "], 2, index=False, check=names("empty")),
    Case("invalid UTF-8 argument", ["search", "caf\udce9"], 2, index=False, check=names("UTF-8")),
    Case(
        "mistyped setting key",
        ["config", "show", "-s", "llm.modle=x"],
        2,
        index=False,
        check=names("llm.model"),
    ),  # fmt: skip
    Case("override without =", ["config", "show", "-s", "llm.model"], 2, index=False),
    *[
        Case(
            name,
            ["config", "show", "-s", setting],
            2,
            index=False,
            check=names(setting.split("=")[0], *words),
        )
        for name, setting, words in [
            ("bad setting value", "index.k1=abc", ()),
            ("embed device not a device", "index.embed_device=gpu", ()),
            ("a weight outside [0, 1]", "agent.retrieval_weight=2", ("less than or equal to 1",)),
            (
                "a count below 1 (max_sentences -1 answered anyway)",
                "agent.max_sentences=-1",
                ("greater than or equal to 1",),
            ),
        ]
    ],  # fmt: skip
    Case("unknown preset", ["config", "show", "-p", "nosuch"], 2, index=False, check=names("nosuch")),
    Case(
        "preset file with a mistyped key",
        ["config", "show", "-p", f("typo.yaml")],
        2,
        index=False,
        setup=_writes("typo.yaml", "llm:\n  modle: x\n"),
        check=names("llm.model"),
    ),
    Case(
        "preset file not YAML",
        ["config", "show", "-p", f("bad.yaml")],
        2,
        index=False,
        setup=_writes("bad.yaml", "llm: [\n"),
        check=names("bad.yaml"),
    ),
    Case("port out of range", ["serve", "--port", "99999"], 2, index=False),
    Case("config show (control)", ["config", "show"], 0, index=False, check=_stdout_has("k1:")),
    # --- run files: validate, evaluate, report, batch
    Case("validate: missing file", ["validate", "nosuch.json"], 2, index=False, setup=_runs),
    Case(
        "validate: invalid run",
        ["validate", f("invalid.json")],
        2,
        index=False,
        setup=_runs,
        check=names("error(s)"),
    ),  # fmt: skip
    Case(
        "validate: valid run",
        ["validate", f("valid.json")],
        0,
        index=False,
        setup=_runs,
        check=names("valid"),
    ),  # fmt: skip
    Case(
        "validate: run on stdin",
        ["validate", "-"],
        0,
        index=False,
        setup=_runs,
        stdin=(Path(__file__).parents[2] / "bench/runs/biogen2024_extractive.json").read_bytes(),
    ),  # fmt: skip
    Case(
        "validate: not UTF-8",
        ["validate", f("latin1.json")],
        2,
        index=False,
        setup=_runs,
        check=names("UTF-8"),
    ),
    Case("validate: nested 100k deep", ["validate", f("nested.json")], 2, index=False, setup=_runs),
    Case("validate: NaN", ["validate", f("nan.json")], 2, index=False, setup=_runs, check=names("NaN")),
    Case(
        "validate: empty file",
        ["validate", f("empty.json")],
        2,
        index=False,
        setup=_runs,
        check=names("empty"),
    ),
    Case("evaluate: missing file", ["evaluate", "nosuch.json"], 2, index=False, setup=_runs),
    Case(
        "evaluate: not UTF-8",
        ["evaluate", f("latin1.json")],
        2,
        index=False,
        setup=_runs,
        check=names("UTF-8"),
    ),
    Case("evaluate: nested 100k deep", ["evaluate", f("nested.json")], 2, index=False, setup=_runs),
    Case("evaluate: NaN", ["evaluate", f("nan.json")], 2, index=False, setup=_runs, check=names("NaN")),
    Case(
        "evaluate: empty file",
        ["evaluate", f("empty.json")],
        2,
        index=False,
        setup=_runs,
        check=names("empty"),
    ),
    Case(
        "evaluate: error on line 93",
        ["evaluate", f("line93.json")],
        2,
        index=False,
        setup=_runs,
        check=_line_93,
    ),
    Case(
        "evaluate: run with no answers",
        ["evaluate", f("noresults.json")],
        2,
        index=False,
        setup=_runs,
        check=names("no answers"),
    ),  # fmt: skip
    Case("report: missing file", ["report", "nosuch.json"], 2, index=False),
    Case(
        "evaluate --compare: runs with no topic in common",
        ["evaluate", "--compare", f("valid.json"), "--compare", f("other_topics.json"), "--out", "cmp"],
        2,
        index=False,
        setup=_runs,
        check=names("share no topic id"),
    ),  # fmt: skip
    Case(
        "report: --gold neither a file nor pubmedqa",
        ["report", f("valid.json"), "--gold", "nosuch"],
        2,
        index=False,
        setup=_runs,
        check=names("--gold nosuch", "--gold pubmedqa"),
    ),  # fmt: skip
    Case("report: NaN", ["report", f("nan.json")], 2, index=False, setup=_runs, check=names("NaN")),
    Case(
        "report: empty file", ["report", f("empty.json")], 2, index=False, setup=_runs, check=names("empty")
    ),
    Case(
        "batch: topics file missing", ["batch", "--topics", "nosuch.json", "--out", "o.json"], 2, index=False
    ),
    Case(
        "batch: topics file empty",
        ["batch", "--topics", f("topics_empty.json"), "--out", "o.json"],
        2,
        index=False,
        setup=_runs,
    ),  # fmt: skip
    Case(
        "batch: --out a folder, before any answer",
        ["batch", "--topics", f("topics_aspirin.json"), "--out", "files", "-m", "extractive"],
        2,
        index=False,
        setup=_runs,
        check=both(names("files: a folder, not a file"), _nothing_beside_files),
    ),  # fmt: skip
    # an output that cannot be written is named before the work, not after minutes of it
    *[
        Case(
            f"{args[0]}: --out a file, not a folder",
            [*args, "--out", f("valid.json")],
            2,
            index=False,
            setup=_runs,
            check=names("valid.json: a file, not a folder"),
        )
        for args in (
            ["evaluate", f("valid.json")],
            ["report", f("valid.json")],
            ["check", "--run", f("valid.json")],
        )
    ],
    Case(
        "search: --trec-run under a file",
        ["search", "--topics", "pubmedqa", "--trec-run", f("valid.json/run.trec")],
        2,
        index=False,
        setup=_runs,
        check=names("valid.json: a file, not a folder"),
    ),  # fmt: skip
    Case(
        "batch: bad --format",
        ["batch", "--topics", "pubmedqa", "--out", "o.json", "--format", "x"],
        2,
        index=False,
    ),  # fmt: skip
    Case(
        "batch on Ray with an unreachable endpoint",
        [
            *f"-q batch --topics {f('topics_aspirin.json')} --out o.json --ray auto --workers 1".split(),
            *"-s llm.backend=openai -s llm.base_url=http://127.0.0.1:9/v1 -s llm.model=x".split(),
        ],
        2,
        setup=_runs,
        check=names("127.0.0.1:9/v1", "unreachable"),
    ),
    Case(
        "batch on Ray without an index",
        f"-q batch --topics {f('topics_aspirin.json')} --out noindex.json --ray auto --mode extractive".split(),
        2,
        index=False,
        setup=_runs,
        check=names("Ray batch worker", "index build"),
    ),
    Case(
        "batch on a Ray cluster address nobody serves",
        f"-q batch --topics {f('topics_aspirin.json')} --out noray.json --ray 127.0.0.1:9 --mode extractive".split(),
        2,
        setup=_runs,
        check=names("--ray 127.0.0.1:9", "nothing answers"),
    ),
    Case("eval-retrieval: run file missing", ["eval-retrieval", "nosuch.run", "pubmedqa"], 2, index=False),
    Case(
        "eval-retrieval: not a TREC run",
        ["eval-retrieval", f("nan.json"), "pubmedqa"],
        2,
        index=False,
        setup=_runs,
    ),  # fmt: skip
    Case("search --topics without --trec-run", ["search", "--topics", "pubmedqa"], 2, index=False),
    Case("models verify: unknown id", ["models", "verify", "nosuch"], 2, index=False, check=names("nosuch")),
    Case("serve without an index", ["serve", "--port", "0"], 2, index=False, check=names("index build")),
    Case(
        "serve on a port in use",
        ["serve"],
        2,
        runner=_serve_on_a_port_in_use,
        check=names("cannot listen there", "in use"),
    ),  # fmt: skip
    Case(
        "serve on a host name that is not one",
        ["serve", "--host", "256.1.1.1"],
        2,
        check=names("--host 256.1.1.1"),
    ),
    Case("train reranker without an index", ["train", "reranker"], 2, index=False),
    Case("train verdict without an index", ["train", "verdict"], 2, index=False, check=names("index build")),
    Case(
        "train verdict on an index without the PubMedQA train abstracts",
        ["train", "verdict"],
        2,
        check=names("PubMedQA train abstracts"),
    ),  # fmt: skip
    Case(
        "train verdict --llm with an unreachable endpoint",
        "train verdict --llm -s llm.backend=openai -s llm.base_url=http://127.0.0.1:9/v1 -s llm.model=x".split(),
        2,
        check=names("127.0.0.1:9/v1", "unreachable"),
    ),  # fmt: skip
    Case(
        "train verdict --llm --limit under 50",
        ["train", "verdict", "--llm", "--limit", "10"],
        2,
        index=False,
        check=names("--limit 10", "50"),
    ),  # fmt: skip
    Case(
        "train support on a GPU that is not there",
        ["train", "support", "--device", "cuda"],
        2,
        index=False,
        check=names("support.device", "CUDA"),
    ),  # fmt: skip
    Case(
        "ask - with invalid UTF-8 on stdin",
        ["ask", "-"],
        2,
        index=False,
        stdin=b"\xff\xfe",
        check=names("UTF-8"),
    ),  # fmt: skip
    Case(
        "search for a PMID",
        ["search", "PMID: 31851484"],
        2,
        index=False,
        check=names("biocite show 31851484"),
    ),  # fmt: skip
    Case(
        "ask with a PMID for a question",
        ["ask", "31851484"],
        2,
        index=False,
        check=names("biocite show 31851484"),
    ),  # fmt: skip
    Case(
        "ask with the model not installed",
        ["ask", "Does aspirin prevent stroke?"],
        2,
        check=names("biocite models install"),
    ),  # fmt: skip
    # --- the index: missing, failed updates, damaged files, repair
    Case("search without an index", ["search", "aspirin"], 2, index=False, check=names("index build")),
    Case(
        "index build into an index.dir that is a file",
        ["-q", "index", "build", "--corpus", f("good.jsonl"), "-s", f"index.dir={f('good.jsonl')}"],
        2,
        index=False,
        setup=_failed_add_keeps,
        check=names("good.jsonl: a file, not a folder"),
    ),  # fmt: skip
    Case("index add without an index", ["index", "add", "mini.jsonl"], 2, index=False),
    Case("index add: no such file", ["-q", "index", "add", "nosuch.jsonl"], 2, check=count_kept),
    Case(
        "index add: bad XML after a good file",
        ["-q", "index", "add", f("good.jsonl"), f("bad.xml")],
        2,
        setup=_failed_add_keeps,
        check=both(names("bad.xml"), all_docs_kept),
    ),  # fmt: skip
    Case(
        "index add on a GPU that is not there",
        ["-q", "index", "add", f("good.jsonl"), "-s", "index.embed_device=cuda"],
        2,
        setup=_failed_add_keeps,
        check=both(names("index.embed_device", "CUDA"), count_kept),
    ),  # fmt: skip
    Case(
        "index build on Ray asking for a GPU the cluster lacks",
        [
            "-q",
            "index",
            "build",
            "--corpus",
            f("good.jsonl"),
            "--ray",
            "auto",
            "-s",
            "index.embed_device=cuda",
        ],
        2,
        setup=_failed_add_keeps,
        check=both(names("index.embed_device", "Ray cluster has no GPU"), count_kept),
    ),  # fmt: skip
    Case("index delete: PMID 'abc'", ["-q", "index", "delete", "abc"], 2, check=count_kept),
    Case("index delete: PMID -5", ["-q", "index", "delete", "--", "-5"], 2, check=count_kept),
    Case(
        "index delete: every indexed PMID (the index would be empty)",
        ["-q", "index", "delete", *MINI_PMIDS],
        2,
        check=both(names("no documents left to index"), all_docs_kept),
    ),  # fmt: skip
    Case(
        "index delete: a PMID not indexed is named, and remembered",
        ["index", "delete", "424242"],
        0,
        check=both(names("not in the index: 424242"), all_docs_kept),
    ),  # fmt: skip
    Case(
        "index add killed with -9, then search",
        ["search", "aspirin recurrent stroke", "-k", "4"],
        0,
        runner=_kill_mid_add,
        check=all_docs_kept,
    ),  # fmt: skip
    Case(
        "truncated dense.faiss",
        ["search", "aspirin"],
        2,
        setup=_truncate("dense.faiss"),
        check=_damage_names("dense.faiss"),
    ),  # fmt: skip
    Case(
        "truncated dense_ids.json",
        ["search", "aspirin"],
        2,
        setup=_truncate("dense_ids.json"),
        check=_damage_names("dense_ids.json"),
    ),  # fmt: skip
    Case(
        "truncated docs.sqlite",
        ["search", "aspirin"],
        2,
        setup=_truncate("docs.sqlite"),
        check=_damage_names("docs.sqlite"),
    ),  # fmt: skip
    Case(
        "overwritten FAISS bytes (same size)",
        ["search", "aspirin"],
        2,
        setup=_overwrite_faiss,
        check=_damage_names("dense.faiss"),
    ),  # fmt: skip
    Case(
        "shuffled ids (same size)",
        ["search", "aspirin"],
        2,
        setup=_shuffle_ids,
        check=_damage_names("dense_ids.json"),
    ),  # fmt: skip
    Case("flipped byte in BM25", ["search", "aspirin"], 2, setup=_flip_bm25, check=_damage_names("bm25")),
    Case(
        "missing dense.faiss",
        ["search", "aspirin"],
        2,
        setup=_remove("dense.faiss"),
        check=_damage_names("dense.faiss"),
    ),  # fmt: skip
    Case(
        "manifest not JSON", ["search", "aspirin"], 2, setup=_garbage_manifest, check=names("manifest.json")
    ),
    Case(
        "damaged store repaired by `index build` (no --corpus)",
        ["-q", "index", "build"],
        0,
        runner=_repair_then_search,
        check=all_docs_kept,
    ),  # fmt: skip
    Case(
        "Ctrl-C in a first build, then `index build` resumes its corpus",
        ["-q", "index", "build"],
        0,
        index=False,
        runner=_ctrl_c_first_build_then_resume,
    ),  # fmt: skip
    # --- hostile corpus text and conventions on a real index
    Case(
        "markup, bad PMIDs, 25 MB abstract: build + search",
        ["search", "migraine riboflavin", "-k", "3"],
        0,
        index=False,
        setup=_hostile_corpus,
        runner=_hostile_search,
    ),  # fmt: skip
    Case(
        "search - reads the query from stdin",
        ["search", "-", "--json"],
        0,
        stdin=b"aspirin recurrent stroke\n",
        check=_stdout_has('"pmid": "1001"'),
    ),  # fmt: skip
    Case(
        "-q after the subcommand; index info counts its files (hashes only in --json)",
        ["index", "info", "-q"],
        0,
        check=both(_stdout_has("status: complete"), _stdout_has("--json lists them")),
    ),  # fmt: skip
    Case("Ctrl-C while reading stdin", ["search", "-"], 130, runner=_ctrl_c),
]


@dataclass
class Outcome:
    name: str
    expected: int
    got: int
    problems: list[str]
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.problems


def run_case(lab: Lab, case: Case) -> Outcome:
    started = time.monotonic()
    home = lab.fresh_home(case.name.replace(" ", "_").replace("/", "_")[:60], with_index=case.index)
    if case.setup:
        case.setup(lab, home)
    result = case.runner(lab, home, case) if case.runner else lab.run(home, case.args, case.stdin)
    problems = []
    if result.rc != case.expect:
        problems.append(f"exit {result.rc}, expected {case.expect}")
    if "Traceback" in result.err + result.out:
        problems.append("traceback")
    problems += [
        line.removeprefix("problem: ") for line in result.err.splitlines() if line.startswith("problem:")
    ]
    err_lines = [line for line in result.err.splitlines() if line.strip() and not line.startswith("problem:")]
    if case.expect in (1, 2) and case.args:
        if len(err_lines) != 1 or not err_lines[0].startswith("error:"):
            problems.append(f"stderr is not one 'error:' line: {err_lines[:3]}")
    if case.expect == 130 and (len(err_lines) != 1 or "interrupted" not in err_lines[0]):
        problems.append(f"stderr after Ctrl-C: {err_lines[:3]}")
    if case.check and not problems:
        problem = case.check(lab, home, result)
        if problem:
            problems.append(problem)
    if problems and err_lines:
        problems.append(f"stderr: {err_lines[-1][:160]}")
    return Outcome(case.name, case.expect, result.rc, problems, time.monotonic() - started)
