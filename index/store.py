"""The index on disk: a SQLite document store (documents, sentences, tokens, embeddings) and a manifest.

Layout of an index folder:
    manifest.json   what was built from what, with which models, parameters and library versions
    docs.sqlite     documents, their sentences and BM25 tokens, and embeddings per model (the durable state)
    bm25/           the BM25 index, derived from the stored tokens
    dense.faiss     the FAISS index, derived from the stored embeddings (+ dense_ids.json)

Parsing and embedding are the expensive steps, so their results are kept per document in SQLite and
committed in chunks: an interrupted build resumes, and adding or deleting documents touches only those.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from biocite.errors import IndexMismatchError
from biocite.files import atomic_write_text
from biocite.models import file_sha256, file_xxh3
from biocite.records import Document, Sentence
from biocite.sentences import split_sentences
from biocite.tokenize import tokenize

MANIFEST_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
    pmid TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    doc TEXT NOT NULL,
    sentences TEXT NOT NULL,
    tokens TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS embeddings (
    pmid TEXT NOT NULL,
    model TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (pmid, model)
);
"""


class SourceFile(BaseModel):
    path: str
    size: int
    mtime_ns: int
    sha256: str


class FileCheck(BaseModel):
    """Size and xxh3-128 of one index file, recorded when the build finishes and checked at every open."""

    size: int
    xxh3_128: str


class Manifest(BaseModel):
    """What an index was built from and how; compared with the settings before the index is used."""

    manifest_version: int = MANIFEST_VERSION
    status: str = "building"  # "building" until every part is written, then "complete"
    created: str = ""
    updated: str = ""
    sources: list[SourceFile] = Field(default_factory=list)
    inputs: list[str] = Field(default_factory=list)  # the paths as given (folders re-read by a rebuild)
    files: dict[str, FileCheck] = Field(default_factory=dict)  # relative path -> size and checksum
    corpus_fingerprint: str = ""
    explicit_deletions: list[str] = Field(default_factory=list)
    documents: int = 0
    sentences: int = 0
    embedding_model: str = ""
    embedding_dim: int = 0
    faiss_kind: str = ""
    bm25: dict[str, object] = Field(default_factory=dict)
    splitter_version: int | None = None  # the sentence splitter of the stored sentences (None: an older one)
    library_versions: dict[str, str] = Field(default_factory=dict)
    read_summary: str = ""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def describe_source(path: Path) -> SourceFile:
    stat = path.stat()
    return SourceFile(
        path=str(path.resolve()), size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha256=file_sha256(path)
    )


def source_unchanged(source: SourceFile) -> bool:
    """Cheap check first (size, mtime); hash only when those moved."""
    path = Path(source.path)
    if not path.is_file():
        return False
    stat = path.stat()
    if stat.st_size == source.size and stat.st_mtime_ns == source.mtime_ns:
        return True
    return stat.st_size == source.size and file_sha256(path) == source.sha256


def corpus_fingerprint(sources: Sequence[SourceFile], deletions: Sequence[str]) -> str:
    canonical = json.dumps([[s.path, s.sha256] for s in sources] + [sorted(deletions)])
    return hashlib.sha256(canonical.encode()).hexdigest()


def manifest_path(index_dir: Path) -> Path:
    return index_dir / "manifest.json"


# --- integrity ------------------------------------------------------------------------------------------

REPAIR = "run `biocite index build` to repair it"


def index_files(index_dir: Path) -> list[str]:
    """The files an index consists of (manifest, SQLite side files and temporaries excluded)."""
    names = []
    for path in sorted(index_dir.rglob("*")):
        rel = path.relative_to(index_dir).as_posix()
        if path.is_file() and rel != "manifest.json" and not rel.endswith(("-wal", "-shm", ".tmp", ".log")):
            names.append(rel)
    return names


def file_checks(index_dir: Path) -> dict[str, FileCheck]:
    return {
        rel: FileCheck(size=(index_dir / rel).stat().st_size, xxh3_128=file_xxh3(index_dir / rel))
        for rel in index_files(index_dir)
    }


def damaged_file(index_dir: Path, manifest: Manifest, only: Sequence[str] | None = None) -> str | None:
    """The first index file whose size or content differs from the manifest, with why; None if intact.
    Sizes first (free), then xxh3-128 of every byte (~GB/s): cheap enough for every search process."""
    names = [n for n in manifest.files if only is None or n in only]
    for rel in names:
        path = index_dir / rel
        if not path.is_file():
            return f"{path} is missing"
        size = path.stat().st_size
        if size != manifest.files[rel].size:
            return f"{path} is damaged ({size:,} bytes, the build wrote {manifest.files[rel].size:,})"
    for rel in names:
        if file_xxh3(index_dir / rel) != manifest.files[rel].xxh3_128:
            return f"{index_dir / rel} is damaged (its checksum differs from the one the build recorded)"
    return None


