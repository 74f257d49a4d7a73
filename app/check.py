"""`biocite check` and `POST /v1/check`: does this evidence support this claim? (the support model, issue 13)

- one claim against indexed abstracts (`--pmid`, repeatable) or given text (`--text`);
- a JSONL file of `{"claim", "evidence"}` / `{"claim", "pmids"}` objects, one verdict per line, batched;
- a whole BioGen 2024/2025 run: every (sentence, cited PMID) judged, as JSON plus an HTML view.
Offsets of evidence sentences and phrases index the abstract text (`Document.abstract`) or the given text.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from biocite import jsonfile
from biocite.app.documents import open_documents
from biocite.errors import InputError
from biocite.evaluator.runs import Run
from biocite.records import Document
from biocite.support import EvidenceSentence, Misstatement, SupportModel, SupportVerdict, to_evaluator_label

Fetch = Callable[[Sequence[str]], Mapping[str, Document]]
MAX_CLAIM_CHARS = 2000
MAX_PMIDS = 50
MAX_TEXT_CHARS = 50_000
BATCH = 32


class SourceVerdict(BaseModel):
    pmid: str | None = None  # None: the evidence was given as text
    label: str
    probs: dict[str, float]
    evidence: list[EvidenceSentence]
    verbatim: bool = False  # the claim is one of the evidence's sentences word for word
    clause_quote: bool = False  # the claim is a clause that one evidence sentence asserts on its own
    # the first evidence sentence says otherwise: how (biocite.support.misstatement)
    reversal: Misstatement | None = None
    # the evidence is about another population: "adults, not children" (biocite.populations)
    other_population: str | None = None
    # a clause of the claim no evidence sentence mentions (biocite.added_clauses)
    added_clause: str | None = None


class CheckResult(BaseModel):
    """The verdict of the best source (highest P(supports)); every source's own verdict in `sources`."""

    claim: str
    label: str
    probs: dict[str, float]
    evidence: list[EvidenceSentence]
    verbatim: bool = False
    clause_quote: bool = False
    reversal: Misstatement | None = None
    other_population: str | None = None
    added_clause: str | None = None
    pmid: str | None = None
    sources: list[SourceVerdict] = Field(default_factory=list)


class CheckRequest(BaseModel):
    claim: str = Field(max_length=MAX_CLAIM_CHARS)
    pmids: list[str] = Field(default_factory=list, max_length=MAX_PMIDS)
    text: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)


def validate_claim(claim: Any, where: str = "claim") -> str:
    if not isinstance(claim, str) or not claim.strip():
        raise InputError(f"{where}: the claim is empty")
    if len(claim) > MAX_CLAIM_CHARS:
        raise InputError(f"{where}: the claim is {len(claim)} characters; the limit is {MAX_CLAIM_CHARS}")
    return claim.strip()


def new_request(
    claim: Any, pmids: Sequence[str | int] | str | int, text: Any, at: Mapping[str, str]
) -> CheckRequest:
    """A `CheckRequest` from a user's input, checked field by field so that a bad one is named
    (`at["claim"]`, `at["pmids"]`, `at["text"]`: "--pmid" on the command line, "FILE:LINE" in a pairs file)
    instead of failing the model's validation as an internal error."""
    claim = validate_claim(claim, at["claim"])
    if isinstance(pmids, str | int):  # biocite.check(claim, pmids="123"): one PMID, not three digits
        pmids = [pmids]
    if text is not None and not isinstance(text, str):
        raise InputError(f"{at['text']}: the evidence must be text, not {type(text).__name__}")
    ids = list(dict.fromkeys(str(p).strip() for p in pmids))
    if "" in ids:
        raise InputError(f"{at['pmids']}: a PMID is empty")
    if len(ids) > MAX_PMIDS:
        raise InputError(f"{at['pmids']}: {len(ids)} PMIDs; the limit is {MAX_PMIDS}")
    if text is not None and not text.strip():
        raise InputError(f"{at['text']}: the evidence text is empty")
    if text is not None and len(text) > MAX_TEXT_CHARS:
        raise InputError(
            f"{at['text']}: the evidence text is {len(text)} characters; the limit is {MAX_TEXT_CHARS}"
        )
    if text is None and not ids:
        raise InputError(f"{at['claim']}: give evidence text or PMIDs")
    return CheckRequest(claim=claim, pmids=ids, text=text)


