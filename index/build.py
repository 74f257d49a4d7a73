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
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Protocol

import numpy as np
from pydantic import BaseModel, Field
from tqdm import tqdm

from biocite.embedder import Embedder
from biocite.errors import IndexMismatchError, InputError
from biocite.files import output_folder
from biocite.index.bm25 import Backend, BM25Index
from biocite.index.dense import DenseIndex, choose_faiss_kind
from biocite.index.distributed import RayBuild
from biocite.index.ivfpq import IvfPqIndex, IvfPqParams
from biocite.index.lexical import TantivyBM25
from biocite.index.milvus import MilvusIndex, lite_uri
from biocite.index.readers import Deletion, ReadStats, expand_paths, iter_records
from biocite.index.store import (
    MANIFEST_VERSION,
    DocStore,
    Manifest,
    Prepared,
    corpus_fingerprint,
    damaged_file,
    describe_source,
    file_checks,
    now,
    prepare,
    read_manifest,
    source_unchanged,
    staging_dir,
    swap_in,
    verify_index,
    write_manifest,
)
from biocite.records import Document, check_pmid
from biocite.sentences import SPLITTER_VERSION, may_split_differently
from biocite.settings import Settings

TOKENIZER_VERSION = 2  # 2: a word whose stem is a stop word of one or two letters stays whole ("ALS")
TANTIVY_DIR = "tantivy"
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
    # the index's sentences came from an older splitter: the documents it may split differently were split again
    resplit: bool = False
    resplit_documents: int = 0
    seconds: dict[str, float] = Field(default_factory=dict)
    peak_rss_mb: float = 0.0
    read: ReadStats = Field(default_factory=ReadStats)
    # PMIDs `index delete` was given that were not indexed
    not_indexed: list[str] = Field(default_factory=list)

    def summary(self) -> str:
        steps = ", ".join(f"{name} {secs:.1f}s" for name, secs in self.seconds.items())
        resplit = (
            f"re-split: {self.resplit_documents} documents that sentence splitter {SPLITTER_VERSION} may split "
            "differently (embeddings kept)\n"
        )
        return (
            f"index {self.index_dir}: {self.documents} documents, {self.sentences} sentences "
            f"(+{self.added} added, {self.changed} changed, -{self.removed} removed, {self.embedded} embedded)\n"
            + (resplit if self.resplit else "")
            + (
                f"not in the index: {', '.join(self.not_indexed)} (remembered as deleted: later builds keep "
                "them out)\n"
                if self.not_indexed
                else ""
            )
            + f"read: {self.read.summary()}\n"
            + "".join(f"  {line}\n" for line in self.read.warning_lines())
            + f"time: {steps}; peak memory {self.peak_rss_mb:.0f} MB"
        )


def corpus_files(paths: Sequence[Path]) -> list[Path]:
    """Corpus files in the order they apply (folders sorted, so update files come after baselines); a file
    reached twice (a folder and a folder inside it, e.g. `index add pubmed/updatefiles` after
    `index build --corpus pubmed`) is read once, at its first place."""
    unique: dict[Path, Path] = {}
    for path in expand_paths(list(paths)):
        unique.setdefault(path.resolve(), path)
    files = list(unique.values())
    if not files:
        raise InputError(f"no corpus files (.jsonl, .xml, optionally .gz) under {', '.join(map(str, paths))}")
    return files


def bm25_params(settings: Settings) -> dict[str, object]:
    ix = settings.index
    engine = {"engine": ix.engine} if ix.engine != "local" else {}  # absent for local: older indexes match
    return {
        **engine,
        "backend": ix.bm25_backend,
        "k1": ix.k1,
        "b": ix.b,
        "epsilon": ix.epsilon,
        "stem": ix.stem,
        "tokenizer_version": TOKENIZER_VERSION,
    }


def ivfpq_params(settings: Settings) -> IvfPqParams:
    ix = settings.index
    return IvfPqParams(
        nlist=ix.ivf_nlist, pq_m=ix.pq_m, pq_bits=ix.pq_bits, nprobe=ix.ivf_nprobe, rescore_k=ix.rescore_k
    )


def library_versions() -> dict[str, str]:
    names = [
        "biocite",
        "bm25s",
        "rank-bm25",
        "tantivy",
        "faiss-cpu",
        "sentence-transformers",
        "torch",
        "pysbd",
    ]
    return {name: version(name) for name in names}


