"""Judges: a trained MiniLM head or the LLM, behind one interface, every call cached on disk and logged.

A judge maps (text_a, text_b) pairs to one label of its label set, or `undetermined` when the LLM's answer
cannot be parsed. The cache is a JSONL file: one line per call with the key (model, prompt version, input),
the raw output and the parsed label. Reading it back rebuilds the lookup table, so an interrupted evaluation
resumes where it stopped; a half-written last line (a crash mid-write) is ignored.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from biocite.llm import yes_probability
from biocite.support import to_evaluator_label

UNDETERMINED = "undetermined"
COMPLETENESS_LABELS = ["Required", "Unnecessary", "Borderline", "Inappropriate"]
SUPPORT_LABELS = ["Supports", "Contradicts", "Neutral", "Not relevant"]


class Verdict(BaseModel):
    label: str  # one of the judge's labels, or "undetermined"
    probs: dict[str, float] | None = None
    raw: str = ""
    cached: bool = False


class JudgeCache:
    """Append-only JSONL cache keyed by sha256(model, prompt version, task, input)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._table: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        if path and path.is_file():
            with path.open() as f:
                for line in f:
                    try:
                        record = json.loads(line)
                        self._table[record["key"]] = record
                    except (json.JSONDecodeError, KeyError):
                        continue  # a torn last line from an interrupted run

    @staticmethod
    def key(model: str, prompt_version: str, task: str, payload: Sequence[str]) -> str:
        blob = json.dumps([model, prompt_version, task, list(payload)], ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        record = self._table.get(key)
        if record is None:
            self.misses += 1
        else:
            self.hits += 1
        return record

    def put(self, key: str, record: dict[str, Any]) -> None:
        record = {"key": key, "time": datetime.now(UTC).isoformat(timespec="seconds"), **record}
        with self._lock:
            self._table[key] = record
            if self.path:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a") as f:
                    f.write(json.dumps(record, ensure_ascii=False) + "\n")

    def remember(self, key: str, record: dict[str, Any]) -> None:
        """Hold a record in memory only (shipped judgements: the file on disk keeps this machine's calls)."""
        with self._lock:
            self._table.setdefault(key, {"key": key, **record})

    def __len__(self) -> int:
        return len(self._table)


class Judge(Protocol):
    name: str
    labels: list[str]

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]: ...


class HeadJudge:
    """A trained `PairClassifier` (argmax label, softmax probabilities kept)."""

    prompt_version = "head-v1"

    def __init__(self, head: Any, task: str, cache: JudgeCache, batch_size: int = 32) -> None:
        self.head = head
        self.task = task
        self.cache = cache
        self.labels = list(head.labels)
        self.batch_size = batch_size
        meta = head.meta or {}
        self.name = f"head:{task}:{str(meta.get('train_data_sha256') or 'untracked')[:12]}"

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        out: list[Verdict | None] = []
        todo: list[int] = []
        keys = [JudgeCache.key(self.name, self.prompt_version, self.task, p) for p in pairs]
        for i, key in enumerate(keys):
            hit = self.cache.get(key)
            out.append(
                Verdict(label=hit["label"], probs=hit.get("probs"), raw=hit["raw"], cached=True)
                if hit
                else None
            )
            if hit is None:
                todo.append(i)
        if todo:
            probs = self.head.predict_proba([pairs[i] for i in todo], batch_size=self.batch_size)
            for i, row in zip(todo, probs, strict=True):
                p = {label: round(float(v), 5) for label, v in zip(self.labels, row, strict=True)}
                label = max(p, key=p.__getitem__)
                raw = json.dumps(p)
                self.cache.put(
                    keys[i],
                    {
                        "model": self.name,
                        "prompt_version": self.prompt_version,
                        "task": self.task,
                        "input": list(pairs[i]),
                        "raw": raw,
                        "label": label,
                        "probs": p,
                    },
                )
                out[i] = Verdict(label=label, probs=p, raw=raw)
        return [v for v in out if v is not None]


