"""Milvus as the search engine beyond one machine (`index.engine: milvus`): BM25 full-text and dense
vectors in one collection, through pymilvus.

`index.milvus_uri` names a Milvus server or cluster (`http://host:19530`, see docker/compose.milvus.yaml);
left empty it is a milvus-lite file inside the index folder (embedded, for tests and small corpora; slow
full-text search, ~0.75 s a query at 5k abstracts). The documents' own BM25 tokens (index/tokenize.py),
joined by spaces, are the collection's text, analysed by Milvus's standard tokenizer, so queries match the
same stems as on the local engines; Milvus scores them with its BM25 (k1 and b from the settings).

The Retriever sees two views with the local engines' `search` methods (`lexical`, `dense`) and fuses them
as usual; `hybrid` is Milvus's own one-request fusion (weighted), for callers that want it in the engine.
The SQLite document store stays the source of the documents and sentences.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from biocite.errors import IndexMismatchError

PMID_MAX = 64
TEXT_MAX = 65_535


def _client(uri: str) -> Any:
    from pymilvus import MilvusClient

    try:
        return MilvusClient(uri)
    except Exception as exc:  # pymilvus raises its own and grpc errors
        raise IndexMismatchError(f"cannot reach Milvus at {uri}: {str(exc).splitlines()[0]}") from None


def lite_uri(index_dir: Path) -> str:
    return str(index_dir / "milvus.db")


class MilvusIndex:
    def __init__(self, client: Any, collection: str, uri: str = "") -> None:
        self.client = client
        self.collection = collection
        self.uri = uri
        self.lexical = _Lexical(self)
        self.dense = _Dense(self)

    def close(self) -> None:
        """Release the connection, and stop an embedded milvus-lite server: it holds a lock on its database
        folder until then, and a staged build renames that folder (the lock moves with it)."""
        self.client.close()
        if self.uri and not self.uri.startswith(("http://", "https://", "tcp://", "unix:")):
            from milvus_lite.server_manager import server_manager_instance

            server_manager_instance.release_server(self.uri)

    @classmethod
    def build(
        cls,
        uri: str,
        collection: str,
        rows: Iterable[tuple[list[str], list[list[str]], np.ndarray]],
        dim: int,
        *,
        k1: float,
        b: float,
    ) -> MilvusIndex:
        """(Re)create the collection and insert (pmids, token lists, vectors) chunks."""
        from pymilvus import DataType, Function, FunctionType, MilvusClient

        client = _client(uri)
        if client.has_collection(collection):
            client.drop_collection(collection)
        schema = MilvusClient.create_schema(auto_id=False)
        schema.add_field("pmid", DataType.VARCHAR, is_primary=True, max_length=PMID_MAX)
        schema.add_field("text", DataType.VARCHAR, max_length=TEXT_MAX, enable_analyzer=True,
                         analyzer_params={"tokenizer": "standard"})  # fmt: skip
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                     input_field_names=["text"], output_field_names=["sparse"]))  # fmt: skip
        params = client.prepare_index_params()
        params.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                         params={"bm25_k1": k1, "bm25_b": b})  # fmt: skip
        params.add_index("dense", index_type="FLAT", metric_type="IP")
        client.create_collection(collection, schema=schema, index_params=params)
        for pmids, tokens, vectors in rows:
            data = [
                {"pmid": p, "text": " ".join(t)[:TEXT_MAX], "dense": v.tolist()}
                for p, t, v in zip(pmids, tokens, vectors, strict=True)
            ]
            client.insert(collection, data)
        client.flush(collection)
        return cls(client, collection, uri)

    @classmethod
    def open(cls, uri: str, collection: str) -> MilvusIndex:
        client = _client(uri)
        if not client.has_collection(collection):
            raise IndexMismatchError(
                f"Milvus at {uri} has no collection {collection!r}: run `biocite index build`"
            )
        client.load_collection(collection)
        return cls(client, collection, uri)

    def _search(self, data: list[Any], field: str, metric: str, k: int) -> list[list[tuple[str, float]]]:
        results = self.client.search(self.collection, data=data, anns_field=field, limit=k,
                                     output_fields=["pmid"], search_params={"metric_type": metric})  # fmt: skip
        # milvus-lite reports BM25 relevance as a negative distance; a server as a positive score
        return [[(str(hit["pmid"]), abs(float(hit["distance"]))) for hit in row] for row in results]

    def hybrid(
        self, query_tokens: Sequence[str], vector: np.ndarray, k: int, dense_weight: float
    ) -> list[tuple[str, float]]:
        """One request: BM25 and dense candidates fused by Milvus's weighted ranker."""
        from pymilvus import AnnSearchRequest, WeightedRanker

        requests = [
            AnnSearchRequest(data=[" ".join(query_tokens)], anns_field="sparse",
                             param={"metric_type": "BM25"}, limit=k),
            AnnSearchRequest(data=[vector.tolist()], anns_field="dense", param={"metric_type": "IP"}, limit=k),
        ]  # fmt: skip
        ranker = WeightedRanker(1 - dense_weight, dense_weight)
        rows = self.client.hybrid_search(self.collection, requests, ranker, limit=k, output_fields=["pmid"])
        return [(str(hit["pmid"]), float(hit["distance"])) for hit in rows[0]]

    def __len__(self) -> int:
        stats = self.client.get_collection_stats(self.collection)
        return int(stats.get("row_count", 0))


class _Lexical:
    def __init__(self, owner: MilvusIndex) -> None:
        self.owner = owner

    def search(self, query_tokens: Sequence[str], k: int) -> list[tuple[str, float]]:
        if k <= 0 or not query_tokens:
            return []
        return self.owner._search([" ".join(query_tokens)], "sparse", "BM25", k)[0]

    def __len__(self) -> int:
        return len(self.owner)


class _Dense:
    kind = "milvus"

    def __init__(self, owner: MilvusIndex) -> None:
        self.owner = owner

    def search(self, query_vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        if k <= 0:
            return [[] for _ in range(len(query_vectors))]
        return self.owner._search([v.tolist() for v in query_vectors], "dense", "IP", k)

    def __len__(self) -> int:
        return len(self.owner)