def build_index(
    settings: Settings,
    paths: Sequence[Path],
    *,
    progress: bool = True,
    deletions: Sequence[str] = (),
    ray: str | None = None,
) -> BuildReport:
    """Build, resume or update the index. Inputs are checked before the index is touched; a complete
    index is updated in a staging copy swapped in only when the update finished, so a failed or
    interrupted update leaves the index as it was (readable, every document kept). `ray`: "auto" or a Ray
    address to parse and embed on Ray workers (index/distributed.py)."""
    files = corpus_files(paths)
    deletions = [check_pmid(p) for p in deletions]
    index_dir = output_folder(settings.index_dir)  # index.dir naming a file: one line, exit 2
    if _is_complete(index_dir):
        return _build_staged(settings, paths, files, progress=progress, deletions=deletions, ray=ray)
    index_dir.mkdir(parents=True, exist_ok=True)
    return _build_in_place(settings, index_dir, paths, files, progress=progress, deletions=deletions, ray=ray)


def _is_complete(index_dir: Path) -> bool:
    try:
        return read_manifest(index_dir).status == "complete"
    except IndexMismatchError:
        return False


def _build_staged(
    settings: Settings,
    paths: Sequence[Path],
    files: list[Path],
    *,
    progress: bool,
    deletions: Sequence[str],
    ray: str | None = None,
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
        report = _build_in_place(
            staged, staging, paths, files, progress=progress, deletions=deletions, ray=ray
        )
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
    ray: str | None = None,
) -> BuildReport:
    report = BuildReport(index_dir=str(index_dir))
    report.read.log_file = str(index_dir / WARNINGS_LOG)
    (index_dir / WARNINGS_LOG).unlink(missing_ok=True)
    manifest = _start_manifest(index_dir, settings, inputs=[str(Path(p).resolve()) for p in paths])
    manifest.explicit_deletions = sorted(set(manifest.explicit_deletions) | set(deletions))
    store = DocStore(index_dir / DOCS_FILE)
    try:
        return _build_into(settings, index_dir, files, manifest, store, report, progress=progress, ray=ray)
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
    ray: str | None = None,
) -> BuildReport:
    older_splitter = bool(manifest.documents) and manifest.splitter_version != SPLITTER_VERSION
    report.resplit = older_splitter
    since = manifest.splitter_version
    resplit = (lambda doc: may_split_differently(doc.abstract, since)) if older_splitter else None
    stem, tokenizer = manifest.bm25.get("stem"), manifest.bm25.get("tokenizer_version")
    retokenize = stem not in (None, settings.index.stem) or tokenizer not in (None, TOKENIZER_VERSION)

    cluster = RayBuild.connect(ray, index_dir, settings) if ray else None
    with _timed(report, "parse"):
        records = cluster.records(files, report.read) if cluster else _local_records(files, report.read)
        _sync_documents(
            store,
            records,
            settings,
            report,
            retokenize=retokenize,
            resplit=resplit,
            deleted=set(manifest.explicit_deletions),
            progress=progress,
        )
        store.commit()
    if not len(store):  # said here: the engines' own error ("bm25 build: the corpus is empty") names no cause
        raise InputError("no documents left to index: every record read was skipped or deleted")
    with _timed(report, "embed"):
        # on Ray the workers embed (on their GPUs, if asked); the driver needs the model's name and size only
        embedder = Embedder.from_settings(cluster.driver_settings if cluster else settings)
        if cluster:
            report.embedded = cluster.embed_missing(store, embedder.name)
        else:
            report.embedded = _embed_missing(store, embedder, settings, progress=progress)
    if settings.index.engine == "milvus":
        with _timed(report, "milvus"):
            _build_milvus(store, embedder, settings)
        kind = "milvus"
    else:
        kind = _build_local_engines(store, embedder, settings, report)

    sources = [describe_source(f) for f in files]
    manifest.sources = sources
    manifest.corpus_fingerprint = corpus_fingerprint(sources, manifest.explicit_deletions)
    manifest.documents = report.documents = len(store)
    manifest.sentences = report.sentences = store.sentence_count()
    manifest.embedding_model, manifest.embedding_dim, manifest.faiss_kind = embedder.name, embedder.dim, kind
    manifest.bm25 = bm25_params(settings)
    manifest.splitter_version = SPLITTER_VERSION
    manifest.library_versions = library_versions()
    manifest.read_summary = report.read.summary()
    store.close()
    if cluster:
        cluster.finish()  # the saved shards go before the index files are checksummed
    manifest.files = file_checks(index_dir)
    manifest.status = "complete"
    write_manifest(index_dir, manifest)
    report.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return report


