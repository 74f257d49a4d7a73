"""BM25 on disk with tantivy (Rust, Lucene-style segments, memory-mapped): the lexical engine of the scale
path (`index.bm25_backend: tantivy`).

Documents are indexed as biocite's own BM25 tokens (index/tokenize.py) joined by spaces under tantivy's
whitespace tokenizer, so a query matches exactly the tokens the bm25s path matches. The scores are
tantivy's BM25 (Lucene's: k1 1.2, b 0.75, IDF log(1 + (N - n + .5) / (n + .5))), not rank-bm25's Okapi
scores, so they differ from the default path's by a per-term factor; the ranking is what tests compare.
Memory to serve is the OS page cache over the segment files, not a RAM-resident matrix.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

import tantivy

from biocite.errors import IndexMismatchError, InputError

META_FILE = "tantivy_meta.json"
_PMID, _BODY = "pmid", "body"


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field(_PMID, stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field(_BODY, stored=False, tokenizer_name="whitespace", index_option="freq")
    return builder.build()


class TantivyBM25:
    """Same `search(tokens, k)` as `BM25Index`; `doc_freq` feeds the best-sentence IDF."""

    def __init__(self, index: tantivy.Index, folder: Path) -> None:
        self.folder = folder
        self.index = index
        self.schema = index.schema
        self.searcher = index.searcher()

    @classmethod
    def build(
        cls,
        documents: Iterable[tuple[str, list[str]]],
        folder: Path,
        *,
        heap_mb: int = 256,
        threads: int = 2,
    ) -> TantivyBM25:
        """Index (pmid, tokens) pairs into a fresh `folder` (replacing one there), streaming."""
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        index = tantivy.Index(_schema(), path=str(folder))
        writer = index.writer(heap_mb * 1_000_000, threads)
        n_docs = 0
        for pmid, tokens in documents:
            writer.add_document(tantivy.Document(pmid=pmid, body=" ".join(tokens)))
            n_docs += 1
        if not n_docs:
            raise InputError("bm25 build: the corpus is empty")
        writer.commit()
        writer.wait_merging_threads()
        (folder / META_FILE).write_text(json.dumps({"n_docs": n_docs, "tantivy": tantivy.__name__}))
        index.reload()
        return cls(index, folder)

    @classmethod
    def load(cls, folder: Path) -> TantivyBM25:
        if not (folder / META_FILE).is_file():
            raise IndexMismatchError(f"{folder}: no complete tantivy index (rebuild it)")
        try:
            index = tantivy.Index.open(str(folder))
        except ValueError as exc:
            raise IndexMismatchError(f"{folder}: damaged tantivy index ({exc}); rebuild it") from exc
        return cls(index, folder)

    def search(self, query_tokens: Sequence[str], k: int) -> list[tuple[str, float]]:
        if k <= 0 or not query_tokens:
            return []
        terms = [tantivy.Query.term_query(self.schema, _BODY, t) for t in query_tokens]
        query = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in terms])
        hits = self.searcher.search(query, k).hits
        return [(self.searcher.doc(address)[_PMID][0], float(score)) for score, address in hits]

    def doc_freq(self, token: str) -> int:
        return int(self.searcher.doc_freq(_BODY, token))

    def __len__(self) -> int:
        return int(self.searcher.num_docs)

    def disk_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.folder.iterdir() if p.is_file())