def verify_index(index_dir: Path, manifest: Manifest) -> None:
    """One-line IndexMismatchError naming the damaged file and the repair command."""
    problem = damaged_file(index_dir, manifest)
    if problem:
        raise IndexMismatchError(f"{problem}: {REPAIR}")


# --- staged updates --------------------------------------------------------------------------------------


def staging_dir(index_dir: Path) -> Path:
    return index_dir.with_name(index_dir.name + ".staging")


def previous_dir(index_dir: Path) -> Path:
    return index_dir.with_name(index_dir.name + ".previous")


def recover_swap(index_dir: Path) -> None:
    """Finish or undo a swap that a crash interrupted between its two renames."""
    previous = previous_dir(index_dir)
    if not manifest_path(index_dir).is_file() and manifest_path(previous).is_file():
        if index_dir.exists():
            shutil.rmtree(index_dir)
        previous.rename(index_dir)


def swap_in(staging: Path, index_dir: Path) -> None:
    """Replace index_dir by staging: two renames (readers holding open files keep reading the old one)."""
    previous = previous_dir(index_dir)
    if previous.exists():
        shutil.rmtree(previous)
    index_dir.rename(previous)
    staging.rename(index_dir)
    shutil.rmtree(previous, ignore_errors=True)


def read_manifest(index_dir: Path) -> Manifest:
    recover_swap(index_dir)
    path = manifest_path(index_dir)
    if not path.is_file():
        raise IndexMismatchError(f"no index at {index_dir}: run `biocite index build`")
    try:
        return Manifest.model_validate_json(path.read_text())
    except ValueError:
        raise IndexMismatchError(f"{path} is not a biocite index manifest (foreign or corrupt)") from None


def write_manifest(index_dir: Path, manifest: Manifest) -> None:
    """Atomic: a crash leaves the old manifest or the new one, never half of one."""
    manifest.updated = now()
    atomic_write_text(manifest_path(index_dir), manifest.model_dump_json(indent=2))


def document_hash(doc: Document) -> str:
    return hashlib.sha256(doc.model_dump_json().encode()).hexdigest()[:16]


