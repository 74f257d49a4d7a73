"""`biocite corpus download` end to end: the installed executable against a local NLM-layout server."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from biocite.errors import InputError
from biocite.index.download import parse_md5, parse_ranges
from biocite.index.readers import ReadStats, read_documents
from tests.nlm_mirror import Mirror, MirrorState, pubmed_like_files

BIOCITE = shutil.which("biocite") or str(Path(sys.executable).with_name("biocite"))
B1, B2, B3 = (f"baseline/pubmed26n000{i}.xml.gz" for i in (1, 2, 3))
U4, U5 = "updatefiles/pubmed26n0004.xml.gz", "updatefiles/pubmed26n0005.xml.gz"


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    cmd = [BIOCITE, "corpus", "download", "--backoff", "0.05", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


@pytest.fixture(scope="module")
def fixture_files() -> tuple[dict[str, bytes], dict[str, object]]:
    return pubmed_like_files(big=300)


def test_all_verified_with_a_corrupt_and_a_dropped_file(tmp_path: Path, fixture_files) -> None:
    files, _ = fixture_files
    state = MirrorState(files=dict(files), corrupt_once={B2}, drop_once={B3})
    with Mirror(state) as url:
        result = run("--all", "--mirror", url, "--out", str(tmp_path), "--connections", "3")
    assert result.returncode == 0, result.stderr
    assert "5 downloaded" in result.stdout and "0 failed" in result.stdout
    for path, data in files.items():
        assert md5((tmp_path / path).read_bytes()) == md5(data), path
    assert not list(tmp_path.rglob("*.part"))
    # the corrupt file failed its checksum and was fetched again whole; the dropped one resumed by Range
    assert state.gets(B2) == ["", ""]
    ranges = state.gets(B3)
    assert len(ranges) == 2 and ranges[0] == "" and ranges[1].startswith("bytes=")
    assert int(ranges[1][6:-1]) > 0
    assert state.gets(B1) == [""]


def test_wrong_published_checksum_exits_2_naming_the_file(tmp_path: Path, fixture_files) -> None:
    files, _ = fixture_files
    state = MirrorState(files=dict(files), wrong_md5={U5})
    with Mirror(state) as url:
        result = run("--updates", "--mirror", url, "--out", str(tmp_path), "--retries", "2")
    assert result.returncode == 2
    message = " ".join(result.stderr.split())
    assert "pubmed26n0005.xml.gz" in message and "Traceback" not in message
    assert "1 of 2 files not verified" in message
    assert (tmp_path / U4).is_file()
    assert not (tmp_path / U5).exists() and not (tmp_path / (U5 + ".part")).exists()
    assert len(state.gets(U5)) == 3  # first try and two retries


def test_killed_download_resumes_without_refetching_finished_files(tmp_path: Path, fixture_files) -> None:
    files, _ = fixture_files
    state = MirrorState(files=dict(files), slow={B3: 0.02})
    with Mirror(state) as url:
        args = ["--baseline", "1-3", "--mirror", url, "--out", str(tmp_path), "--connections", "1"]
        cmd = [BIOCITE, "corpus", "download", *args]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        part = tmp_path / (B3 + ".part")
        deadline = time.monotonic() + 30
        while not (part.is_file() and part.stat().st_size > 20_000) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert (tmp_path / B1).is_file() and (tmp_path / B2).is_file() and not (tmp_path / B3).exists()
        kept = part.stat().st_size
        state.slow.clear()
        state.log.clear()
        result = run(*args)
    assert result.returncode == 0, result.stderr
    assert "1 downloaded, 2 already verified" in result.stdout
    assert state.gets(B1) == [] and state.gets(B2) == []  # only their .md5 files were asked for
    assert state.gets(B3) == [f"bytes={kept}-"]
    assert md5((tmp_path / B3).read_bytes()) == md5(files[B3])


def test_a_file_corrupted_on_disk_is_fetched_again(tmp_path: Path, fixture_files) -> None:
    files, _ = fixture_files
    state = MirrorState(files=dict(files))
    with Mirror(state) as url:
        assert run("--baseline", "1", "--mirror", url, "--out", str(tmp_path)).returncode == 0
        (tmp_path / B1).write_bytes(files[B1][:100])  # truncated since
        state.log.clear()
        result = run("--baseline", "1", "--mirror", url, "--out", str(tmp_path))
    assert result.returncode == 0 and "1 downloaded" in result.stdout
    assert state.gets(B1) == [""]
    assert md5((tmp_path / B1).read_bytes()) == md5(files[B1])


def test_bad_requests_are_one_line_errors(tmp_path: Path, fixture_files) -> None:
    files, _ = fixture_files
    with Mirror(MirrorState(files=dict(files))) as url:
        missing = run("--baseline", "2-9", "--mirror", url, "--out", str(tmp_path))
        nothing = run("--mirror", url, "--out", str(tmp_path))
    unreachable = run(
        "--updates", "--mirror", "http://127.0.0.1:9/", "--out", str(tmp_path), "--retries", "0"
    )
    # named before any listing: the mirror is unreachable, so "cannot list" would mean they waited for it
    bad_spec = run("--baseline", "1-x", "--mirror", "http://127.0.0.1:9/", "--out", str(tmp_path))
    (tmp_path / "a-file").write_text("")
    out_a_file = run("--baseline", "1", "--mirror", "http://127.0.0.1:9/", "--out", str(tmp_path / "a-file"))
    for result, words in [(missing, "baseline files 4, 5"), (nothing, "nothing to download"),
                          (unreachable, "cannot list http://127.0.0.1:9/updatefiles/"),
                          (bad_spec, "--baseline '1-x'"), (out_a_file, "a-file: a file, not a folder")]:  # fmt: skip
        assert result.returncode == 2, result.stderr
        message = " ".join(result.stderr.split())  # the console may wrap the one message line
        assert message.startswith("error:") and words in message and "Traceback" not in message


def test_downloaded_folder_reads_in_order_with_updates_and_deletions(tmp_path: Path, fixture_files) -> None:
    files, facts = fixture_files
    with Mirror(MirrorState(files=dict(files))) as url:
        assert run("--all", "--mirror", url, "--out", str(tmp_path)).returncode == 0
    stats = ReadStats()
    docs = read_documents([tmp_path], stats)
    assert stats.files == 5 and stats.deleted == 2
    assert docs[str(facts["changed"])].title.startswith("UPDATED TITLE")
    assert not set(facts["deleted"]) & docs.keys()  # type: ignore[arg-type]
    assert set(facts["added"]) <= docs.keys()  # type: ignore[arg-type]


def test_ranges_and_md5_lines() -> None:
    assert parse_ranges("1-3,7, 9-10") == {1, 2, 3, 7, 9, 10}
    for bad in ("", "3-1", "a", "1-"):
        with pytest.raises(InputError):
            parse_ranges(bad)
    digest = "d41d8cd98f00b204e9800998ecf8427e"
    assert parse_md5(f"MD5(pubmed26n0001.xml.gz)= {digest}\n", "x") == digest
    assert parse_md5(f"{digest.upper()}  pubmed26n0001.xml.gz\n", "x") == digest


@pytest.mark.slow  # two real index builds with MiniLM in subprocesses: ~45 s on 2 busy cores
def test_index_build_then_add_consume_the_downloaded_folder(tmp_path: Path) -> None:
    """Baseline downloaded and indexed; then the updates downloaded and added: replacements and
    deletions applied in file order, nothing half-written read."""
    files, facts = pubmed_like_files(big=20)
    out, index_dir = tmp_path / "pubmed", tmp_path / "index"
    cli = [BIOCITE, "index"]
    opts = ["--preset", "test", "--set", f"home={tmp_path / 'home'}", "--set", f"index.dir={index_dir}"]
    with Mirror(MirrorState(files=dict(files))) as url:
        assert run("--baseline", "1-3", "--mirror", url, "--out", str(out)).returncode == 0
        (out / "baseline" / "pubmed26n0009.xml.gz.part").write_bytes(b"half a file")  # never read
        built = subprocess.run([*cli, "build", "--corpus", str(out), *opts], capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        assert run("--updates", "--mirror", url, "--out", str(out)).returncode == 0
    added = subprocess.run([*cli, "add", str(out / "updatefiles"), *opts], capture_output=True, text=True)
    assert added.returncode == 0, added.stderr
    from biocite.index.store import DocStore, read_manifest

    manifest = read_manifest(index_dir)
    assert [Path(s.path).name for s in manifest.sources] == [Path(p).name for p in sorted(files)]
    docs = read_documents([out])
    store = DocStore(index_dir / "docs.sqlite", readonly=True)
    assert manifest.documents == len(store) == len(docs)
    assert set(store.pmids()) == set(docs)
    assert store.get(str(facts["changed"])).title.startswith("UPDATED TITLE")  # type: ignore[union-attr]
    assert not any(p in store for p in facts["deleted"])  # type: ignore[attr-defined]