def _build_local_engines(store: DocStore, embedder: Embedder, settings: Settings, report: BuildReport) -> str:
    """BM25 (bm25s, rank-bm25 or tantivy) and FAISS (flat, HNSW or IVF-PQ) files in the index folder."""
    index_dir = settings.index_dir
    with _timed(report, "bm25"):
        if settings.index.bm25_backend == "tantivy":
            TantivyBM25.build(store.iter_tokens(), index_dir / TANTIVY_DIR)
        else:
            _build_bm25(store, settings).save(index_dir / "bm25")
    with _timed(report, "faiss"):
        n_vectors = store.embedding_count(embedder.name)
        kind = choose_faiss_kind(settings.index.faiss_kind, n_vectors, settings.index.hnsw_above)
        if kind == "ivfpq":
            chunks = store.iter_embeddings(embedder.name, embedder.dim)
            IvfPqIndex.build(chunks, n_vectors, embedder.dim, index_dir, ivfpq_params(settings))
        else:
            ids, vectors = store.all_embeddings(embedder.name, embedder.dim)
            DenseIndex.build(ids, vectors, kind).save(index_dir)
    return kind


def milvus_uri(settings: Settings) -> str:
    return settings.index.milvus_uri or lite_uri(settings.index_dir)


def _build_milvus(store: DocStore, embedder: Embedder, settings: Settings) -> None:
    def rows() -> Iterator[tuple[list[str], list[list[str]], np.ndarray]]:
        for pmids, vectors in store.iter_embeddings(embedder.name, embedder.dim, chunk=2000):
            tokens = store.tokens_many(pmids)
            yield pmids, [tokens[p] for p in pmids], vectors

    ix = settings.index
    built = MilvusIndex.build(
        milvus_uri(settings), ix.milvus_collection, rows(), embedder.dim, k1=ix.k1, b=ix.b
    )
    built.close()  # else milvus-lite keeps its file locked and the index cannot be opened in this process


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
    store = DocStore(settings.index_dir / DOCS_FILE, readonly=True)
    try:
        indexed = store.hashes_for(checked)
    finally:
        store.close()
    report = build_index(settings, inputs, progress=False, deletions=checked)
    report.not_indexed = [p for p in checked if p not in indexed]  # a mistyped PMID is shown, not silent
    return report


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
    records: Iterable[Prepared | Deletion],
    settings: Settings,
    report: BuildReport,
    *,
    retokenize: bool,
    resplit: Callable[[Document], bool] | None = None,
    deleted: Set[str] = frozenset(),
    progress: bool,
) -> None:
    """Apply records in order: new or changed documents stored (every one when `retokenize`, and those
    `resplit` accepts), deletions applied, the rest removed. A record of a PMID the user `deleted` is passed
    over (so removed if stored).

    The summary counts what differs from the index before, not the writes: each rebuild re-reads every source,
    and a PMID deleted by the user had been stored and deleted again ("+1 added, -1 removed" on every later
    build), and a document two sources hold (a file and its update) counted as changed twice though it ends
    as it was."""
    known = store.hashes()
    original: dict[str, str | None] = {}  # of each PMID touched, its hash before (None: not indexed)
    refreshed: set[str] = set()  # rewritten with the same content: re-split or re-tokenized
    seen: set[str] = set()
    bar = tqdm(desc="documents", unit="doc", disable=not progress)
    pending = 0
    for record in records:
        if isinstance(record, Deletion):
            store.delete(record.pmids)
            seen.difference_update(record.pmids)
            for pmid in record.pmids:
                original.setdefault(pmid, known.pop(pmid, None))
            continue
        pmid = record.doc.pmid
        if pmid in deleted:
            continue
        seen.add(pmid)
        same = known.get(pmid) == record.content_hash
        again = same and resplit is not None and resplit(record.doc)
        if same and not (retokenize or again):
            continue
        report.resplit_documents += again
        if same:
            refreshed.add(pmid)
        if record.sentences is None or record.tokens is None:
            record = prepare(record.doc, settings.index.stem, split=True)
        store.upsert(record.doc, record.content_hash, record.sentences or [], record.tokens or [])
        original.setdefault(pmid, known.get(pmid))
        known[pmid] = record.content_hash
        pending += 1
        bar.update()
        if pending >= COMMIT_EVERY:
            store.commit()
            pending = 0
    bar.close()
    unseen = [pmid for pmid in known if pmid not in seen]
    store.delete(unseen)
    for pmid in unseen:
        original.setdefault(pmid, known.pop(pmid))
    for pmid, was in original.items():
        now = known.get(pmid)
        report.added += was is None and now is not None
        report.removed += was is not None and now is None
        report.changed += was is not None and now is not None and (now != was or pmid in refreshed)