class DocStore:
    """Documents, sentences, tokens and embeddings in one SQLite file."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
        self.conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        if not readonly:
            self.conn.executescript(_SCHEMA)
            self.conn.execute("PRAGMA journal_mode=WAL")

    # --- reading ----------------------------------------------------------------------------------------

    def get(self, pmid: str) -> Document | None:
        row = self.conn.execute("SELECT doc FROM docs WHERE pmid = ?", (pmid,)).fetchone()
        return Document.model_validate_json(row[0]) if row else None

    def get_many(self, pmids: Sequence[str]) -> dict[str, Document]:
        found: dict[str, Document] = {}
        for chunk in _chunks(list(pmids), 500):
            marks = ",".join("?" * len(chunk))
            for pmid, doc in self.conn.execute(f"SELECT pmid, doc FROM docs WHERE pmid IN ({marks})", chunk):
                found[pmid] = Document.model_validate_json(doc)
        return found

    def sentences(self, pmid: str) -> list[Sentence]:
        row = self.conn.execute("SELECT sentences FROM docs WHERE pmid = ?", (pmid,)).fetchone()
        return [Sentence(pmid=pmid, **s) for s in json.loads(row[0])] if row else []

    def pmids(self) -> list[str]:
        return [row[0] for row in self.conn.execute("SELECT pmid FROM docs ORDER BY pmid")]

    def hashes(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT pmid, content_hash FROM docs"))

    def iter_tokens(self) -> Iterator[tuple[str, list[str]]]:
        for pmid, tokens in self.conn.execute("SELECT pmid, tokens FROM docs ORDER BY pmid"):
            yield pmid, json.loads(tokens)

    def tokens_many(self, pmids: Sequence[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for chunk in _chunks(list(pmids), 500):
            marks = ",".join("?" * len(chunk))
            for pmid, tokens in self.conn.execute(
                f"SELECT pmid, tokens FROM docs WHERE pmid IN ({marks})", chunk
            ):
                found[pmid] = json.loads(tokens)
        return found

    def sentence_count(self) -> int:
        total = self.conn.execute("SELECT SUM(json_array_length(sentences)) FROM docs").fetchone()[0]
        return int(total or 0)

    def __len__(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM docs").fetchone()[0])

    def __contains__(self, pmid: object) -> bool:
        return self.conn.execute("SELECT 1 FROM docs WHERE pmid = ?", (pmid,)).fetchone() is not None

    # --- writing ----------------------------------------------------------------------------------------

    def upsert(self, doc: Document, content_hash: str, sentences: list[Sentence], tokens: list[str]) -> None:
        compact = [s.model_dump(exclude={"pmid"}) for s in sentences]
        self.conn.execute(
            "INSERT OR REPLACE INTO docs VALUES (?, ?, ?, ?, ?)",
            (doc.pmid, content_hash, doc.model_dump_json(), json.dumps(compact), json.dumps(tokens)),
        )

    def delete(self, pmids: Iterable[str]) -> int:
        removed = 0
        for chunk in _chunks(list(pmids), 500):
            marks = ",".join("?" * len(chunk))
            removed += self.conn.execute(f"DELETE FROM docs WHERE pmid IN ({marks})", chunk).rowcount
            self.conn.execute(f"DELETE FROM embeddings WHERE pmid IN ({marks})", chunk)
        return removed

    def commit(self) -> None:
        self.conn.commit()

    def abort(self) -> None:
        """Drop the uncommitted chunk and close (a failed build: committed chunks stay for the resume)."""
        try:
            self.conn.rollback()
            self.conn.close()
        except sqlite3.ProgrammingError:  # already closed
            pass

    def close(self) -> None:
        """Commit, fold the WAL into the database file (so its checksum covers every row) and close."""
        self.conn.commit()
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.close()

    # --- embeddings -------------------------------------------------------------------------------------

    def missing_embeddings(self, model: str) -> list[str]:
        """PMIDs with no embedding for this model, or one computed from an older version of the document."""
        rows = self.conn.execute(
            "SELECT d.pmid FROM docs d LEFT JOIN embeddings e ON e.pmid = d.pmid AND e.model = ? "
            "WHERE e.pmid IS NULL OR e.content_hash != d.content_hash ORDER BY d.pmid",
            (model,),
        )
        return [row[0] for row in rows]

    def put_embeddings(self, model: str, pmids: Sequence[str], vectors: np.ndarray) -> None:
        hashes = self.hashes_for(pmids)
        self.conn.executemany(
            "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)",
            [
                (p, model, hashes[p], v.astype(np.float32).tobytes())
                for p, v in zip(pmids, vectors, strict=True)
            ],
        )

    def hashes_for(self, pmids: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for chunk in _chunks(list(pmids), 500):
            marks = ",".join("?" * len(chunk))
            found.update(
                self.conn.execute(f"SELECT pmid, content_hash FROM docs WHERE pmid IN ({marks})", chunk)
            )
        return found

    def all_embeddings(self, model: str, dim: int) -> tuple[list[str], np.ndarray]:
        rows = self.conn.execute(
            "SELECT e.pmid, e.vector FROM embeddings e JOIN docs d ON d.pmid = e.pmid "
            "WHERE e.model = ? ORDER BY e.pmid",
            (model,),
        ).fetchall()
        vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        return [r[0] for r in rows], vectors

    def embedding_count(self, model: str) -> int:
        row = self.conn.execute(
            "SELECT COUNT(*) FROM embeddings e JOIN docs d ON d.pmid = e.pmid WHERE e.model = ?", (model,)
        ).fetchone()
        return int(row[0])

    def iter_embeddings(
        self, model: str, dim: int, chunk: int = 20_000
    ) -> Iterator[tuple[list[str], np.ndarray]]:
        """The same rows as `all_embeddings`, in chunks, so a large index never holds them all at once."""
        rows = self.conn.execute(
            "SELECT e.pmid, e.vector FROM embeddings e JOIN docs d ON d.pmid = e.pmid "
            "WHERE e.model = ? ORDER BY e.pmid",
            (model,),
        )
        while batch := rows.fetchmany(chunk):
            vectors = np.frombuffer(b"".join(r[1] for r in batch), dtype=np.float32).reshape(len(batch), dim)
            yield [r[0] for r in batch], vectors

    def drop_embeddings_except(self, model: str) -> None:
        self.conn.execute("DELETE FROM embeddings WHERE model != ?", (model,))


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class Prepared:
    """A document ready to store: split and tokenised here, or later only if it changed (sentences None)."""

    doc: Document
    content_hash: str
    sentences: list[Sentence] | None = None
    tokens: list[str] | None = None


def prepare(doc: Document, stem: bool, *, split: bool) -> Prepared:
    if not split:
        return Prepared(doc, document_hash(doc))
    return Prepared(doc, document_hash(doc), split_sentences(doc), tokenize(doc.text, stem=stem))