class SupportJudge:
    """biocite's support model (core/support.py) as the evaluator's citation-support judge. It reads a
    whole abstract at once (`whole_passage`): its sentence scores and learned aggregation replace the
    3-sentence windows."""

    prompt_version = "support-model-v1"
    whole_passage = True

    def __init__(self, model: Any, cache: JudgeCache) -> None:
        self.model = model
        self.cache = cache
        self.labels = list(SUPPORT_LABELS)
        self.name = str(model.name)

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        keys = [JudgeCache.key(self.name, self.prompt_version, "support", p) for p in pairs]
        out: list[Verdict | None] = []
        for key in keys:
            hit = self.cache.get(key)
            out.append(
                Verdict(label=hit["label"], probs=hit.get("probs"), raw=hit["raw"], cached=True)
                if hit
                else None
            )
        todo = [i for i, v in enumerate(out) if v is None]
        verdicts = self.model.check_many([pairs[i] for i in todo]) if todo else []
        for i, v in zip(todo, verdicts, strict=True):
            probs = {to_evaluator_label(k): p for k, p in v.probs.items()}
            label = to_evaluator_label(v.label)
            raw = json.dumps(probs)
            self.cache.put(
                keys[i],
                {"model": self.name, "prompt_version": self.prompt_version, "task": "support",
                 "input": list(pairs[i]), "raw": raw, "label": label, "probs": probs},
            )  # fmt: skip
            out[i] = Verdict(label=label, probs=probs, raw=raw)
        return [v for v in out if v is not None]


# --- the LLM judge ------------------------------------------------------------------------------------

PROMPT_VERSION = "llm-judge-v1"
MAX_LABEL_TOKENS = 8

COMPLETENESS_PROMPT = """You grade one sentence of an answer to a patient's medical question.
Labels:
Required: the sentence states information a complete answer to this question must contain.
Borderline: relevant and correct, but a good answer could leave it out.
Unnecessary: off the question, generic advice, or filler that does not help answer it.
Inappropriate: wrong, unsafe or harmful advice for this question.

Question: {a}
Sentence: {b}

Reply with exactly one word: Required, Borderline, Unnecessary or Inappropriate."""

SUPPORT_PROMPT = """You check whether a passage from a cited PubMed abstract supports a sentence.
Labels:
Supports: the passage states or directly implies what the sentence says.
Contradicts: the passage states the opposite or incompatible findings.
Neutral: the passage is on the same topic but neither supports nor contradicts the sentence.
NotRelevant: the passage is about something else.

Sentence: {a}
Passage: {b}

Reply with exactly one word: Supports, Contradicts, Neutral or NotRelevant."""

PROMPTS = {
    "completeness": (COMPLETENESS_PROMPT, COMPLETENESS_LABELS),
    "support": (SUPPORT_PROMPT, SUPPORT_LABELS),
}


def parse_label(raw: str, labels: Sequence[str]) -> str:
    """The first label word in the reply (case-insensitive; "NotRelevant" / "irrelevant" = "Not relevant")."""
    canon = {re.sub(r"[^a-z]", "", label.lower()): label for label in labels}
    if "Not relevant" in labels:
        canon["irrelevant"] = "Not relevant"
    for word in re.findall(r"[A-Za-z]+(?:[ _-]?relevant)?", raw, flags=re.I):
        hit = canon.get(re.sub(r"[^a-z]", "", word.lower()))
        if hit:
            return hit
    return UNDETERMINED


class LLMJudge:
    """The chat model from `biocite.llm`; asks for one label word; unparseable -> undetermined."""

    def __init__(self, chat_model: Any, model_name: str, task: str, cache: JudgeCache) -> None:
        self.chat_model = chat_model
        self.task = task
        self.cache = cache
        self.template, self.labels = PROMPTS[task]
        self.name = f"llm:{model_name}"
        self.prompt_version = PROMPT_VERSION

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        return [self._one(a, b) for a, b in pairs]

    def _one(self, a: str, b: str) -> Verdict:
        key = JudgeCache.key(self.name, self.prompt_version, self.task, (a, b))
        hit = self.cache.get(key)
        if hit:
            return Verdict(label=hit["label"], raw=hit["raw"], cached=True)
        from langchain_core.messages import HumanMessage

        reply = self.chat_model.invoke(
            [HumanMessage(content=self.template.format(a=a, b=b[:3000]))], max_tokens=MAX_LABEL_TOKENS
        )
        raw = str(getattr(reply, "content", reply))
        label = parse_label(raw, self.labels)
        self.cache.put(
            key,
            {
                "model": self.name,
                "prompt_version": self.prompt_version,
                "task": self.task,
                "input": [a, b],
                "raw": raw,
                "label": label,
            },
        )
        return Verdict(label=label, raw=raw)


# --- the LLM nugget judge -----------------------------------------------------------------------------

