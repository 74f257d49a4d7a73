"""Score one run: completeness, correctness, citation support, nugget precision/recall.

Definitions (each score is a share over what could be judged; undetermined judgements are counted apart,
never scored as 0; abstentions are their own outcome and never scored as empty answers):
- completeness: Required sentences / judged sentences.
- correctness: sentences that some 3-sentence window of a cited abstract (or of an extra retrieved
  abstract, when `retrieved_k` > 0) Supports / judged sentences.
- citation coverage: sentences with >= 1 citation / sentences.
- support rate, contradiction rate: (sentence, cited PMID) pairs judged Supports / Contradicts over judged
  pairs; a pair's label is the strongest over its windows (Supports > Contradicts > Neutral > Not relevant).
  Cited PMIDs missing from the abstract source are counted as `citations_missing`, not judged.
- misattribution: sentences no cited PMID supports but a retrieved, uncited PMID does / judged sentences
  (per sentence, the 2 uncited retrieved abstracts most similar to it are judged).
- nugget precision / recall: see nuggets.py (needs gold nuggets).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field
from tqdm import tqdm

from biocite.evaluator.judges import UNDETERMINED, Judge, JudgeCache
from biocite.evaluator.nuggets import (
    EncodeTokens,
    MatchModel,
    NuggetResult,
    YesProbability,
    clause_nuggets,
    score_nuggets,
)
from biocite.evaluator.runs import Run, RunEntry
from biocite.evaluator.sources import WINDOW, AbstractSource, doc_sentences, windows

ALL_METRICS = ("completeness", "correctness", "citation", "nuggets")
SCORE_NAMES = (
    "completeness",
    "correctness",
    "citation_coverage",
    "support_rate",
    "contradiction_rate",
    "misattribution_rate",
    "nugget_precision",
    "nugget_recall",
)
STRENGTH = ["Supports", "Contradicts", "Neutral", "Not relevant"]


class CitationResult(BaseModel):
    pmid: str
    label: str  # a support label, "undetermined", or "missing" (abstract not in the source)
    evidence: str | None = None  # the window behind the label
    windows_judged: int = 0


class SentenceResult(BaseModel):
    text: str
    cited: list[str] = Field(default_factory=list)  # the PMIDs the answer cites (judged or not)
    citations: list[CitationResult] = Field(default_factory=list)
    completeness: str | None = None
    correct: bool | None = None  # None: not judged or undetermined
    correct_via: str | None = None
    misattributed: bool | None = None
    supported_by_uncited: list[str] = Field(default_factory=list)


class QuestionResult(BaseModel):
    topic_id: str
    question: str
    outcome: str  # "answered" | "abstained"
    abstain_reason: str | None = None
    sentences: list[SentenceResult] = Field(default_factory=list)
    nuggets: NuggetResult | None = None
    scores: dict[str, float | None] = Field(default_factory=dict)
    undetermined: dict[str, int] = Field(default_factory=dict)
    citations_missing: int = 0


Embed = Callable[[Sequence[str]], np.ndarray]
Retrieve = Callable[[str], list[str]]


class Evaluator:
    def __init__(
        self,
        *,
        metrics: Sequence[str],
        source: AbstractSource | None = None,
        completeness_judge: Judge | None = None,
        support_judge: Judge | None = None,
        embed: Embed | None = None,
        encode_tokens: EncodeTokens | None = None,
        matcher: MatchModel | None = None,
        gold: dict[str, list[str]] | None = None,
        nuggetize: Callable[[str], tuple[list[str], str]] | None = None,
        yes_probability: YesProbability | None = None,
        retrieve: Retrieve | None = None,
        max_windows: int | None = None,
        uncited_per_sentence: int = 2,
        cache: JudgeCache | None = None,
        embed_name: str = "embed",
    ) -> None:
        unknown = set(metrics) - set(ALL_METRICS)
        if unknown:
            raise ValueError(f"unknown metrics {sorted(unknown)}; known: {', '.join(ALL_METRICS)}")
        self.metrics = list(metrics)
        self.source = source
        self.completeness_judge = completeness_judge
        self.support_judge = support_judge
        self.embed = embed
        self.encode_tokens = encode_tokens
        self.matcher = matcher
        self.gold = gold or {}
        self.nuggetize = nuggetize or (lambda text: (clause_nuggets(text), "clause"))
        self.yes_probability = yes_probability  # the LLM nugget matcher's judge
        self.retrieve = retrieve
        self.max_windows = max_windows
        self.uncited_per_sentence = uncited_per_sentence
        self.cache = cache
        self.embed_name = f"embed:{embed_name}"
        self.timings: dict[str, float] = {}

    # --- one question ---------------------------------------------------------------------------------

    def evaluate_entry(self, entry: RunEntry) -> QuestionResult:
        ans = entry.answer
        if ans.abstained or not ans.sentences:
            return QuestionResult(
                topic_id=entry.topic_id,
                question=entry.question,
                outcome="abstained",
                abstain_reason=ans.abstain_reason or ("no sentences" if not ans.abstained else None),
            )
        result = QuestionResult(
            topic_id=entry.topic_id,
            question=entry.question,
            outcome="answered",
            sentences=[
                SentenceResult(text=s.text, cited=[c.pmid for c in s.citations]) for s in ans.sentences
            ],
        )
        if "completeness" in self.metrics:
            self._timed("completeness", self._completeness, entry, result)
        if "citation" in self.metrics or "correctness" in self.metrics:
            self._timed("support", self._support, entry, result)
        if "nuggets" in self.metrics:
            self._timed("nuggets", self._nuggets, entry, result)
        return result

    def _timed(self, name: str, fn: Callable[..., None], *args: Any) -> None:
        started = time.perf_counter()
        fn(*args)
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - started

    def _completeness(self, entry: RunEntry, result: QuestionResult) -> None:
        if self.completeness_judge is None:
            raise ValueError("completeness needs a completeness judge")
        verdicts = self.completeness_judge.judge([(entry.question, s.text) for s in result.sentences])
        for s, v in zip(result.sentences, verdicts, strict=True):
            s.completeness = v.label
        judged = [v.label for v in verdicts if v.label != UNDETERMINED]
        result.undetermined["completeness"] = len(verdicts) - len(judged)
        result.scores["completeness"] = judged.count("Required") / len(judged) if judged else None

    def _windows_for(self, sentence: str, doc_windows: list[str]) -> list[str]:
        if self.max_windows is None or len(doc_windows) <= self.max_windows or self.embed is None:
            return doc_windows
        vecs = self.embed([sentence, *doc_windows])
        order = np.argsort(-(vecs[1:] @ vecs[0]), kind="stable")[: self.max_windows]
        return [doc_windows[i] for i in sorted(order.tolist())]

    def _uncited_candidates(
        self,
        sentences: list[str],
        cited: list[list[str]],
        retrieved: list[str],
        doc_windows: dict[str, list[str]],
    ) -> list[list[str]]:
        """Per sentence, the retrieved-but-uncited abstracts worth judging: all of them when few, else the
        `uncited_per_sentence` whose best window is most similar to the sentence (bounds the judge calls)."""
        pool = [q for q in retrieved if q in doc_windows]
        if not pool:
            return [[] for _ in sentences]
        n = self.uncited_per_sentence
        if len(pool) <= n or self.embed is None:
            return [[q for q in pool if q not in c][:n] for c in cited]
        # The selection is cached like a judge call, so a re-run needs no embeddings.
        key = None
        if self.cache is not None:
            payload = [json.dumps([sentences, cited, pool, [doc_windows[q] for q in pool], n])]
            key = self.cache.key(self.embed_name, "uncited-v1", "uncited_candidates", payload)
            hit = self.cache.get(key)
            if hit:
                return [list(x) for x in json.loads(hit["raw"])]
        out = self._rank_uncited(sentences, cited, pool, doc_windows, n)
        if key is not None and self.cache is not None:
            self.cache.put(
                key,
                {
                    "model": self.embed_name,
                    "prompt_version": "uncited-v1",
                    "task": "uncited_candidates",
                    "raw": json.dumps(out),
                    "label": "ok",
                },
            )
        return out

    def _rank_uncited(
        self,
        sentences: list[str],
        cited: list[list[str]],
        pool: list[str],
        doc_windows: dict[str, list[str]],
        n: int,
    ) -> list[list[str]]:
        assert self.embed is not None
        texts = [w for q in pool for w in doc_windows[q]]
        owner = np.array([k for k, q in enumerate(pool) for _ in doc_windows[q]])
        vecs = self.embed([*sentences, *texts])
        sims = vecs[: len(sentences)] @ vecs[len(sentences) :].T
        out = []
        for i, c in enumerate(cited):
            best = np.full(len(pool), -np.inf)
            np.maximum.at(best, owner, sims[i])
            ranked = [pool[k] for k in np.argsort(-best, kind="stable") if pool[k] not in c]
            out.append(ranked[:n])
        return out

    def _support(self, entry: RunEntry, result: QuestionResult) -> None:
        if self.support_judge is None or self.source is None:
            raise ValueError("citation support and correctness need a support judge and an abstract source")
        cited = [[c.pmid for c in s.citations] for s in entry.answer.sentences]
        retrieved: list[str] = []
        if "correctness" in self.metrics:
            retrieved = list(dict.fromkeys(entry.answer.trace.retrieved))
            if self.retrieve is not None:
                retrieved = list(dict.fromkeys([*retrieved, *self.retrieve(entry.question)]))
        all_pmids = list(dict.fromkeys([p for ps in cited for p in ps] + retrieved))
        docs = self.source.get_many(all_pmids)
        whole = getattr(self.support_judge, "whole_passage", False)  # the support model reads abstracts
        doc_windows = {
            p: windows(sents, size=len(sents) if whole else WINDOW)
            for p, d in docs.items()
            for sents in [doc_sentences(d, self.source if hasattr(self.source, "sentences") else None)]
        }
        uncited = self._uncited_candidates([s.text for s in result.sentences], cited, retrieved, doc_windows)
        # One batch of (sentence, window) pairs for the whole question.
        jobs: list[tuple[int, str, str]] = []
        for i, s in enumerate(result.sentences):
            for p in dict.fromkeys([*cited[i], *uncited[i]]):
                for w in self._windows_for(s.text, doc_windows.get(p, [])):
                    jobs.append((i, p, w))
        verdicts = self.support_judge.judge([(result.sentences[i].text, w) for i, _, w in jobs])
        labels: dict[tuple[int, str], list[tuple[str, str, float]]] = {}
        for (i, p, w), v in zip(jobs, verdicts, strict=True):
            p_sup = (v.probs or {}).get("Supports", 1.0 if v.label == "Supports" else 0.0)
            labels.setdefault((i, p), []).append((v.label, w, p_sup))
        undetermined_pairs = 0
        for i, s in enumerate(result.sentences):
            for p in cited[i]:
                if p not in docs:
                    s.citations.append(CitationResult(pmid=p, label="missing"))
                    result.citations_missing += 1
                    continue
                label, evidence, n = _aggregate(labels.get((i, p), []))
                undetermined_pairs += label == UNDETERMINED
                s.citations.append(CitationResult(pmid=p, label=label, evidence=evidence, windows_judged=n))
            supported_cited = [c.pmid for c in s.citations if c.label == "Supports"]
            backing = [q for q in uncited[i] if _aggregate(labels.get((i, q), []))[0] == "Supports"]
            s.supported_by_uncited = backing
            decided = [c for c in s.citations if c.label not in (UNDETERMINED, "missing")] or backing
            if supported_cited:
                s.correct, s.correct_via, s.misattributed = True, supported_cited[0], False
            elif backing:
                s.correct, s.correct_via, s.misattributed = True, backing[0], True
            elif decided or not s.citations:
                s.correct, s.misattributed = False, False
        result.undetermined["citation"] = undetermined_pairs
        result.undetermined["correctness"] = sum(1 for s in result.sentences if s.correct is None)
        judged_pairs = [
            c.label for s in result.sentences for c in s.citations if c.label not in (UNDETERMINED, "missing")
        ]
        judged_sents = [s for s in result.sentences if s.correct is not None]
        if "citation" in self.metrics:
            n = len(result.sentences)
            result.scores["citation_coverage"] = sum(1 for s in result.sentences if s.citations) / n
            result.scores["support_rate"] = (
                judged_pairs.count("Supports") / len(judged_pairs) if judged_pairs else None
            )
            result.scores["contradiction_rate"] = (
                judged_pairs.count("Contradicts") / len(judged_pairs) if judged_pairs else None
            )
        if "correctness" in self.metrics:
            result.scores["correctness"] = (
                sum(1 for s in judged_sents if s.correct) / len(judged_sents) if judged_sents else None
            )
            result.scores["misattribution_rate"] = (
                sum(1 for s in judged_sents if s.misattributed) / len(judged_sents)
                if judged_sents and retrieved
                else None
            )

    def _nuggets(self, entry: RunEntry, result: QuestionResult) -> None:
        gold = self.gold.get(entry.topic_id)
        if gold is None or self.encode_tokens is None or self.matcher is None:
            return  # no gold nuggets for this topic: nugget scores stay absent (reported as n = 0)
        text = " ".join(s.text for s in entry.answer.sentences)
        nuggets, how = self.nuggetize(text)
        result.nuggets = score_nuggets(
            nuggets,
            gold,
            self.encode_tokens,
            self.matcher,
            nuggetizer=how,
            yes_probability=self.yes_probability,
        )
        if result.nuggets.undetermined:
            result.undetermined["nuggets"] = result.nuggets.undetermined
        result.scores["nugget_precision"] = result.nuggets.precision
        result.scores["nugget_recall"] = result.nuggets.recall

    # --- a whole run ----------------------------------------------------------------------------------

    def evaluate_run(self, run: Run, progress: bool = False) -> list[QuestionResult]:
        return [self.evaluate_entry(e) for e in tqdm(run.entries, disable=not progress, desc="evaluate")]


def _aggregate(rows: list[tuple[str, str, float]]) -> tuple[str, str | None, int]:
    decided = [r for r in rows if r[0] != UNDETERMINED]
    if not decided:
        return (UNDETERMINED if rows else "Not relevant"), None, len(rows)
    best = min(decided, key=lambda r: (STRENGTH.index(r[0]) if r[0] in STRENGTH else 9, -r[2]))
    return best[0], best[1], len(rows)


# --- summaries ----------------------------------------------------------------------------------------


def bootstrap_ci(values: Sequence[float], samples: int, seed: int) -> tuple[float, float] | None:
    if not values:
        return None
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 1 or samples <= 0:
        return float(x.mean()), float(x.mean())
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(samples, len(x)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def summarise(results: Sequence[QuestionResult], samples: int, seed: int) -> dict[str, Any]:
    answered = [r for r in results if r.outcome == "answered"]
    overall: dict[str, Any] = {}
    for name in SCORE_NAMES:
        values = [float(v) for r in answered if (v := r.scores.get(name)) is not None]
        ci = bootstrap_ci(values, samples, seed)
        overall[name] = {
            "mean": round(float(np.mean(values)), 4) if values else None,
            "ci95": [round(ci[0], 4), round(ci[1], 4)] if ci else None,
            "n": len(values),
        }
    undetermined: dict[str, int] = {}
    for r in answered:
        for k, v in r.undetermined.items():
            undetermined[k] = undetermined.get(k, 0) + v
    return {
        "questions": len(results),
        "answered": len(answered),
        "abstained": len(results) - len(answered),
        "sentences": sum(len(r.sentences) for r in answered),
        "citations_missing": sum(r.citations_missing for r in answered),
        "undetermined": undetermined,
        "metrics": overall,
    }


def compare(
    a: Sequence[QuestionResult], b: Sequence[QuestionResult], samples: int, seed: int
) -> dict[str, Any]:
    """Paired differences A - B over topics both runs answered and both could score."""
    by_b = {r.topic_id: r for r in b}
    out: dict[str, Any] = {}
    for name in SCORE_NAMES:
        pairs = [
            (ra.scores[name], by_b[ra.topic_id].scores[name])
            for ra in a
            if ra.topic_id in by_b
            and ra.scores.get(name) is not None
            and by_b[ra.topic_id].scores.get(name) is not None
        ]
        diffs = [float(x) - float(y) for x, y in pairs]  # type: ignore[arg-type]
        ci = bootstrap_ci(diffs, samples, seed)
        out[name] = {
            "n_paired": len(diffs),
            "mean_a": round(float(np.mean([p[0] for p in pairs])), 4) if pairs else None,  # type: ignore[arg-type]
            "mean_b": round(float(np.mean([p[1] for p in pairs])), 4) if pairs else None,  # type: ignore[arg-type]
            "mean_diff": round(float(np.mean(diffs)), 4) if diffs else None,
            "ci95": [round(ci[0], 4), round(ci[1], 4)] if ci else None,
        }
    only_a = sorted({r.topic_id for r in a} - set(by_b))
    only_b = sorted(set(by_b) - {r.topic_id for r in a})
    return {"metrics": out, "topics_only_in_a": only_a, "topics_only_in_b": only_b}
