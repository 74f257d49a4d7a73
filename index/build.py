"""Build, update and open the index.

`build_index` is incremental and resumable: documents are parsed, split and tokenised only when new or
changed, embeddings are computed only for documents that lack one for the configured model, and every
chunk is committed to SQLite before the next starts. BM25 and FAISS are then re-derived from the stored
tokens and vectors (seconds at this size), and the manifest is written last.
"""

from __future__ import annotations

import resource
import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from pydantic import BaseModel, Field
from tqdm import tqdm

from biocite.errors import IndexMismatchError, InputError
from biocite.index.bm25 import BM25Index
from biocite.index.dense import DenseIndex, Embedder, choose_faiss_kind
from biocite.index.readers import Deletion, ReadStats, expand_paths, iter_records
from biocite.index.sentences import split_sentences
from biocite.index.store import (
    MANIFEST_VERSION,
    DocStore,
    Manifest,
    corpus_fingerprint,
    damaged_file,
    describe_source,
    document_hash,
    file_checks,
    now,
    read_manifest,
    source_unchanged,
    staging_dir,
    swap_in,
    verify_index,
    write_manifest,
)
from biocite.index.tokenize import tokenize
from biocite.records import Document, check_pmid
from biocite.settings import Settings

TOKENIZER_VERSION = 1
DOCS_FILE = "docs.sqlite"
WARNINGS_LOG = "build-warnings.log"  # every reader warning of the last build (the report lists the first)
COMMIT_EVERY = 500
EMBED_CHUNK = 256


class BuildReport(BaseModel):
    index_dir: str
    documents: int = 0
    sentences: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    embedded: int = 0
    seconds: dict[str, float] = Field(default_factory=dict)
    peak_rss_mb: float = 0.0
    read: ReadStats = Field(default_factory=ReadStats)

    def summary(self) -> str:
        steps = ", ".join(f"{name} {secs:.1f}s" for name, secs in self.seconds.items())
        return (
            f"index {self.index_dir}: {self.documents} documents, {self.sentences} sentences "
            f"(+{self.added} added, {self.changed} changed, -{self.removed} removed, {self.embedded} embedded)\n"
            f"read: {self.read.summary()}\n"
            + "".join(f"  {line}\n" for line in self.read.warning_lines())
            + f"time: {steps}; peak memory {self.peak_rss_mb:.0f} MB"
        )


def corpus_files(paths: Sequence[Path]) -> list[Path]:
    """Corpus files in the order they apply (folders sorted, so update files come after baselines)."""
    files = expand_paths(list(paths))
    if not files:
        raise InputError(f"no corpus files (.jsonl, .xml, optionally .gz) under {', '.join(map(str, paths))}")
    return files


def bm25_params(settings: Settings) -> dict[str, object]:
    ix = settings.index
    return {
        "backend": ix.bm25_backend,
        "k1": ix.k1,
        "b": ix.b,
        "epsilon": ix.epsilon,
        "stem": ix.stem,
        "tokenizer_version": TOKENIZER_VERSION,
    }


def library_versions() -> dict[str, str]:
    names = ["biocite", "bm25s", "rank-bm25", "faiss-cpu", "sentence-transformers", "torch", "pysbd"]
    return {name: version(name) for name in names}


def build_index(
    settings: Settings,
    paths: Sequence[Path],
    *,
    progress: bool = True,
    deletions: Sequence[str] = (),
) -> BuildReport:
    """Build, resume or update the index. Inputs are checked before the index is touched; a complete
    index is updated in a staging copy swapped in only when the update finished, so a failed or
    interrupted update leaves the index as it was (readable, every document kept)."""
    files = corpus_files(paths)
    deletions = [check_pmid(p) for p in deletions]
    index_dir = settings.index_dir
    if _is_complete(index_dir):
        return _build_staged(settings, paths, files, progress=progress, deletions=deletions)
    index_dir.mkdir(parents=True, exist_ok=True)
    return _build_in_place(settings, index_dir, paths, files, progress=progress, deletions=deletions)


def _is_complete(index_dir: Path) -> bool:
    try:
        return read_manifest(index_dir).status == "complete"
    except IndexMismatchError:
        return False


def _build_staged(
    settings: Settings, paths: Sequence[Path], files: list[Path], *, progress: bool, deletions: Sequence[str]
) -> BuildReport:
    index_dir = settings.index_dir
    staging = staging_dir(index_dir)
    if staging.exists():  # left by an earlier update that failed or was killed
        shutil.rmtree(staging)
    shutil.copytree(index_dir, staging, ignore=shutil.ignore_patterns("*-shm", "*.tmp"))
    manifest = read_manifest(staging)
    if damaged_file(staging, manifest, only=[DOCS_FILE]):  # the store itself: re-read the sources
        for name in (DOCS_FILE, DOCS_FILE + "-wal"):
            (staging / name).unlink(missing_ok=True)
    staged = settings.model_copy(
        update={"index": settings.index.model_copy(update={"dir": staging})}, deep=True
    )
    try:
        report = _build_in_place(staged, staging, paths, files, progress=progress, deletions=deletions)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    swap_in(staging, index_dir)
    report.index_dir = str(index_dir)
    report.read.log_file = str(index_dir / WARNINGS_LOG)
    return report