def _result(claim: str, verdicts: list[SourceVerdict]) -> CheckResult:
    best = max(verdicts, key=lambda v: v.probs["supports"])
    return CheckResult(
        claim=claim, label=best.label, probs=best.probs, evidence=best.evidence, verbatim=best.verbatim,
        clause_quote=best.clause_quote, reversal=best.reversal, other_population=best.other_population,
        added_clause=best.added_clause, pmid=best.pmid, sources=verdicts,
    )  # fmt: skip


def _source(v: SupportVerdict, pmid: str | None) -> SourceVerdict:
    return SourceVerdict(
        pmid=pmid, label=v.label, probs=v.probs, evidence=v.evidence, verbatim=v.verbatim,
        clause_quote=v.clause_quote, reversal=v.reversal, other_population=v.other_population,
        added_clause=v.added_clause,
    )  # fmt: skip


def fetch_abstracts(fetch: Fetch, pmids: Sequence[str], where: str) -> dict[str, str]:
    found = fetch(list(pmids))
    missing = [p for p in pmids if p not in found]
    if missing:
        raise InputError(f"{where}: unknown PMID {missing[0]} (not in the index)")
    return {p: found[p].abstract for p in pmids}


def check_requests(
    model: SupportModel,
    requests: Sequence[CheckRequest],
    fetch: Fetch | None,
    wheres: Sequence[str] | None = None,
) -> list[CheckResult]:
    """Verdicts for many requests (each built by `new_request`, so already checked) in one batched model
    call. An unknown PMID names its request (`wheres[i]`)."""
    jobs: list[tuple[int, str | None, str, str]] = []  # (request index, pmid, claim, evidence)
    for i, req in enumerate(requests):
        at = wheres[i] if wheres else "request"
        if req.text is not None:
            jobs.append((i, None, req.claim, req.text))
        if req.pmids:
            if fetch is None:
                raise InputError(f"{at}: PMIDs need an index (run `biocite index build`)")
            for p, text in fetch_abstracts(fetch, req.pmids, at).items():
                jobs.append((i, p, req.claim, text))
    verdicts = model.check_many([(c, e) for _, _, c, e in jobs])
    per: dict[int, list[SourceVerdict]] = {}
    for (i, pmid, _, _), v in zip(jobs, verdicts, strict=True):
        per.setdefault(i, []).append(_source(v, pmid))
    return [_result(requests[i].claim, per[i]) for i in range(len(requests))]


def parse_pairs(path: Path) -> list[tuple[int, CheckRequest]]:
    """`{"claim", "evidence"}` or `{"claim", "pmids"}` per line; errors name the line (`jsonfile`: UTF-8 with
    or without a byte-order mark, an empty file refused)."""
    out = []
    for n, row in jsonfile.iter_jsonl(jsonfile.read_text(path), str(path)):
        if not isinstance(row, dict):
            raise InputError(f"{path}:{n}: expected an object with 'claim' and 'evidence' or 'pmids'")
        evidence, pmids = row.get("evidence"), row.get("pmids")
        if evidence is None and pmids is None:
            raise InputError(f"{path}:{n}: field 'evidence' or 'pmids' is missing")
        if evidence is not None and not isinstance(evidence, str):
            raise InputError(f"{path}:{n}: field 'evidence' must be text")
        if pmids is not None and (
            not isinstance(pmids, list) or not pmids or not all(isinstance(p, str | int) for p in pmids)
        ):
            raise InputError(f"{path}:{n}: field 'pmids' must be a non-empty list of PMIDs")
        at = {
            "claim": f"{path}:{n}",
            "pmids": f"{path}:{n}: field 'pmids'",
            "text": f"{path}:{n}: field 'evidence'",
        }
        out.append((n, new_request(row.get("claim"), pmids or [], evidence, at)))
    return out


def check_pairs(
    model: SupportModel,
    path: Path,
    rows: Sequence[tuple[int, CheckRequest]],
    fetch: Fetch | None,
    batch: int = BATCH,
) -> Iterator[CheckResult]:
    """One result per line of `rows` (`parse_pairs(path)`: the whole file validated first, and read once, so
    standard input works), judged `batch` lines at a time."""
    for lo in range(0, len(rows), batch):
        chunk = rows[lo : lo + batch]
        yield from check_requests(model, [r for _, r in chunk], fetch, [f"{path}:{n}" for n, _ in chunk])


# --- run audit ------------------------------------------------------------------------------------------


