"""Fakes for the agent's unit tests: a tiny in-memory index, a hashing embedder, a scripted LLM and judge."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage

from biocite.records import Document, SearchHit, Sentence
from biocite.settings import Settings, load_settings
from biocite.tokenize import tokenize

ABSTRACTS = {
    "111": (
        "Metformin and body weight in type 2 diabetes",
        "Metformin reduced body weight in adults with type 2 diabetes. The mean weight loss was 2.1 kg over "
        "12 months, compared with placebo. Gastrointestinal adverse events were the most common.",
    ),
    "222": (
        "Statin therapy and muscle symptoms",
        "Statin therapy was associated with muscle pain in 10% of patients. Muscle symptoms resolved after "
        "the statin was stopped. Creatine kinase levels were rarely raised.",
    ),
    "333": (
        "Vitamin D supplementation and fractures in older adults",
        "Vitamin D supplementation did not reduce hip fractures in older adults. Falls were also unchanged. "
        "Calcium intake did not modify the effect.",
    ),
    "444": (
        "Weight change with metformin in obese adolescents",
        "In obese adolescents, metformin lowered body weight slightly; the body mass index fell by 0.9. "
        "Diarrhoea was frequent in the metformin group.",
    ),
}


def split_sentences(pmid: str, abstract: str) -> list[Sentence]:
    out = []
    for i, match in enumerate(re.finditer(r"[^.]+\.", abstract)):
        start = match.start() + len(match.group()) - len(match.group().lstrip())
        out.append(
            Sentence(pmid=pmid, index=i, start=start, end=match.end(), text=abstract[start : match.end()])
        )
    return out


class HashEmbedder:
    name = "hash-bow"
    dim = 512

    def encode(self, texts: Sequence[str], *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text):
                out[row, zlib.crc32(token.encode()) % self.dim] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out


class FakeDocs:
    """A `biocite.retrieval.DocumentSource` in memory."""

    def __init__(self, docs: dict[str, Document]) -> None:
        self.docs = docs

    def get(self, pmid: str) -> Document | None:
        return self.docs.get(pmid)

    def get_many(self, pmids: Sequence[str]) -> dict[str, Document]:
        return {p: self.docs[p] for p in pmids if p in self.docs}

    def sentences(self, pmid: str) -> list[Sentence]:
        return split_sentences(pmid, self.docs[pmid].abstract)

    def pmids(self) -> list[str]:
        return sorted(self.docs)

    def __contains__(self, pmid: object) -> bool:
        return pmid in self.docs

    def __len__(self) -> int:
        return len(self.docs)


class FakeRetriever:
    """Ranks abstracts by shared content terms with the query; returns only those sharing at least one.

    A `biocite.retrieval.Retriever` whose hits carry no documents (the agent fetches them once).
    """

    def __init__(self, abstracts: dict[str, tuple[str, str]] = ABSTRACTS) -> None:
        docs = {p: Document(pmid=p, title=t, abstract=a, year=2020) for p, (t, a) in abstracts.items()}
        self.documents = FakeDocs(docs)
        self.encoder = HashEmbedder()
        self.queries: list[str] = []

    def search(self, query: str, k: int = 10, *, stage: str | None = None) -> list[SearchHit]:
        self.queries.append(query)
        terms = set(tokenize(query))
        scored = []
        for pmid, doc in self.documents.docs.items():
            shared = len(terms & set(tokenize(doc.text)))
            if shared:
                scored.append((shared, pmid))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [
            SearchHit(pmid=p, title=self.documents.docs[p].title, score=float(s), rank=r)
            for r, (s, p) in enumerate(scored[:k], start=1)
        ]


def overlap_judge(messages: list[BaseMessage]) -> float:
    """P(yes) = share of the statement's (or sentence's) content terms found in the evidence (or question)."""
    text = str(messages[-1].content)
    first = re.search(r"(?:Evidence|Question): (.*)", text)
    second = re.search(r"(?:Statement|Sentence): (.*)", text)
    assert first and second, text
    a, b = set(tokenize(first.group(1))), set(tokenize(second.group(1)))
    return len(a & b) / len(b) if b else 0.0


def fake_model(*responses: str) -> FakeListChatModel:
    return FakeListChatModel(responses=list(responses))


def agent_settings(*overrides: str) -> Settings:
    base = [
        "agent.min_relevance=0.3",
        "agent.min_top_relevance=0.5",
        "agent.min_evidence=2",
        "agent.judge_top=0",
        "agent.max_rounds=2",
        "agent.relevance_margin=1.0",  # the hashing embedder's scale differs from MiniLM's
    ]
    return load_settings("default", [*base, *overrides])