def _build_in_place(
    settings: Settings,
    index_dir: Path,
    paths: Sequence[Path],
    files: list[Path],
    *,
    progress: bool,
    deletions: Sequence[str],
) -> BuildReport:
    report = BuildReport(index_dir=str(index_dir))
    report.read.log_file = str(index_dir / WARNINGS_LOG)
    (index_dir / WARNINGS_LOG).unlink(missing_ok=True)
    manifest = _start_manifest(index_dir, settings, inputs=[str(Path(p).resolve()) for p in paths])
    manifest.explicit_deletions = sorted(set(manifest.explicit_deletions) | set(deletions))
    store = DocStore(index_dir / DOCS_FILE)
    try:
        return _build_into(settings, index_dir, files, manifest, store, report, progress=progress)
    except BaseException:
        store.abort()  # what was committed stays for the resume; the lock is released for this process
        raise


def _build_into(
    settings: Settings,
    index_dir: Path,
    files: list[Path],
    manifest: Manifest,
    store: DocStore,
    report: BuildReport,
    *,
    progress: bool,
) -> BuildReport:
    retokenize = manifest.bm25.get("stem") not in (None, settings.index.stem) or manifest.bm25.get(
        "tokenizer_version"
    ) not in (None, TOKENIZER_VERSION)

    with _timed(report, "parse"):
        _sync_documents(store, files, settings, report, retokenize=retokenize, progress=progress)
        report.removed += store.delete(manifest.explicit_deletions)
        store.commit()
    with _timed(report, "embed"):
        embedder = Embedder.from_settings(settings)
        report.embedded = _embed_missing(store, embedder, settings, progress=progress)
    with _timed(report, "bm25"):
        bm25 = _build_bm25(store, settings)
        bm25.save(index_dir / "bm25")
    with _timed(report, "faiss"):
        ids, vectors = store.all_embeddings(embedder.name, embedder.dim)
        kind = choose_faiss_kind(settings.index.faiss_kind, len(ids), settings.index.hnsw_above)
        DenseIndex.build(ids, vectors, kind).save(index_dir)

    sources = [describe_source(f) for f in files]
    manifest.sources = sources
    manifest.corpus_fingerprint = corpus_fingerprint(sources, manifest.explicit_deletions)
    manifest.documents = report.documents = len(store)
    manifest.sentences = report.sentences = store.sentence_count()
    manifest.embedding_model, manifest.embedding_dim, manifest.faiss_kind = embedder.name, embedder.dim, kind
    manifest.bm25 = bm25_params(settings)
    manifest.library_versions = library_versions()
    manifest.read_summary = report.read.summary()
    store.close()
    manifest.files = file_checks(index_dir)
    manifest.status = "complete"
    write_manifest(index_dir, manifest)
    report.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return report


def recorded_inputs(settings: Settings) -> list[Path] | None:
    """The corpus paths an existing index was built from (None: no readable index there)."""
    try:
        manifest = read_manifest(settings.index_dir)
    except IndexMismatchError:
        return None
    inputs = manifest.inputs or [s.path for s in manifest.sources]
    return [Path(p) for p in inputs] or None


def delete_documents(settings: Settings, pmids: Sequence[str]) -> BuildReport:
    """Remove PMIDs from the index (remembered in the manifest, so a later build keeps them out)."""
    checked = [check_pmid(p) for p in pmids]
    inputs = recorded_inputs(settings)
    if inputs is None:
        read_manifest(settings.index_dir)  # raises the one-line "no index" error
        raise IndexMismatchError(f"the index in {settings.index_dir} records no corpus sources")
    return build_index(settings, inputs, progress=False, deletions=checked)


def add_sources(settings: Settings, paths: Sequence[Path], *, progress: bool = True) -> BuildReport:
    """Add corpus files to an existing index; only their new or changed documents are processed."""
    corpus_files(paths)  # check the new paths before anything else
    manifest = read_manifest(settings.index_dir)
    if manifest.status != "complete":
        raise IndexMismatchError(
            f"the index build in {settings.index_dir} did not finish: run `biocite index build` first"
        )
    known = recorded_inputs(settings) or []
    resolved = {p.resolve() for p in known}
    new = [Path(p) for p in paths if Path(p).resolve() not in resolved]
    return build_index(settings, known + new, progress=progress)


def _start_manifest(index_dir: Path, settings: Settings, *, inputs: list[str]) -> Manifest:
    """Mark the index as being built with these inputs (a crash leaves it marked so, and the next build,
    with or without --corpus, resumes from the same inputs)."""
    try:
        manifest = read_manifest(index_dir)
    except IndexMismatchError:
        if any(index_dir.iterdir()):
            raise IndexMismatchError(
                f"{index_dir} is not empty and holds no biocite index: choose another index.dir"
            ) from None
        manifest = Manifest(created=now())
    if manifest.manifest_version != MANIFEST_VERSION:
        raise IndexMismatchError(
            f"{index_dir} holds an index of format {manifest.manifest_version}, this biocite writes "
            f"{MANIFEST_VERSION}: remove the folder or choose another index.dir"
        )
    manifest.status = "building"
    manifest.inputs = inputs
    write_manifest(index_dir, manifest)
    return manifest