def audit_run(model: SupportModel, run: Run, fetch: Fetch) -> dict[str, Any]:
    """Every citation of a run (`load_run`) judged against its abstract (BioGen 2025 Task A style labels)."""

    pmids = sorted({c.pmid for e in run.entries for s in e.answer.sentences for c in s.citations})
    docs = fetch(pmids) if pmids else {}
    jobs: list[tuple[int, int, str, str]] = []
    for ti, entry in enumerate(run.entries):
        for si, sentence in enumerate(entry.answer.sentences):
            for c in sentence.citations:
                if c.pmid in docs:
                    jobs.append((ti, si, c.pmid, sentence.text))
    verdicts = model.check_many([(text, docs[p].abstract) for _, _, p, text in jobs])
    judged = {(ti, si, p): v for (ti, si, p, _), v in zip(jobs, verdicts, strict=True)}
    counts: dict[str, int] = {}
    topics = []
    for ti, entry in enumerate(run.entries):
        sentences = []
        for si, sentence in enumerate(entry.answer.sentences):
            cites = []
            for c in sentence.citations:
                v = judged.get((ti, si, c.pmid))
                label = to_evaluator_label(v.label) if v else "Not found"
                counts[label] = counts.get(label, 0) + 1
                cites.append(
                    {"pmid": c.pmid, "label": label, "probs": v.probs if v else None,
                     "evidence": [e.model_dump() for e in v.evidence] if v else [],
                     "reversal": v.reversal if v else None,
                     "other_population": v.other_population if v else None,
                     "added_clause": v.added_clause if v else None}
                )  # fmt: skip
            sentences.append({"text": sentence.text, "citations": cites})
        topics.append({"topic_id": entry.topic_id, "question": entry.question, "sentences": sentences})
    return {
        "run": {"name": run.run_name, "path": run.path, "format": run.format},
        "model": model.name,
        "citations": sum(counts.values()),
        "labels": counts,
        "topics": topics,
    }


_COLOURS = {"Supports": "#d7f5dd", "Contradicts": "#f9d6d5", "Neutral": "#fff3c4", "Not relevant": "#e8e8e8"}


def audit_html(doc: dict[str, Any]) -> str:
    """A self-contained page: each sentence, each citation's label and its best evidence sentence."""
    e = html.escape
    parts = [
        "<!doctype html><meta charset='utf-8'><title>biocite check: "
        f"{e(doc['run']['name'])}</title><style>body{{font-family:sans-serif;max-width:60em;margin:auto}}"
        ".c{padding:2px 6px;border-radius:4px;margin-right:4px}blockquote{color:#444}</style>",
        f"<h1>Citation audit: {e(doc['run']['name'])}</h1><p>{doc['citations']} citations: "
        + ", ".join(f"{e(k)} {v}" for k, v in sorted(doc["labels"].items()))
        + f"; model {e(doc['model'])}</p>",
    ]
    for topic in doc["topics"]:
        parts.append(f"<h2>{e(str(topic['topic_id']))}: {e(topic['question'])}</h2>")
        for s in topic["sentences"]:
            parts.append(f"<p>{e(s['text'])}<br>")
            for c in s["citations"]:
                colour = _COLOURS.get(c["label"], "#eee")
                p = f" {c['probs'][_key(c['label'])]:.2f}" if c["probs"] else ""
                parts.append(
                    f"<span class='c' style='background:{colour}'>PMID {e(c['pmid'])}: {e(c['label'])}{p}"
                    "</span>"
                )
                if c.get("reversal"):
                    parts.append(f"<em>the evidence says otherwise ({e(c['reversal'])})</em>")
                if c.get("other_population"):
                    parts.append(f"<em>the evidence is about {e(c['other_population'])}</em>")
                if c.get("added_clause"):
                    parts.append(f"<em>the evidence does not mention: {e(c['added_clause'])}</em>")
                if c["evidence"]:
                    parts.append(f"<blockquote>{e(c['evidence'][0]['text'])}</blockquote>")
            parts.append("</p>")
    return "\n".join(parts)


def _key(label: str) -> str:
    return {"Supports": "supports", "Contradicts": "contradicts", "Neutral": "neutral"}.get(
        label, "not_relevant"
    )


def index_fetch(settings: Any) -> Fetch:
    """Abstracts from the built index (the default corpus)."""

    store = open_documents(settings)
    return lambda pmids: store.get_many(list(pmids))
