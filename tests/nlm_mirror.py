"""A local stand-in for NLM's PubMed FTP/HTTPS server, for `corpus download` tests and benchmarks.

Serves `baseline/` and `updatefiles/` with HTML listings, gzipped MedlineCitationSet files made from the
shipped 2016 MEDLINE sample and NLM-style `.md5` files, on 127.0.0.1. It honours `Range` (206), and can
misbehave per file: serve corrupt bytes once, drop the connection mid-file once, publish a wrong checksum,
or send slowly. Every request is logged as (method, path, Range header).
"""

from __future__ import annotations

import gzip
import hashlib
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from lxml import etree

from tests.conftest import DATA

SOURCE = DATA / "pubmed_xml" / "medline16n0902.xml.gz"
PREFIX = "pubmed26n"


@dataclass
class MirrorState:
    files: dict[str, bytes] = field(default_factory=dict)  # "baseline/pubmed26n0001.xml.gz" -> bytes
    wrong_md5: set[str] = field(default_factory=set)  # always publish a wrong checksum
    corrupt_once: set[str] = field(default_factory=set)  # first GET serves flipped bytes
    drop_once: set[str] = field(default_factory=set)  # first GET stops half-way and closes
    slow: dict[str, float] = field(default_factory=dict)  # seconds to sleep per 1 KiB sent
    log: list[tuple[str, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def md5_text(self, path: str) -> str:
        digest = hashlib.md5(self.files[path]).hexdigest()
        if path in self.wrong_md5:
            digest = "0" * 32
        return f"MD5({path.rsplit('/', 1)[1]})= {digest}\n"

    def gets(self, path: str) -> list[str]:
        """Range headers ('' for none) of the GETs of one file."""
        return [rng for method, p, rng in self.log if method == "GET" and p == path]


def citations() -> list[etree._Element]:
    with gzip.open(SOURCE) as handle:
        root = etree.parse(handle).getroot()
    return list(root.iterfind("MedlineCitation"))


def xml_file(records: list[etree._Element], deletions: list[str] = ()) -> bytes:  # type: ignore[assignment]
    root = etree.Element("MedlineCitationSet")
    root.extend(records)
    if deletions:
        delete = etree.SubElement(root, "DeleteCitation")
        for pmid in deletions:
            etree.SubElement(delete, "PMID", Version="1").text = pmid
    xml = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    return gzip.compress(xml, mtime=0)


def pubmed_like_files(big: int = 300) -> tuple[dict[str, bytes], dict[str, object]]:
    """Three baseline files (20, 20, `big` citations) and two update files: the first replaces one
    baseline citation (new title) and adds 5, the second deletes two baseline PMIDs."""
    cites = citations()
    files: dict[str, bytes] = {}
    b1, b2, b3 = cites[:20], cites[20:40], cites[40 : 40 + big]
    for number, group in enumerate((b1, b2, b3), start=1):
        files[f"baseline/{PREFIX}{number:04d}.xml.gz"] = xml_file(group)
    changed = b1[0]
    pmid_changed = changed.findtext("PMID")
    title = changed.find("Article/ArticleTitle")
    title.text = "UPDATED TITLE " + (title.text or "")
    added = cites[40 + big : 45 + big]
    files[f"updatefiles/{PREFIX}0004.xml.gz"] = xml_file([changed, *added])
    deleted = [b2[0].findtext("PMID"), b2[1].findtext("PMID")]
    files[f"updatefiles/{PREFIX}0005.xml.gz"] = xml_file([], deletions=deleted)
    facts = {"changed": pmid_changed, "deleted": deleted, "added": [c.findtext("PMID") for c in added]}
    return files, facts


class _Handler(BaseHTTPRequestHandler):
    state: MirrorState

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve(body=False)

    def do_GET(self) -> None:  # noqa: N802
        self._serve(body=True)

    def _serve(self, *, body: bool) -> None:
        state = self.state
        path = self.path.lstrip("/").removeprefix("pubmed/")
        with state.lock:
            state.log.append((self.command, path, self.headers.get("Range", "")))
        if path in ("baseline/", "updatefiles/"):
            names = sorted(p.split("/", 1)[1] for p in state.files if p.startswith(path))
            links = "".join(f'<a href="{n}">{n}</a>\n<a href="{n}.md5">{n}.md5</a>\n' for n in names)
            return self._send(200, f"<html><body><pre>{links}</pre></body></html>".encode(), body=body)
        if path.endswith(".md5") and path[:-4] in state.files:
            return self._send(200, state.md5_text(path[:-4]).encode(), body=body)
        if path not in state.files:
            return self._send(404, b"not found", body=body)
        data = state.files[path]
        with state.lock:
            first = body and sum(1 for m, p, _ in state.log if m == "GET" and p == path) == 1
        if first and path in state.corrupt_once:
            data = bytes(b ^ 0xFF for b in data[:64]) + data[64:]
        start = 0
        rng = self.headers.get("Range", "")
        if rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= len(data):
                return self._send(416, b"", body=body)
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(len(data) - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if not body:
            return
        payload = data[start:]
        if first and path in state.drop_once:
            payload = payload[: len(payload) // 2]
        delay = state.slow.get(path, 0.0)
        try:
            for offset in range(0, len(payload), 1024):
                self.wfile.write(payload[offset : offset + 1024])
                if delay:
                    time.sleep(delay)
        except (BrokenPipeError, ConnectionResetError):
            return
        if first and path in state.drop_once:
            self.close_connection = True

    def _send(self, code: int, payload: bytes, *, body: bool) -> None:
        self.send_response(code)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if body:
            self.wfile.write(payload)


class Mirror:
    """`with Mirror(state) as url:` serves `state` on 127.0.0.1 at a free port."""

    def __init__(self, state: MirrorState) -> None:
        handler = type("Handler", (_Handler,), {"state": state})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/pubmed/"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    for path, data in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
