"""Hybrid retrieval on a real small index (30 shipped abstracts, MiniLM) built in a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biocite.errors import BiociteError
from biocite.heads import PairClassifier
from biocite.index.build import build_index, open_index
from biocite.index.hybrid import HybridRetriever, clear_retriever_cache, open_retriever
from biocite.index.rerank import KIND, LABELS, CrossEncoderReranker, document_text
from biocite.settings import load_settings
from tests.conftest import DATA, write_jsonl

pytestmark = pytest.mark.slow  # builds a real index and trains a (tiny) head: ~30-60 s on 2 busy cores

N_DOCS = 30


def shipped_abstracts(n: int) -> list[dict]:
    rows = []
    with (DATA / "corpus" / "abstracts.jsonl").open() as handle:
        for line in handle:
            row = json.loads(line)
            if row.get("abstract") and len(row.get("title", "")) > 30:
                rows.append({k: row[k] for k in ("pmid", "title", "abstract")})
            if len(rows) == n:
                break
    return rows


@pytest.fixture(scope="module")
def corpus_rows() -> list[dict]:
    return shipped_abstracts(N_DOCS)


# The same tests on the default engines (bm25s + flat FAISS), the scale path (tantivy + IVF-PQ) and Milvus.
ENGINES = {
    "default": [],
    "scale": ["index.bm25_backend=tantivy", "index.faiss_kind=ivfpq"],
    "milvus": ["index.engine=milvus"],  # milvus-lite, embedded, in the index folder
}
ENGINE_OF: dict[Path, str] = {}


@pytest.fixture(scope="module", params=list(ENGINES))
def root(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, corpus_rows: list[dict]
) -> Path:
    root = tmp_path_factory.mktemp(f"retrieval-{request.param}")
    ENGINE_OF[root] = request.param
    corpus = write_jsonl(root / "corpus.jsonl", corpus_rows)
    build_index(settings_for(root, "none"), [corpus], progress=False)
    return root


def settings_for(root: Path, reranker: str, *extra: str):
    engine = ENGINES[ENGINE_OF[root]]
    return load_settings(
        "test",
        [
            f"home={root / 'home'}",
            f"index.dir={root / 'index'}",
            f"index.reranker={reranker}",
            *engine,
            *extra,
        ],
    )


@pytest.mark.parametrize("stage", ["bm25", "dense", "hybrid", "rerank"])
def test_title_query_finds_its_abstract(root: Path, corpus_rows: list[dict], stage: str) -> None:
    retriever = HybridRetriever(open_index(settings_for(root, "dense")), settings_for(root, "dense"))
    for row in corpus_rows[:5]:
        hits = retriever.search(row["title"].rstrip("."), k=5, stage=stage)
        assert hits[0].pmid == row["pmid"], (stage, row["title"])
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))


def test_stage_scores_and_best_sentence_offsets(root: Path) -> None:
    settings = settings_for(root, "dense")
    retriever = HybridRetriever(open_index(settings), settings)
    hits = retriever.search("randomised trial of drug treatment in patients", k=8)
    assert len(hits) == 8
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    for hit in hits:
        assert {"fused", "rerank"} <= set(hit.stage_scores)
        assert hit.stage_scores.keys() & {"bm25", "dense"}
        doc = retriever.documents.get(hit.pmid)
        sentence = hit.best_sentence
        assert sentence is not None and sentence.pmid == hit.pmid
        assert doc.abstract[sentence.start : sentence.end] == sentence.text


def test_best_sentence_is_the_matching_one(root: Path, corpus_rows: list[dict]) -> None:
    settings = settings_for(root, "none")
    retriever = HybridRetriever(open_index(settings), settings)
    row = corpus_rows[3]
    target = retriever.documents.sentences(row["pmid"])[-1]
    hit = retriever.search(target.text, k=1, stage="hybrid")[0]
    assert hit.pmid == row["pmid"]
    assert hit.best_sentence is not None and hit.best_sentence.index == target.index


@pytest.mark.parametrize(
    ("asked", "pmid"), [("chlortalidone", "28952"), ("lignocaine", "2004"), ("chlorthalidone", "28952")]
)
def test_bm25_searches_a_drugs_other_name(root: Path, asked: str, pmid: str) -> None:
    """A British or international name finds the abstract that writes the United States one ("lidocaine")."""
    settings = settings_for(root, "none")
    retriever = HybridRetriever(open_index(settings), settings)
    hits = retriever.search(asked, k=3, stage="bm25")
    assert hits and hits[0].pmid == pmid, [h.pmid for h in hits]


@pytest.mark.parametrize(
    ("asked", "pmid"),
    [("chlorthalidne", "28952"), ("lidcoaine", "2004"), ("haemolytic", "100562"), ("foetal", "122435")],
)
def test_bm25_searches_what_a_typo_or_a_british_spelling_may_be(root: Path, asked: str, pmid: str) -> None:
    """A word no abstract has, with a letter dropped or two swapped, also searches the word put right; one in
    British spelling, its American spelling."""
    settings = settings_for(root, "none")
    retriever = HybridRetriever(open_index(settings), settings)
    hits = retriever.search(asked, k=3, stage="bm25")
    assert hits and hits[0].pmid == pmid, [h.pmid for h in hits]


def test_missing_cross_reranker_says_how_to_train(root: Path) -> None:
    clear_retriever_cache()
    settings = settings_for(root, "cross", f"index.reranker_path={root / 'no-reranker'}")
    with pytest.raises(BiociteError, match="biocite train reranker"):
        open_retriever(settings)


def test_cross_reranker_artifact_is_used(root: Path, corpus_rows: list[dict]) -> None:
    # A tiny head trained on title -> own abstract vs other abstract: checks the wiring, not the quality.
    pairs, labels = [], []
    for i, row in enumerate(corpus_rows[:12]):
        other = corpus_rows[(i + 5) % len(corpus_rows)]
        pairs += [(row["title"], document_text_of(row)), (row["title"], document_text_of(other))]
        labels += [LABELS[1], LABELS[0]]
    head = PairClassifier.train(pairs, labels, label_set=LABELS, epochs=1, max_length=128, progress=False)
    folder = root / "reranker"
    head.save(folder, meta={"kind": KIND})
    clear_retriever_cache()
    settings = settings_for(root, "cross", f"index.reranker_path={folder}")
    retriever = open_retriever(settings)
    assert open_retriever(settings) is retriever  # cached per process
    assert isinstance(retriever.reranker, CrossEncoderReranker)
    hits = retriever.search(corpus_rows[0]["title"], k=5)
    assert all("rerank" in h.stage_scores and 0.0 <= h.score <= 1.0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    clear_retriever_cache()


def document_text_of(row: dict) -> str:
    from biocite.records import Document

    return document_text(Document(pmid=row["pmid"], title=row["title"], abstract=row["abstract"]))


def test_bf16_embeddings_agree_with_fp32(corpus_rows: list[dict]) -> None:
    from biocite.embedder import Embedder

    texts = [f"{r['title']}\n{r['abstract']}" for r in corpus_rows[:8]]
    fp32 = Embedder("minilm", load_settings(overrides=["index.embed_precision=fp32"]))
    bf16 = Embedder("minilm", load_settings(overrides=["index.embed_precision=bf16"]))
    assert not fp32.bf16 and bf16.bf16
    a, b = fp32.encode(texts), bf16.encode(texts)
    assert a.dtype == b.dtype == "float32"
    assert float((a * b).sum(axis=1).min()) > 0.999
