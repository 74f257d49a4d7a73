"""`biocite corpus download`: NLM's PubMed baseline and daily update files, verified and resumable.

The mirror (NLM's server by default) holds `baseline/` and `updatefiles/`, each with the gzipped XML files
(`pubmed25n0001.xml.gz` ...) and beside each one its published checksum (`pubmed25n0001.xml.gz.md5`,
`MD5(pubmed25n0001.xml.gz)= <hex>`). A file is written to `<name>.part`, continued with an HTTP Range
request after a dropped connection or a killed run, and renamed to its final name only once its MD5
matches the published one; so the corpus readers (which read `.xml.gz` only) never see half a file.
A finished file is checked against its checksum again on a later run and is not fetched again.

Layout written under `--out DIR`: `DIR/baseline/*.xml.gz` and `DIR/updatefiles/*.xml.gz`. Sorted by path,
baseline files come before update files and update files in their published order, which is the order
`biocite index build DIR` applies them in (later records replace earlier ones, deletions apply in order).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

import httpx
from pydantic import BaseModel, Field

from biocite.errors import InputError

DEFAULT_MIRROR = "https://ftp.ncbi.nlm.nih.gov/pubmed/"
Folder = Literal["baseline", "updatefiles"]
FOLDERS: tuple[Folder, ...] = ("baseline", "updatefiles")
_FILE_NAME = re.compile(r'href="(?:[^"]*/)?(pubmed\d{2}n(\d{4})\.xml\.gz)"')
_MD5 = re.compile(r"\b([0-9a-fA-F]{32})\b")
CHUNK = 1 << 16
Progress = Callable[[str, int, int | None], None]  # (file name, bytes of it on disk, its size or None)


class RemoteFile(BaseModel):
    folder: Folder
    name: str
    number: int

    @property
    def path(self) -> str:
        return f"{self.folder}/{self.name}"


class FileResult(BaseModel):
    path: str  # folder/name, as on the mirror
    status: Literal["downloaded", "already verified", "failed"]
    bytes_fetched: int = 0
    attempts: int = 0
    error: str = ""


class DownloadReport(BaseModel):
    out: str
    files: list[FileResult] = Field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> list[FileResult]:
        return [f for f in self.files if f.status == "failed"]

    def summary(self) -> str:
        counts = {s: sum(f.status == s for f in self.files) for s in ("downloaded", "already verified")}
        fetched = sum(f.bytes_fetched for f in self.files)
        return (
            f"{len(self.files)} files in {self.out}: {counts['downloaded']} downloaded, "
            f"{counts['already verified']} already verified, {len(self.failed)} failed; "
            f"{fetched / 1e6:.1f} MB fetched in {self.seconds:.1f} s"
        )


class DownloadOptions(BaseModel):
    mirror: str = DEFAULT_MIRROR
    connections: int = Field(default=4, ge=1, le=32)
    retries: int = Field(default=5, ge=0)  # extra tries per file after the first
    backoff_s: float = Field(default=1.0, ge=0)  # doubled after every failed try, capped at 60 s
    timeout_s: float = Field(default=60.0, gt=0)


def parse_ranges(spec: str) -> set[int]:
    """'1-50,60,70-72' -> {1..50, 60, 70, 71, 72}; raises InputError naming the bad part."""
    numbers: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not match or (match.group(2) and int(match.group(2)) < int(match.group(1))):
            raise InputError(f"--baseline {spec!r}: {part!r} is not a file number or range like 1-50")
        low = int(match.group(1))
        numbers.update(range(low, int(match.group(2) or low) + 1))
    return numbers


def parse_md5(text: str, name: str) -> str:
    """The hex digest from NLM's `MD5(name)= hex` line (or a bare `hex  name` line)."""
    match = _MD5.search(text.split("=", 1)[-1] if "=" in text else text)
    if not match:
        raise ValueError(f"{name}.md5 holds no MD5 digest")
    return match.group(1).lower()


def file_md5(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, lambda: hashlib.md5(usedforsecurity=False)).hexdigest()


def _folder_url(mirror: str, folder: Folder) -> str:
    return f"{mirror.rstrip('/')}/{folder}/"


def list_remote(client: httpx.Client, mirror: str, folder: Folder) -> list[RemoteFile]:
    """The XML files of one mirror folder, from its HTML index, in file-number order."""
    url = _folder_url(mirror, folder)
    try:
        response = client.get(url)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        raise InputError(f"cannot list {url}: {_reason(exc)}") from exc
    found = {name: int(num) for name, num in _FILE_NAME.findall(response.text)}
    if not found:
        raise InputError(f"{url}: no pubmedYYnNNNN.xml.gz files listed (is --mirror right?)")
    return sorted((RemoteFile(folder=folder, name=n, number=i) for n, i in found.items()), key=_order)