def _local_records(files: list[Path], stats: ReadStats) -> Iterator[Prepared | Deletion]:
    for record in iter_records(files, stats):
        yield record if isinstance(record, Deletion) else prepare(record, False, split=False)


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
    backend: Backend = "rank_bm25" if ix.bm25_backend == "rank_bm25" else "bm25s"  # tantivy: built elsewhere
    return BM25Index.build(tokens, ids, k1=ix.k1, b=ix.b, epsilon=ix.epsilon, backend=backend)


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


class LexicalEngine(Protocol):
    def search(self, query_tokens: Sequence[str], k: int) -> list[tuple[str, float]]: ...
    def __len__(self) -> int: ...


class DenseEngine(Protocol):
    def search(self, query_vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]: ...
    def __len__(self) -> int: ...


@dataclass
class LoadedIndex:
    """Everything a retriever needs, loaded from one index folder."""

    dir: Path
    manifest: Manifest
    docs: DocStore
    bm25: LexicalEngine
    dense: DenseEngine
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
    params = bm25_params(settings)
    changed = sorted(
        k for k, v in params.items() if manifest.bm25.get(k) != v and not _older_tokens(manifest, k)
    )
    if changed:
        raise IndexMismatchError(
            f"the index in {index_dir} was built with other BM25 parameters ({', '.join(changed)}): "
            "run `biocite index build`"
        )
    wanted = "milvus" if settings.index.engine == "milvus" else settings.index.faiss_kind
    special = ("ivfpq", "milvus")
    if (wanted in special or manifest.faiss_kind in special) and wanted != manifest.faiss_kind:
        raise IndexMismatchError(
            f"the index in {index_dir} has a {manifest.faiss_kind!r} dense index but settings ask for "
            f"{wanted!r}: run `biocite index build`"
        )
    for source in manifest.sources:
        if not source_unchanged(source):
            raise IndexMismatchError(
                f"the index is stale: {source.path} changed or vanished since it was built; run `biocite index build`"
            )


def _older_tokens(manifest: Manifest, key: str) -> bool:
    """An index an older tokenizer made stays usable, as one an older splitter split: its BM25 lacks only
    the few tokens the newer one keeps ("ALS"), and its next `biocite index build` re-tokenizes it (refusing it
    asked every user, full PubMed included, to rebuild before the next question)."""
    version = manifest.bm25.get("tokenizer_version")
    return key == "tokenizer_version" and isinstance(version, int) and version < TOKENIZER_VERSION


def open_index(settings: Settings) -> LoadedIndex:
    index_dir = settings.index_dir
    manifest = read_manifest(index_dir)
    check_compatible(manifest, settings, index_dir)
    verify_index(index_dir, manifest)
    lexical: LexicalEngine
    dense: DenseEngine
    if settings.index.engine == "milvus":
        milvus = MilvusIndex.open(milvus_uri(settings), settings.index.milvus_collection)
        lexical, dense = milvus.lexical, milvus.dense
    else:
        lexical, dense = _load_lexical(index_dir, settings), _load_dense(index_dir, manifest, settings)
    return LoadedIndex(
        dir=index_dir,
        manifest=manifest,
        docs=DocStore(index_dir / "docs.sqlite", readonly=True),
        bm25=lexical,
        dense=dense,
        embedder=Embedder.from_settings(settings),
        stem=settings.index.stem,
    )


def _load_lexical(index_dir: Path, settings: Settings) -> BM25Index | TantivyBM25:
    if settings.index.bm25_backend == "tantivy":
        return TantivyBM25.load(index_dir / TANTIVY_DIR)
    return BM25Index.load(index_dir / "bm25")


def _load_dense(index_dir: Path, manifest: Manifest, settings: Settings) -> DenseIndex | IvfPqIndex:
    if manifest.faiss_kind == "ivfpq":
        return IvfPqIndex.load(index_dir, ivfpq_params(settings))
    return DenseIndex.load(index_dir)