NUGGET_PROMPT_VERSION = "nugget-yes-v1"
NUGGET_SYSTEM = (
    "You are a physician checking an answer to a patient's question. Decide whether the answer states the given "
    "medical fact, or something that clearly implies it. A fact the answer does not mention, or states only "
    "vaguely or about something else, is not stated. Reply with one word: yes or no."
)
NUGGET_USER = "Answer:\n{answer}\n\nFact: {nugget}\n\nDoes the answer state this fact? yes or no."
MAX_ANSWER_CHARS = 6000  # about 1,500 tokens: the prompt stays inside a 4,096-token context


def nugget_prompt_sha256() -> str:
    return hashlib.sha256(f"{NUGGET_PROMPT_VERSION}\n{NUGGET_SYSTEM}\n{NUGGET_USER}".encode()).hexdigest()


class ShippedNuggetAnswers(BaseModel):
    """One LLM's P(yes) on K-QA's 399 physician-labelled (LLM answer, nugget) rows, shipped in data/kqa/ for
    the default LLM so that its nugget matcher fits in seconds; valid only for that model file and prompt."""

    llm: str  # a model id of `biocite models`
    llm_sha256: str  # of its pinned file
    prompt_sha256: str
    answers: list[str]  # each answer as the matcher reads it (`nuggets.answer_text`)
    rows: list[tuple[int, str, float | None]]  # (answer index, nugget, P(yes))


class NuggetJudge:
    """The LLM's P(yes) that an answer states a gold nugget: the nugget matcher's score with
    `evaluator.nugget_score=llm`. The answer comes first in the prompt, so the llama.cpp prompt cache reuses it
    across that answer's nuggets. Each call is cached; a reply with neither word is undetermined (None). The
    LLM is loaded on the first answer the cache does not hold."""

    def __init__(self, make_chat_model: Callable[[], Any], model_name: str, cache: JudgeCache) -> None:
        self._make_chat_model = make_chat_model
        self._chat_model: Any = None
        self.name = f"llm:{model_name}"
        self.cache = cache

    def key(self, answer: str, nugget: str) -> str:
        return JudgeCache.key(self.name, NUGGET_PROMPT_VERSION, "nugget", (answer, nugget))

    def __call__(self, answer: str, nugget: str) -> float | None:
        key = self.key(answer, nugget)
        hit = self.cache.get(key)
        if hit:
            return hit["p_yes"]
        from langchain_core.messages import HumanMessage, SystemMessage

        if self._chat_model is None:
            self._chat_model = self._make_chat_model()
        user = NUGGET_USER.format(answer=answer[:MAX_ANSWER_CHARS], nugget=nugget)
        p = yes_probability(
            self._chat_model, [SystemMessage(content=NUGGET_SYSTEM), HumanMessage(content=user)]
        )
        self.cache.put(key, self._record(answer, nugget, p))
        return p

    def _record(self, answer: str, nugget: str, p: float | None) -> dict[str, Any]:
        label = UNDETERMINED if p is None else ("yes" if p >= 0.5 else "no")
        return {"model": self.name, "prompt_version": NUGGET_PROMPT_VERSION, "task": "nugget",
                "input": [answer, nugget], "p_yes": p, "label": label, "raw": ""}  # fmt: skip

    def preload(self, shipped: ShippedNuggetAnswers, llm_sha256: str) -> int:
        """Serve the shipped answers from memory when they are this LLM's (same file, same prompt); how many."""
        if f"llm:{shipped.llm}" != self.name or shipped.llm_sha256 != llm_sha256:
            return 0
        if shipped.prompt_sha256 != nugget_prompt_sha256():
            return 0
        for i, nugget, p in shipped.rows:
            answer = shipped.answers[i]
            self.cache.remember(self.key(answer, nugget), self._record(answer, nugget, p))
        return len(shipped.rows)

    def export(self, pairs: Sequence[tuple[str, str]], llm: str, llm_sha256: str) -> ShippedNuggetAnswers:
        """The cached P(yes) of `pairs` (answer, nugget) as a file to ship (each must be cached)."""
        answers = list(dict.fromkeys(a for a, _ in pairs))
        index = {a: i for i, a in enumerate(answers)}
        rows = []
        for answer, nugget in pairs:
            hit = self.cache.get(self.key(answer, nugget))
            if hit is None:
                raise KeyError(f"not judged yet: {nugget!r}")
            rows.append((index[answer], nugget, hit["p_yes"]))
        return ShippedNuggetAnswers(
            llm=llm, llm_sha256=llm_sha256, prompt_sha256=nugget_prompt_sha256(), answers=answers, rows=rows
        )