def _order(f: RemoteFile) -> tuple[int, int, str]:
    return (FOLDERS.index(f.folder), f.number, f.name)


def select_files(
    client: httpx.Client, mirror: str, *, baseline: str | None, updates: bool, everything: bool
) -> list[RemoteFile]:
    """The requested files, baseline before updates; a requested baseline number not listed is an error."""
    if not (baseline or updates or everything):
        raise InputError("nothing to download: give --baseline N-M, --updates or --all")
    chosen: list[RemoteFile] = []
    wanted = parse_ranges(baseline) if baseline and not everything else set()  # a bad spec fails offline
    if baseline or everything:
        listed = list_remote(client, mirror, "baseline")
        if everything:
            chosen += listed
        else:
            by_number = {f.number: f for f in listed}
            missing = sorted(wanted - by_number.keys())
            if missing:
                shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
                raise InputError(f"baseline files {shown} are not on {_folder_url(mirror, 'baseline')}")
            chosen += [by_number[n] for n in sorted(wanted)]
    if updates or everything:
        chosen += list_remote(client, mirror, "updatefiles")
    return chosen


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Fetcher:
    """Fetches and verifies one file at a time; shared by the worker threads (httpx.Client is thread-safe)."""

    def __init__(self, client: httpx.Client, out: Path, options: DownloadOptions, progress: Progress) -> None:
        self.client, self.out, self.options, self.progress = client, out, options, progress

    def fetch(self, remote: RemoteFile) -> FileResult:
        target = self.out / remote.folder / remote.name
        part = target.with_name(target.name + ".part")
        target.parent.mkdir(parents=True, exist_ok=True)
        result = FileResult(path=remote.path, status="failed")
        url = _folder_url(self.options.mirror, remote.folder) + remote.name
        delay = self.options.backoff_s
        for attempt in range(1, self.options.retries + 2):
            result.attempts = attempt
            try:
                expected = parse_md5(self._get_text(url + ".md5"), remote.name)
                if target.is_file():
                    if file_md5(target) == expected:
                        result.status = "already verified"
                        return result
                    target.unlink()  # corrupt or truncated since it was verified: fetch it again
                result.bytes_fetched += self._fetch_part(url, part, remote.name)
                actual = file_md5(part)
                if actual == expected:
                    part.replace(target)
                    result.status, result.error = "downloaded", ""
                    return result
                part.unlink()  # a whole file with the wrong bytes: start over
                result.error = f"MD5 {actual} != published {expected}"
            except (httpx.HTTPError, OSError, ValueError) as exc:
                result.error = _reason(exc)
            if attempt <= self.options.retries:
                time.sleep(delay)
                delay = min(delay * 2, 60.0)
        return result

    def _get_text(self, url: str) -> str:
        response = self.client.get(url)
        response.raise_for_status()
        return response.text

    def _fetch_part(self, url: str, part: Path, name: str) -> int:
        """Append the rest of the file to `part` (Range from its current size); bytes received."""
        have = part.stat().st_size if part.is_file() else 0
        headers = {"Range": f"bytes={have}-"} if have else {}
        received = 0
        with self.client.stream("GET", url, headers=headers) as response:
            if response.status_code == 416:  # already whole: nothing after `have`
                return 0
            response.raise_for_status()
            resumed = response.status_code == 206
            length = response.headers.get("content-length")
            total = (int(length) + (have if resumed else 0)) if length else None
            if not resumed:  # a fresh start, or the server ignored Range
                have = 0
            self.progress(name, have, total)
            with part.open("ab" if resumed else "wb") as handle:
                for block in response.iter_bytes(CHUNK):
                    handle.write(block)
                    received += len(block)
                    self.progress(name, have + received, total)
        if total is not None and have + received < total:
            raise httpx.RemoteProtocolError(
                f"{name}: connection closed after {have + received} of {total} bytes"
            )
        return received


def download(
    out: Path,
    files: Sequence[RemoteFile],
    options: DownloadOptions,
    client: httpx.Client,
    progress: Progress | None = None,
) -> DownloadReport:
    """Fetch `files` into `out` over `options.connections` parallel connections; never raises per file."""
    start = time.perf_counter()
    fetcher = _Fetcher(client, out, options, progress or (lambda name, n, total: None))
    with ThreadPoolExecutor(max_workers=options.connections) as pool:
        results = list(pool.map(fetcher.fetch, files))
    return DownloadReport(out=str(out), files=results, seconds=round(time.perf_counter() - start, 2))


def make_client(options: DownloadOptions) -> httpx.Client:
    limits = httpx.Limits(
        max_connections=options.connections + 1, max_keepalive_connections=options.connections
    )
    return httpx.Client(timeout=options.timeout_s, limits=limits, follow_redirects=True)