def _sync_documents(
    store: DocStore,
    files: list[Path],
    settings: Settings,
    report: BuildReport,
    *,
    retokenize: bool,
    progress: bool,
) -> None:
    known = store.hashes()
    seen: set[str] = set()
    bar = tqdm(desc="documents", unit="doc", disable=not progress)
    pending = 0
    for record in iter_records(files, report.read):
        if isinstance(record, Deletion):
            report.removed += store.delete(record.pmids)
            seen.difference_update(record.pmids)
            for pmid in record.pmids:
                known.pop(pmid, None)
            continue
        seen.add(record.pmid)
        content_hash = document_hash(record)
        if known.get(record.pmid) == content_hash and not retokenize:
            continue
        _store_document(store, record, content_hash, settings)
        if record.pmid in known:
            report.changed += 1
        else:
            report.added += 1
        known[record.pmid] = content_hash
        pending += 1
        bar.update()
        if pending >= COMMIT_EVERY:
            store.commit()
            pending = 0
    bar.close()
    report.removed += store.delete([pmid for pmid in known if pmid not in seen])


def _store_document(store: DocStore, doc: Document, content_hash: str, settings: Settings) -> None:
    store.upsert(doc, content_hash, split_sentences(doc), tokenize(doc.text, stem=settings.index.stem))


def _embed_missing(store: DocStore, embedder: Embedder, settings: Settings, *, progress: bool) -> int:
    missing = store.missing_embeddings(embedder.name)
    bar = tqdm(total=len(missing), desc=f"embeddings ({embedder.name})", unit="doc", disable=not progress)
    for chunk in _chunked(missing, EMBED_CHUNK):
        docs = store.get_many(chunk)
        vectors = embedder.encode([docs[p].text for p in chunk], batch_size=settings.index.embed_batch_size)
        store.put_embeddings(embedder.name, chunk, vectors)
        store.commit()  # each finished chunk survives a crash or Ctrl-C
        bar.update(len(chunk))
    bar.close()
    return len(missing)


def _build_bm25(store: DocStore, settings: Settings) -> BM25Index:
    ids: list[str] = []
    tokens: list[list[str]] = []
    for pmid, doc_tokens in store.iter_tokens():
        ids.append(pmid)
        tokens.append(doc_tokens)
    ix = settings.index
    return BM25Index.build(tokens, ids, k1=ix.k1, b=ix.b, epsilon=ix.epsilon, backend=ix.bm25_backend)


def _chunked(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class _timed:
    def __init__(self, report: BuildReport, step: str) -> None:
        self.report, self.step = report, step

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.report.seconds[self.step] = round(time.perf_counter() - self.start, 2)


# --- opening ------------------------------------------------------------------------------------------


@dataclass
class LoadedIndex:
    """Everything a retriever needs, loaded from one index folder."""

    dir: Path
    manifest: Manifest
    docs: DocStore
    bm25: BM25Index
    dense: DenseIndex
    embedder: Embedder
    stem: bool


def check_compatible(manifest: Manifest, settings: Settings, index_dir: Path) -> None:
    """Refuse an unfinished, stale or foreign index with a message that says what to do."""
    if manifest.status != "complete":
        raise IndexMismatchError(
            f"the index build in {index_dir} did not finish: run `biocite index build` to resume"
        )
    if manifest.embedding_model != settings.index.dense_model:
        raise IndexMismatchError(
            f"the index in {index_dir} was embedded with {manifest.embedding_model!r} but settings ask for "
            f"{settings.index.dense_model!r}: run `biocite index build` to add those embeddings"
        )
    wanted = bm25_params(settings)
    changed = sorted(k for k, v in wanted.items() if manifest.bm25.get(k) != v)
    if changed:
        raise IndexMismatchError(
            f"the index in {index_dir} was built with other BM25 parameters ({', '.join(changed)}): "
            "run `biocite index build`"
        )
    for source in manifest.sources:
        if not source_unchanged(source):
            raise IndexMismatchError(
                f"the index is stale: {source.path} changed or vanished since it was built; run `biocite index build`"
            )


def open_index(settings: Settings) -> LoadedIndex:
    index_dir = settings.index_dir
    manifest = read_manifest(index_dir)
    check_compatible(manifest, settings, index_dir)
    verify_index(index_dir, manifest)
    return LoadedIndex(
        dir=index_dir,
        manifest=manifest,
        docs=DocStore(index_dir / "docs.sqlite", readonly=True),
        bm25=BM25Index.load(index_dir / "bm25"),
        dense=DenseIndex.load(index_dir),
        embedder=Embedder.from_settings(settings),
        stem=settings.index.stem,
    )
