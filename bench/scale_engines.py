"""The scale path (tantivy + IVF-PQ with float16 re-scoring) at N synthetic PubMed-like documents.

    python bench/scale_engines.py --docs 1000000 --out /tmp/biocite-scale [--source-index DIR]

Corpus. The shipped corpus (5,666 real abstracts, the 500 PubMedQA source abstracts among them) is taken
from a built default index (`--source-index`, default ~/.cache/biocite/index/default): its documents,
its sentences (split by index/sentences.py) and its MiniLM document vectors. The other N - 5,666
documents are synthetic: a real title and 4-14 real sentences (the count drawn from the real abstracts'
counts), drawn with a fixed seed from the abstracts that are NOT PubMedQA sources, so no distractor
repeats a source sentence. Each distinct real sentence and title is embedded once with MiniLM; a
synthetic document's vector is the L2-normalised mean of its title's and sentences' vectors (not an
embedding of the document's text: that would take ~3-4 h per 1M abstracts on 2 CPU cores), and its
BM25 tokens are the concatenation of its title's and sentences' tokens (the same tokenizer).

Build. A real index folder (docs.sqlite, tantivy/, dense_ivfpq.faiss + dense_f16.npy, manifest.json)
is written, timed per part; `biocite search --set index.bm25_backend=tantivy --set index.faiss_kind=ivfpq
--set index.dir=OUT/index` serves it like any index.

Serve (a fresh process). Opens it through `open_index` / `HybridRetriever` (the product path), then runs the
PubMedQA VALIDATION questions (the 200-question held-out split of index/rerank.py, split by question,
seed fixed; nothing was tuned on them here) through `HybridRetriever.search(stage="hybrid", k=10)`:
recall@10 of the source abstract, latency median / p95, RSS. The same questions on the default engines
over the 5,666-abstract source index are the reference measured in the same run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

SEED = 13
SYNTH_BASE = 40_000_000  # synthetic PMIDs start here (real PMIDs in the corpus are below)
ENGINE_SETTINGS = ["index.bm25_backend=tantivy", "index.faiss_kind=ivfpq"]


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def settings_for(index_dir: Path, engines: list[str]):
    from biocite.settings import load_settings

    return load_settings("default", [f"index.dir={index_dir}", "index.reranker=none", *engines])


# --- build ---------------------------------------------------------------------------------------------


def load_source(source: Path) -> tuple[list[dict], dict[str, np.ndarray]]:
    conn = sqlite3.connect(f"file:{source / 'docs.sqlite'}?mode=ro", uri=True)
    docs = [
        {"pmid": p, "doc": json.loads(d), "sentences": json.loads(s), "tokens": json.loads(t)}
        for p, d, s, t in conn.execute("SELECT pmid, doc, sentences, tokens FROM docs ORDER BY pmid")
    ]
    vectors = {
        p: np.frombuffer(v, dtype=np.float32)
        for p, v in conn.execute("SELECT pmid, vector FROM embeddings WHERE model = 'minilm'")
    }
    return docs, vectors


def sentence_pool(docs: list[dict], exclude: set[str]) -> tuple[list[str], list[str], list[int]]:
    """Distinct sentences and titles of the non-excluded abstracts, and their sentence counts."""
    sentences: dict[str, None] = {}
    titles: dict[str, None] = {}
    counts = []
    for row in docs:
        if row["pmid"] in exclude:
            continue
        counts.append(len(row["sentences"]))
        titles.setdefault(row["doc"]["title"] or "Untitled")
        for s in row["sentences"]:
            sentences.setdefault(s["text"])
    return list(sentences), list(titles), counts


def embed_cached(texts: list[str], cache: Path) -> np.ndarray:
    if cache.is_file():
        vectors = np.load(cache)
        if len(vectors) == len(texts):
            return vectors
    from biocite.embedder import Embedder

    started = time.perf_counter()
    vectors = Embedder("minilm").encode(texts, batch_size=128)
    print(f"  embedded {len(texts):,} texts in {time.perf_counter() - started:.0f} s "
          f"({len(texts) / (time.perf_counter() - started):.0f}/s)", flush=True)  # fmt: skip
    np.save(cache, vectors)
    return vectors


def build(n_docs: int, out: Path, source: Path) -> dict[str, float]:
    from biocite.index.build import TANTIVY_DIR, bm25_params, ivfpq_params, library_versions
    from biocite.index.ivfpq import IvfPqIndex
    from biocite.index.lexical import TantivyBM25
    from biocite.index.store import DocStore, Manifest, now, write_manifest
    from biocite.pubmedqa import load_questions
    from biocite.tokenize import tokenize

    times: dict[str, float] = {}
    index_dir = out / "index"
    index_dir.mkdir(parents=True, exist_ok=True)
    for stale in ("manifest.json", "docs.sqlite", "docs.sqlite-wal", "docs.sqlite-shm"):
        (index_dir / stale).unlink(missing_ok=True)
    started = time.perf_counter()
    docs, real_vectors = load_source(source)
    sources = {q.pmid for q in load_questions()}
    sentences, titles, counts = sentence_pool(docs, sources)
    print(f"source: {len(docs):,} real abstracts ({len(sources & {d['pmid'] for d in docs})} PubMedQA "
          f"sources); pool of {len(sentences):,} distinct sentences and {len(titles):,} titles", flush=True)  # fmt: skip
    sent_vec = embed_cached(sentences, out / "sentence_vectors.npy")
    title_vec = embed_cached(titles, out / "title_vectors.npy")
    sent_tok = [" ".join(tokenize(s)) for s in sentences]
    title_tok = [" ".join(tokenize(t)) for t in titles]
    times["pool: load, embed (cached), tokenize"] = time.perf_counter() - started

    n_synth = max(n_docs - len(docs), 0)
    rng = np.random.default_rng(SEED)
    lengths = np.clip(rng.choice(np.array(counts), size=n_synth), 4, 14)
    title_ids = rng.integers(0, len(titles), size=n_synth)
    years = rng.integers(1975, 2026, size=n_synth)

    def synthetic(i: int) -> tuple[str, dict, list[dict], str, np.ndarray]:
        picks = rng.integers(0, len(sentences), size=int(lengths[i]))
        spans, pos = [], 0
        for j, sid in enumerate(picks):
            text = sentences[sid]
            spans.append({"index": j, "start": pos, "end": pos + len(text), "text": text})
            pos += len(text) + 1
        abstract = " ".join(sentences[s] for s in picks)
        title = titles[title_ids[i]]
        doc = {"pmid": str(SYNTH_BASE + i), "title": title, "abstract": abstract, "sections": [],
               "year": int(years[i]), "journal": None, "mesh": [], "publication_types": []}  # fmt: skip
        tokens = title_tok[title_ids[i]] + " " + " ".join(sent_tok[s] for s in picks)
        vector = title_vec[title_ids[i]] + sent_vec[picks].sum(axis=0)
        return doc["pmid"], doc, spans, tokens, vector / np.linalg.norm(vector)

    # documents: SQLite store (the product's schema), tokens for tantivy, vectors for FAISS, in one pass
    started = time.perf_counter()
    store = DocStore(index_dir / "docs.sqlite")
    store.conn.execute("PRAGMA synchronous=OFF")
    ids: list[str] = []
    vectors = np.lib.format.open_memmap(out / "vectors_f32.npy", mode="w+", dtype=np.float32,
                                        shape=(len(docs) + n_synth, 384))  # fmt: skip
    tokens_file = (out / "tokens.txt").open("w")
    rows = []
    for row in docs:
        ids.append(row["pmid"])
        vectors[len(ids) - 1] = real_vectors[row["pmid"]]
        tokens_file.write(row["pmid"] + "\t" + " ".join(row["tokens"]) + "\n")
        rows.append((row["pmid"], "real", json.dumps(row["doc"]), json.dumps(row["sentences"]), "[]"))
    for i in range(n_synth):
        pmid, doc, spans, tokens, vector = synthetic(i)
        ids.append(pmid)
        vectors[len(ids) - 1] = vector
        tokens_file.write(pmid + "\t" + tokens + "\n")
        rows.append((pmid, "synthetic", json.dumps(doc), json.dumps(spans), "[]"))
        if len(rows) >= 20_000:
            store.conn.executemany("INSERT OR REPLACE INTO docs VALUES (?, ?, ?, ?, ?)", rows)
            rows = []
    store.conn.executemany("INSERT OR REPLACE INTO docs VALUES (?, ?, ?, ?, ?)", rows)
    store.commit()
    tokens_file.close()
    vectors.flush()
    times["documents: generate + SQLite store"] = time.perf_counter() - started
    print(
        f"  {len(ids):,} documents written in {times['documents: generate + SQLite store']:.0f} s", flush=True
    )

    started = time.perf_counter()

    def token_rows():
        with (out / "tokens.txt").open() as handle:
            for line in handle:
                pmid, _, text = line.rstrip("\n").partition("\t")
                yield pmid, text.split()

    TantivyBM25.build(token_rows(), index_dir / TANTIVY_DIR)
    times["lexical: tantivy build"] = time.perf_counter() - started
    print(f"  tantivy built in {times['lexical: tantivy build']:.0f} s", flush=True)

    started = time.perf_counter()
    settings = settings_for(index_dir, ENGINE_SETTINGS)
    order = np.argsort(np.array(ids))  # the store's pmid order, as a real build writes it
    sorted_ids = [ids[i] for i in order]

    def chunks():
        for start in range(0, len(order), 50_000):
            rows_ = np.sort(order[start : start + 50_000])
            block = np.asarray(vectors[rows_])
            position = {r: k for k, r in enumerate(rows_)}
            take = [position[r] for r in order[start : start + 50_000]]
            yield sorted_ids[start : start + 50_000], block[take]

    IvfPqIndex.build(chunks(), len(ids), 384, index_dir, ivfpq_params(settings))
    times["dense: float16 file + IVF-PQ train + add"] = time.perf_counter() - started
    print(f"  IVF-PQ built in {times['dense: float16 file + IVF-PQ train + add']:.0f} s", flush=True)

    manifest = Manifest(created=now(), status="complete", documents=len(ids), embedding_model="minilm",
                        embedding_dim=384, faiss_kind="ivfpq", bm25=bm25_params(settings),
                        library_versions=library_versions(),
                        read_summary=f"bench/scale_engines.py: {len(docs)} real + {n_synth} synthetic")  # fmt: skip
    write_manifest(index_dir, manifest)
    (out / "vectors_f32.npy").unlink()
    (out / "tokens.txt").unlink()
    times["build peak RSS MB"] = peak_mb()
    return times


# --- serve ---------------------------------------------------------------------------------------------


def serve(index_dir: Path, engines: list[str], limit: int) -> dict[str, float]:
    """Run in a fresh process: open through the product path, answer the held-out questions."""
    base = rss_mb()
    from biocite.embedder import Embedder
    from biocite.index.build import open_index
    from biocite.index.hybrid import HybridRetriever
    from biocite.index.rerank import validation_questions

    settings = settings_for(index_dir, engines)
    Embedder.from_settings(settings).encode(["warm up"])  # the model, counted apart from the index
    with_model = rss_mb()
    started = time.perf_counter()
    retriever = HybridRetriever(open_index(settings), settings)
    _ = retriever.idf
    open_s = time.perf_counter() - started
    questions = validation_questions(settings)[:limit]
    for q in questions[:3]:
        retriever.search(q.question, k=10, stage="hybrid")  # warm caches
    latencies, hits10, bm25_10, dense_10 = [], 0, 0, 0
    for q in questions:
        started = time.perf_counter()
        hits = retriever.search(q.question, k=10, stage="hybrid")
        latencies.append((time.perf_counter() - started) * 1000)
        hits10 += q.pmid in {h.pmid for h in hits}
        bm25_10 += q.pmid in {p for p, _ in retriever.bm25(q.question, 10)}
        dense_10 += q.pmid in {p for p, _ in retriever.dense(q.question, 10)}
    latencies.sort()
    index_rss = rss_mb() - with_model  # before the exact-search check below reads every vector
    exact = exact_dense_recall(retriever, questions)
    return {
        "documents": float(len(retriever.documents)),
        "questions": float(len(questions)),
        "recall@10 hybrid": hits10 / len(questions),
        "recall@10 bm25 only": bm25_10 / len(questions),
        "recall@10 dense only": dense_10 / len(questions),
        "recall@10 dense, exact search (no ANN)": exact,
        "hybrid median ms": statistics.median(latencies),
        "hybrid p95 ms": latencies[int(0.95 * (len(latencies) - 1))],
        "open s": open_s,
        "nlist": float(_nlist(retriever)),
        "RSS MB, python + torch + MiniLM": with_model,
        "RSS MB, index opened and queried": index_rss,
        "RSS MB before imports": base,
    }


def exact_dense_recall(retriever, questions) -> float:
    """Brute-force inner product over every vector: what the dense stage would find without the ANN."""
    dense = retriever.index.dense
    queries = retriever.encoder.encode([q.question for q in questions])
    if hasattr(dense, "vectors"):  # IVF-PQ: the float16 file
        matrix, ids = dense.vectors, [str(i) for i in dense.ids]
    else:  # flat FAISS: its own vectors
        matrix, ids = dense.index.reconstruct_n(0, dense.index.ntotal), dense.ids
    best = np.full((len(queries), 10), -np.inf, dtype=np.float32)
    rows = np.zeros((len(queries), 10), dtype=np.int64)
    for start in range(0, len(ids), 100_000):
        scores = queries @ np.asarray(matrix[start : start + 100_000], dtype=np.float32).T
        both = np.concatenate([best, scores], axis=1)
        both_rows = np.concatenate(
            [rows, np.arange(start, start + scores.shape[1])[None].repeat(len(queries), 0)], 1
        )
        top = np.argsort(-both, axis=1)[:, :10]
        best, rows = np.take_along_axis(both, top, 1), np.take_along_axis(both_rows, top, 1)
    return float(np.mean([q.pmid in {ids[r] for r in row} for q, row in zip(questions, rows, strict=True)]))


def tune_ann(index_dir: Path, engines: list[str], nprobes: list[int], rescores: list[int]) -> tuple[int, int]:
    """On the PubMedQA TRAIN split only: the fastest (nprobe, rescore_k) whose dense recall@10 is within
    0.01 of the best in the grid (the validation questions are not looked at)."""
    import faiss

    from biocite.index.build import open_index
    from biocite.index.rerank import train_questions

    settings = settings_for(index_dir, engines)
    index = open_index(settings)
    questions = train_questions(settings)
    vectors = index.embedder.encode([q.question for q in questions])
    recall, cost = {}, {}
    for nprobe, rescore_k in itertools.product(nprobes, rescores):
        index.dense.params.nprobe, index.dense.params.rescore_k = nprobe, rescore_k  # type: ignore[union-attr]
        faiss.extract_index_ivf(index.dense.index).nprobe = nprobe  # type: ignore[union-attr]
        index.dense.search(vectors[:20], 50)  # page the float16 rows this setting reads into the cache
        started = time.perf_counter()
        found = index.dense.search(vectors, 50)
        cost[nprobe, rescore_k] = (time.perf_counter() - started) * 1000 / len(questions)
        recall[nprobe, rescore_k] = float(
            np.mean([q.pmid in {p for p, _ in hits[:10]} for q, hits in zip(questions, found, strict=True)])
        )
        print(f"  tune (train split, {len(questions)} questions): nprobe {nprobe:5d} rescore_k {rescore_k:5d} "
              f"dense recall@10 {recall[nprobe, rescore_k]:.3f}, {cost[nprobe, rescore_k]:.1f} ms a query",
              file=sys.stderr, flush=True)  # fmt: skip
    best = max(recall.values())
    return min((key for key, r in recall.items() if r >= best - 0.01), key=lambda key: cost[key])


def _nlist(retriever) -> int:
    import faiss

    try:
        return int(faiss.extract_index_ivf(retriever.index.dense.index).nlist)
    except (AttributeError, RuntimeError, TypeError):
        return 0


def serve_in_subprocess(index_dir: Path, engines: list[str], limit: int) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--serve", str(index_dir), "--limit", str(limit), "--engines", *engines]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, default=Path("/tmp/biocite-scale"))
    parser.add_argument("--source-index", type=Path, default=Path.home() / ".cache/biocite/index/default")
    parser.add_argument("--limit", type=int, default=200, help="held-out questions to run")
    parser.add_argument("--skip-build", action="store_true", help="serve the index already in --out")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--engines", nargs="*", default=[], help=argparse.SUPPRESS)
    parser.add_argument("--tune", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--nprobe-grid", type=int, nargs="*", default=[64, 256, 1024])
    parser.add_argument("--rescore-grid", type=int, nargs="*", default=[200, 500, 1000, 2000])
    args = parser.parse_args()
    if args.serve:
        print(json.dumps(serve(args.serve, args.engines, args.limit)))
        return 0
    if args.tune:
        print(*tune_ann(args.tune, args.engines, args.nprobe_grid, args.rescore_grid))
        return 0
    started = time.perf_counter()
    times = {} if args.skip_build else build(args.docs, args.out, args.source_index)
    index_dir = args.out / "index"
    cmd = [sys.executable, __file__, "--tune", str(index_dir), "--engines", *ENGINE_SETTINGS, "--nprobe-grid",
           *map(str, args.nprobe_grid), "--rescore-grid", *map(str, args.rescore_grid)]  # fmt: skip
    tuned = subprocess.run(cmd, capture_output=True, text=True, check=True)
    nprobe, rescore_k = map(int, tuned.stdout.strip().splitlines()[-1].split())
    engines = [*ENGINE_SETTINGS, f"index.ivf_nprobe={nprobe}", f"index.rescore_k={rescore_k}"]
    scale = serve_in_subprocess(index_dir, engines, args.limit)
    reference = serve_in_subprocess(args.source_index, [], args.limit)
    disk = {
        "SQLite doc store": du(index_dir / "docs.sqlite"),
        "tantivy": du(index_dir / "tantivy"),
        "IVF-PQ codes + lists (RAM when served)": du(index_dir / "dense_ivfpq.faiss"),
        "float16 vectors (memory-mapped)": du(index_dir / "dense_f16.npy"),
        "ids": du(index_dir / "dense_ids.npy"),
    }
    n = scale["documents"]
    tune_lines = [line for line in tuned.stderr.splitlines() if line.startswith("  tune")]
    print(f"# scale path at {n:,.0f} documents ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} CPUs shared, load {os.getloadavg()[0]:.1f})")  # fmt: skip
    for name, value in times.items():
        print(f"build  {name:45s} {value:10.1f}")
    print("\n".join(tune_lines))
    print(
        f"chosen on the train split: nprobe {nprobe} (of {scale.get('nlist', 0):.0f} lists), rescore_k {rescore_k}"
    )
    for name, size in disk.items():
        print(f"disk   {name:45s} {size / 1e9:10.2f} GB  ({size / n:,.0f} B/doc)")
    print(f"{'':7s}{'':45s} {'scale path':>10s} {'reference':>10s}")
    print(f"{'':7s}{'':45s} {'tantivy+IVFPQ':>10s} {'bm25s+flat':>10s}")
    for name in scale:
        print(f"serve  {name:45s} {scale[name]:10.3f} {reference[name]:10.3f}")
    ratio = scale["hybrid median ms"] / reference["hybrid median ms"]
    print(f"hybrid median latency ratio (scale path / reference): {ratio:.2f}")
    print(
        f"recall@10 difference (scale path - reference): {scale['recall@10 hybrid'] - reference['recall@10 hybrid']:+.3f}"
    )
    print(f"total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
