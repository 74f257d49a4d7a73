"""The answering graph: attribute first, then generate, then verify (LangGraph `StateGraph`).

    contextualize ─▶ plan ─▶ retrieve ─▶ attribute ─┬▶ conclude ─┬▶ generate ─▶ verify ─▶ polish ─┬▶ finalize
          │           ▲                             │            │      │ LLM failed  │ nothing kept │
          │           └─ thin / concept missing, ───┤            │      ▼             ▼              │
          │              rounds left                │            └▶ extractive ◀───────────────────┘
          │                                         └▶ abstain (thin or a key concept missing, no rounds left)
          └▶ abstain (a follow-up with no earlier question: "What about in children?")

Issue 12: `attribute` orders evidence by relevance mixed with P(answer-bearing) (agent/findings.py) and
checks that every key concept of the question is in the evidence abstracts (agent/coverage.py);
`conclude` classifies the question and, for yes/no questions, gives the verdict (agent/verdict.py) that
opens the answer as its bottom-line sentence; `polish` applies the synthesis checks (agent/synthesis.py).

Prompts are in `agent/prompts/*.txt`; thresholds are `AgentSettings` fields (`biocite config show`).
Hard guarantees, enforced again in `finalize` whatever the nodes did: every cited PMID was retrieved in
this pass; every kept sentence has at least one citation; in generate mode every kept sentence has a
verified support probability >= `agent.min_support`.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, cast

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph

from biocite.agent.aspects import AspectModel, load_aspects
from biocite.agent.checks import (
    ASKS_AGAIN_ABOUT,
    PRONOUNS,
    check_question,
    named_pmids,
    names_nothing_of_its_own,
    reads_as_follow_up,
)
from biocite.agent.coverage import (
    Concept,
    Coverage,
    DocumentFrequencies,
    DocumentTerms,
    asked_outcome,
    asked_subject,
    aspect,
    carried_concepts,
    coverage,
    covers,
    disease_replaces_outcome,
    evidence_caveats,
    in_passing,
    in_place_of,
    key_concepts,
    kin_of,
    names_all,
    names_cost,
    names_disease,
    names_disease_or_people,
    names_people,
    never_indexed,
    off_topic,
    outcome_parts,
    passing_labels,
    people_not_studied,
    respelling_notes,
    time_horizon,
    uncited_concepts,
    without_time,
)
from biocite.agent.evidence import (
    ANSWER_BEARING,
    RelevanceWeights,
    VectorCache,
    content_terms,
    relative_scores,
    score_sentences,
    select_evidence,
    to_evidence,
    with_antecedents,
)
from biocite.agent.extractive import extractive_sentences
from biocite.agent.findings import FindingsModel, findings_or_all, load_findings, with_asked_quantity
from biocite.agent.prompting import load_prompt
from biocite.agent.state import AgentState, Turn, fresh_turn
from biocite.agent.synthesis import acceptable_query, distinct_parts, new_terms, polish
from biocite.agent.verdict import (
    HARMS,
    LLM_WORDS,
    VerdictModel,
    asks_about_safety,
    asks_of_harms,
    llm_identity,
    llm_messages,
    load_verdict,
    on_harms,
    question_type,
    reading_order,
    speaks_of_harm,
    top_evidence,
)
from biocite.citations import (
    DraftSentence,
    drop_repeats,
    nothing_more_fits,
    parse_generation,
    within_limits,
)
from biocite.errors import BiociteError, ModelError
from biocite.llm import answer_mass, make_chat_model, yes_probability
from biocite.other_names import names_a_drug
from biocite.records import (
    Answer,
    AnswerSentence,
    Citation,
    Document,
    Evidence,
    NodeTiming,
    QuestionType,
    Reference,
    SearchHit,
    Sentence,
    Trace,
    hedged,
)
from biocite.retrieval import Retriever, TokenSource
from biocite.sentences import is_metadata_sentence, states_aim
from biocite.settings import Settings
from biocite.support import SupportModel
from biocite.tokenize import tokenize

Judge = Callable[[list[BaseMessage]], float | None]
Event = dict[str, Any]
_WORD = re.compile(r"[^\W\d_]+")
CONTEXT_OPEN = " (context: "  # how a short follow-up carries the previous question into retrieval
_CHECK_EVERY_CHARS = 60  # generated text between two checks that anything more could still be kept


def make_checkpointer() -> BaseCheckpointSaver:
    """In-memory chat memory that may deserialize biocite's own records (and nothing else unknown)."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    allowed = [
        ("biocite.records", name)
        for name in (
            "Answer",
            "AnswerSentence",
            "Citation",
            "Evidence",
            "Span",
            "Reference",
            "NodeTiming",
            "Trace",
            "SearchHit",
            "Sentence",
        )  # fmt: skip
    ]
    allowed += [("biocite.citations", "DraftSentence"), ("biocite.agent.state", "Turn")]
    return InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=allowed))


def _emit(event: Event) -> None:
    try:
        get_stream_writer()(event)
    except RuntimeError:  # called outside a graph run (unit tests of a single node)
        pass


def is_connection_error(exc: BaseException) -> bool:
    """An endpoint that cannot be reached: a configuration problem to report, not to paper over."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return isinstance(exc, ConnectionError) or bool(
        names & {"APIConnectionError", "ConnectError", "APITimeoutError"}
    )


class Agent:
    """Answers questions from the index. One instance per settings; `ask` for one answer, `stream` for events.

    `retriever` (a `biocite.retrieval.Retriever`: search, documents, encoder) comes from the application
    layer, which opens the index; `chat_model` and `judge` default to the LLM layer (`biocite.llm`), created
    on first use. A question's abstracts are fetched once, at retrieval: they travel in its hits.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        retriever: Retriever,
        chat_model: BaseChatModel | None = None,
        judge: Judge | None = None,
        checkpointer: BaseCheckpointSaver | None = None,
    ) -> None:
        self.settings = settings
        self.config = settings.agent
        self._retriever = retriever
        self._chat_model = chat_model
        self._injected_llm = chat_model is not None
        self._judge = judge
        self._support_model: Any = None
        self._cache: VectorCache | None = None
        self._findings: FindingsModel | None = None
        self._verdict: VerdictModel | None = None
        self._llm_verdict: VerdictModel | None = None
        self._aspects: AspectModel | None = None
        self._doc_freqs: DocumentFrequencies | None = None
        self._loaded: set[str] = set()
        self.weights = RelevanceWeights(self.config.cosine_weight, 1.0 - self.config.cosine_weight)
        self.checkpointer = checkpointer
        self.graph = build_graph(self).compile(checkpointer=checkpointer)

    # --- dependencies, created on first use -------------------------------------------------------------

    @property
    def retriever(self) -> Retriever:
        return self._retriever

    @property
    def cache(self) -> VectorCache:
        if self._cache is None:
            self._cache = VectorCache(self.retriever.encoder)
        return self._cache

    @property
    def findings(self) -> FindingsModel | None:
        """The answer-bearing sentence model for the index's embedder (None for embedders it cannot use)."""
        if "findings" not in self._loaded:
            self._loaded.add("findings")
            retriever = self.retriever
            self._findings = load_findings(self.settings, retriever.encoder, self.cache, retriever.documents)
        return self._findings

    @property
    def verdict_model(self) -> VerdictModel | None:
        if "verdict" not in self._loaded:
            self._loaded.add("verdict")
            findings = self.findings
            if findings is not None:
                self._verdict = load_verdict(self.settings, findings, self.cache, self.retriever.documents)
        return self._verdict

    @property
    def llm_verdict_model(self) -> VerdictModel | None:
        """The verdict model stacked on the LLM's answer-word mass: for the LLM the shipped masses were made
        with, or one `biocite train verdict --llm` made them for (not an injected chat model), when it
        cross-validated better than the cue head."""
        if "llm_verdict" not in self._loaded:
            self._loaded.add("llm_verdict")
            findings = self.findings
            if not self._injected_llm and findings:
                docs = self.retriever.documents
                identity = llm_identity(self.settings)
                stacked = load_verdict(self.settings, findings, self.cache, docs, llm=identity)
                cues = self.verdict_model
                if stacked is not None and (cues is None or stacked.beats(cues)):
                    self._llm_verdict = stacked
        return self._llm_verdict

    @property
    def aspects(self) -> AspectModel | None:
        """Whether "What about X?" names an outcome or an entity (None for embedders it cannot use)."""
        if "aspects" not in self._loaded:
            self._loaded.add("aspects")
            self._aspects = load_aspects(self.settings, self.retriever.encoder, self.cache)
        return self._aspects

    @property
    def doc_freqs(self) -> DocumentFrequencies | None:
        """Document frequencies of the index's tokens, for the key concepts (None if the store has none)."""
        if "doc_freqs" not in self._loaded:
            self._loaded.add("doc_freqs")
            docs = self.retriever.documents
            if isinstance(docs, TokenSource) and self.config.coverage:
                self._doc_freqs = DocumentFrequencies.from_token_lists(t for _, t in docs.iter_tokens())
        return self._doc_freqs

    @property
    def chat_model(self) -> BaseChatModel:
        if self._chat_model is None:
            self._chat_model = make_chat_model(self.settings)
        return self._chat_model

    def judge(self, messages: list[BaseMessage]) -> float | None:
        if self._judge is not None:
            return self._judge(messages)

        return yes_probability(self.chat_model, messages)

    def models(self, *, llm: bool = True) -> dict[str, str]:
        names = {
            "embedder": self.retriever.encoder.name,
            "reranker": self.settings.index.reranker,
        }
        if llm:
            names["llm"] = f"{self.settings.llm.backend}:{self.settings.llm.model}"
        return names

    # --- running --------------------------------------------------------------------------------------

    def stream(
        self, question: str, *, mode: str | None = None, thread_id: str | None = None
    ) -> Iterator[Event]:
        """Progress events ({"event": "start" | "step" | "token", ...}), then the answer event."""
        mode = mode or self.config.mode
        if mode not in ("generate", "extractive"):
            raise BiociteError(f"unknown mode {mode!r}; use generate or extractive")
        question = check_question(question, self.config.max_question_chars)
        if mode == "generate":
            _ = self.chat_model  # a missing model file or bad endpoint settings fail here, before any work
        config: RunnableConfig = {
            "configurable": {"thread_id": thread_id or uuid.uuid4().hex},
            "recursion_limit": 50,
        }
        final: AgentState = {}
        # With a list of stream modes, langgraph yields (mode, payload) pairs.
        parts = self.graph.stream(fresh_turn(question, mode), config, stream_mode=["custom", "values"])
        for kind, payload in cast(Iterator[tuple[str, Any]], parts):
            if kind == "custom":
                yield payload
            else:
                final = payload
        answer = final.get("answer")
        if answer is None:
            raise RuntimeError("the answering graph ended without an answer")
        yield {"event": "answer", "answer": answer}

    def ask(
        self,
        question: str,
        *,
        mode: str | None = None,
        thread_id: str | None = None,
        on_event: Callable[[Event], None] | None = None,
    ) -> Answer:
        for event in self.stream(question, mode=mode, thread_id=thread_id):
            if event["event"] == "answer":
                return event["answer"]
            if on_event:
                on_event(event)
        raise RuntimeError("no answer")

    # --- nodes ----------------------------------------------------------------------------------------

    def contextualize(self, state: AgentState) -> AgentState:
        history = state.get("history") or []
        question, focus = named_pmids(state["question"])
        notes = list(state.get("notes", []))
        # the heuristic's test for a follow-up: it refers back, has too few words of its own to search, or
        # four that are all common in the index ("How long do patients stay in hospital?")
        df, terms = self.doc_freqs, content_terms(question)
        all_common = len(terms) == 4 and df is not None and names_nothing_of_its_own(question, df)
        short = len(terms) < 4 or (bool(history) and all_common)
        refers_back = bool(PRONOUNS.search(question)) or (short and not self.asks_anew(question, history))
        named = "the question names"
        # "Was it safe?" after "What did PMID 29768149 find?" reads the same abstract
        if not focus and refers_back and history and history[-1].focus:
            focus, named = list(history[-1].focus), "a follow-up on"
        if focus:
            which = "that abstract" if len(focus) == 1 else "those abstracts"
            notes.append(f"{named} PMID {', '.join(focus)}: answered from {which} alone")
        if not history:
            return {
                "standalone": question,
                "focus": focus,
                "notes": notes,
                "needs_context": not focus and df is not None and reads_as_follow_up(question, df),
            }
        last = history[-1]
        if state["mode"] == "generate":
            lines = [f"User: {t.question}\nAssistant: {t.answer[:300]}" for t in history[-3:]]
            try:
                text = self._complete(
                    load_prompt("contextualize").messages(history="\n".join(lines), question=question)
                )
                # a PMID the LLM copies from the history is no word to search
                rewritten, _ = named_pmids(_first_line(text))
                if len(rewritten) >= 8:
                    notes.append(f"follow-up rewritten by the LLM: {rewritten!r}")
                    return {"standalone": rewritten, "focus": focus, "notes": notes}
            except Exception as exc:  # noqa: BLE001 - any LLM failure falls back to the heuristic below
                self._raise_if_config_error(exc)
                notes.append(f"follow-up rewriting failed ({type(exc).__name__}); heuristic used")
        if refers_back:
            context = last.standalone
            # (a time horizon asks the last question again over that time, children and all)
            again = ASKS_AGAIN_ABOUT.match(question) and time_horizon(question) is None
            if again and (whole := whole_question(context)) != context:
                # after "And in children?", "What about pregnant women?" replaces the children, not adds to them
                notes.append(f"asks the last whole question again, without the follow-up {last.question!r}")
                context = whole
            standalone = f"{question}{CONTEXT_OPEN}{context})"
            notes.append("follow-up completed with the previous question")
            return {"standalone": standalone, "focus": focus, "notes": notes}
        return {"standalone": question, "focus": focus, "notes": notes}

    def plan(self, state: AgentState) -> AgentState:
        round_ = state.get("round", 0) + 1
        queries = list(state.get("queries", []))
        notes = list(state.get("notes", []))
        if round_ == 1:
            return {"round": round_, "queries": [_searched(state["standalone"])]}
        query = None
        if state["mode"] == "generate" and not state.get("llm_failed"):
            try:
                text = self._complete(
                    load_prompt("rewrite").messages(question=state["standalone"], queries="; ".join(queries))
                )
                query = distinct_parts(_first_line(text).strip("\"'"))
            except Exception as exc:  # noqa: BLE001
                self._raise_if_config_error(exc)
                notes.append(f"query rewriting by the LLM failed ({type(exc).__name__}); heuristic used")
        if query and not acceptable_query(query, queries):
            notes.append(f"rewritten query refused (states a fact or repeats a query): {query!r}")
            query = None
        if not query:
            query = expand_query(_searched(state["standalone"]), state.get("hits", []), queries)
        return {"round": round_, "queries": [*queries, query], "notes": notes}

    def retrieve(self, state: AgentState) -> AgentState:
        if state.get("focus"):
            return self._named(state["focus"], list(state.get("notes", [])))
        hits = list(state.get("hits", []))
        seen = {h.pmid for h in hits}
        query = state["queries"][-1]
        found = self.retriever.search(query, k=self.config.docs_per_round)
        relative = relative_scores(found)
        scores = dict(state.get("retrieval_scores", {}))
        for hit in found:
            if hit.pmid not in seen:
                seen.add(hit.pmid)
                hits.append(hit)
                scores[hit.pmid] = relative[hit.pmid]
        hits = self._with_documents(hits)
        _emit({"event": "step", "node": "retrieve", "detail": f"{len(hits)} abstracts for {query!r}"})
        return {"hits": hits, "retrieval_scores": scores}

    def _named(self, pmids: list[str], notes: list[str]) -> AgentState:
        """The abstracts the question names, as the hits (each the best of its query: relative score 1)."""
        store = self.retriever.documents
        found = store.get_many(pmids)
        if absent := [p for p in pmids if p not in found]:
            notes.append(f"PMID {', '.join(absent)}, named in the question, is not in the index")
        hits = [
            SearchHit(
                pmid=p,
                title=found[p].title,
                score=1.0,
                rank=rank,
                document=found[p],
                sentences=store.sentences(p),
            )
            for rank, p in enumerate((p for p in pmids if p in found), start=1)
        ]
        _emit(
            {
                "event": "step",
                "node": "retrieve",
                "detail": f"{len(hits)} of the {len(pmids)} abstracts named",
            }
        )
        return {"hits": hits, "retrieval_scores": {h.pmid: 1.0 for h in hits}, "notes": notes}

    def choose_evidence(
        self,
        question: str,
        hits: list[SearchHit],
        retrieval_scores: dict[str, float],
        *,
        answer_model: bool = True,
        retrieval_weight: float | None = None,
        min_relevance: float | None = None,
        only: Callable[[str], bool] | None = None,
    ) -> list[Evidence]:
        """The evidence sentences of these hits, best first (`select_evidence` with this agent's settings);
        without `answer_model`, ordered on relevance alone; with `only`, of the sentences it accepts."""
        docs, sentences = self._documents(hits)
        findings = self.findings if answer_model else None
        return select_evidence(
            question,
            docs,
            sentences,
            self.cache,
            per_doc=self.config.evidence_per_doc,
            min_relevance=self.config.min_relevance if min_relevance is None else min_relevance,
            weights=self.weights,
            answer_scorer=(
                (lambda q, s, n: with_asked_quantity(q, s, findings.score(q, s, n, self.cache)))
                if findings
                else None
            ),
            answer_weight=self.config.answer_weight,
            retrieval_scores=retrieval_scores,
            retrieval_weight=self.config.retrieval_weight if retrieval_weight is None else retrieval_weight,
            strong_abstract=self.config.min_top_relevance if self.config.lend_relevance else None,
            lent_margin=self.config.relevance_margin,
            only=only,
        )

    def attribute(self, state: AgentState) -> AgentState:
        docs, sentences = self._documents(state["hits"])
        # The abstracts a question names are read whatever their sentences' similarity to it ("What did PMID
        # 29768149 find?" resembles none): the user chose them, and the coverage check still applies.
        focus = bool(state.get("focus"))
        choose = partial(
            self.choose_evidence,
            state["standalone"],
            state["hits"],
            state.get("retrieval_scores", {}),
            min_relevance=0.0 if focus else None,
        )
        evidence = relevant = choose()
        notes = list(state.get("notes", []))
        # Thin evidence is judged on relevance alone (the bars were calibrated on it), before the coverage
        # filter keeps only the abstracts covering the concepts.
        enough = bool(evidence) if focus else self.sufficient(evidence)
        if self.findings is not None and not enough and not focus:
            enough = self.sufficient(choose(answer_model=False))
        evidence, covered, unknown, readings = self._cover(
            state["standalone"], evidence, docs, sentences, notes
        )
        own = split_follow_up(state["standalone"])[0]  # a follow-up's words, not its context's
        harms = asks_of_harms(own)
        which_harms = harms and not asks_about_safety(own)  # "Is X safe?" is the verdict step's to judge
        if evidence and which_harms:
            evidence = self._on_harms_of(evidence, choose)
        if harms:  # before the margin, which reads the best of them
            evidence = on_harms(evidence)
        no_harms = which_harms and bool(evidence) and not speaks_of_harm([e.span.text for e in evidence])
        if no_harms:
            notes.append("the question asks which harms, and no evidence sentence reports any")
        if evidence:  # the margin is on the embedding scale, so it comes before any LLM judgement
            floor = max(e.relevance for e in evidence) - self.config.relevance_margin
            keep = self.config.min_evidence  # a very strong best sentence must not leave the rest thin
            evidence = [e for i, e in enumerate(evidence) if e.relevance >= floor or i < keep]
            evidence = self._on_the_lead_topic(state["standalone"], evidence, docs, covered, notes)
        judge = state["mode"] == "generate" and self.config.judge_top > 0 and not state.get("llm_failed")
        if judge and evidence:
            evidence, note = self._judge_relevance(state["standalone"], evidence)
            notes.append(note)
        # what the evidence that is left covers: two abstracts that each cover one concept cover both only
        # when both keep evidence
        # evidence emptied by the in-passing filter: what the relevant abstracts mention is still mentioned (the
        # abstain reason says why none was kept)
        not_covered = covered.missing(evidence or relevant, notes) if covered is not None else []
        not_covered += [HARMS] if no_harms else []
        concepts_by_pmid = covered.named_by_pmid() if covered is not None else {}
        best = f", best relevance {max(e.relevance for e in evidence):.2f}" if evidence else ""
        _emit({"event": "step", "node": "attribute", "detail": f"{len(evidence)} evidence sentences{best}"})
        return {
            "evidence": evidence,
            "cleared": len(relevant),
            "in_passing_by_pmid": covered.in_passing_by_pmid if covered is not None else {},
            "notes": notes,
            "not_covered": not_covered,
            "concepts_by_pmid": concepts_by_pmid,
            "unknown_concepts": unknown,
            "readings": readings,
            "sufficient": enough,
        }

    def _cited_in_other_people(
        self, state: AgentState, sentences: list[AnswerSentence], hits: list[SearchHit]
    ) -> tuple[str, str] | None:
        """(the group every cited abstract is in, the group the question names), when none mentions the asked
        one (`people_not_studied`, as the caveat reads it): "Is ketamine sedation safe in adults?" had said "yes"
        from the trial in children, with only a caveat under it."""
        cited = {c.pmid for s in sentences for c in s.citations}
        docs, _ = self._documents([h for h in hits if h.pmid in cited])
        follow_up = state["question"] if state["standalone"] != state["question"] else ""
        return people_not_studied(state["standalone"], list(docs.values()), follow_up)

    @staticmethod
    def _on_harms_of(evidence: list[Evidence], choose: Callable[..., list[Evidence]]) -> list[Evidence]:
        """For a question of which harms, the sentences on harms of the evidence's abstracts, whatever their
        similarity: the question's other words resemble the findings on efficacy ("How about the side effects?"
        after "Does metformin lower HbA1c ...?"). Not for "Is X safe?": its verdict reads the cues of efficacy,
        and more sentences on harms would let it read more of them ("no" from an IVF trial's null for "Is
        metformin safe in pregnancy?"). The evidence itself when its abstracts report no harms."""
        covering = {e.pmid for e in evidence}
        harms = choose(min_relevance=0.0, only=lambda text: speaks_of_harm([text]))
        return [e for e in harms if e.pmid in covering] or evidence

    def conclude(self, state: AgentState) -> AgentState:
        """The question's type and, for yes/no questions, the verdict from the answer-bearing evidence."""
        kind = self.asked_type(state["standalone"])
        model = self.verdict_model
        evidence = state.get("evidence", [])
        if kind == "yes/no" and state.get("not_covered"):  # the evidence answers another question
            return {"question_type": kind, "verdict": "insufficient", "verdict_probability": None}
        if kind != "yes/no" or model is None or not evidence:
            return {"question_type": kind}
        if named := lead_in_passing(state):  # its findings are on something else: none answers the question
            notes = [
                *state.get("notes", []),
                f"no bottom line: PMID {evidence[0].pmid} names {' and '.join(named)} only in passing",
            ]
            return {
                "question_type": kind,
                "verdict": "insufficient",
                "verdict_probability": None,
                "notes": notes,
            }
        read, weights = self._verdict_evidence(state["standalone"], evidence, state.get("hits", []))
        top = [(e.pmid, e.sentence_index, e.span.text) for e in read]
        texts = [text for _, _, text in top]
        mass = None
        asks_llm = not state.get("llm_failed") and (
            state["mode"] == "generate" or self.config.llm_verdict == "always"
        )
        llm_model = self.llm_verdict_model if asks_llm else None
        notes = list(state.get("notes", []))
        if llm_model is not None:
            mass = self._verdict_mass(state["standalone"], top)
            model = llm_model if mass is not None else model
            if mass is None:
                notes.append("the LLM's verdict call failed; verdict from the evidence cues only")
        elif asks_llm and not self._injected_llm:
            notes.append(
                f"verdict from the evidence cues only: no verdict head for llm {self.settings.llm.model} "
                "beats them (`biocite train verdict --llm` fits one)"
            )
        verdict, p, _ = model.predict(state["standalone"], texts, weights, mass)
        _emit({"event": "step", "node": "conclude", "detail": f"verdict {verdict} ({p:.2f})"})
        shown = [e.span.text for e in evidence]
        own_words = split_follow_up(state["standalone"])[0]  # a follow-up's, not its context's
        if asks_about_safety(own_words) and not speaks_of_harm([*texts, *shown]):
            notes.append(f"no bottom line on safety: the evidence (read as {verdict}) reports no harms")
            return {
                "question_type": kind,
                "verdict": "insufficient",
                "verdict_probability": None,
                "not_covered": [*state.get("not_covered", []), HARMS],
                "notes": notes,
            }
        return {
            "question_type": kind,
            "verdict": verdict,
            "verdict_probability": round(p, 4),
            "verdict_evidence": read,
            "notes": notes,
        }

    def generate(self, state: AgentState) -> AgentState:
        evidence = self._shown(state)
        listing = "\n".join(f"[{i}] {e.span.text}" for i, e in enumerate(evidence, start=1))
        messages = load_prompt("generate").messages(
            evidence=listing,
            question=state["standalone"],
            target_sentences=min(self.config.answer_sentences, self.config.max_sentences),
            max_words=self.config.max_words,
            bottom_line=_bottom_line_hint(state.get("verdict")),
        )
        notes = list(state.get("notes", []))
        try:
            text = self._stream_answer(messages, evidence, notes)
        except Exception as exc:  # noqa: BLE001 - the extractive answer is the fallback
            self._raise_if_config_error(exc)
            notes.append(f"generation failed ({type(exc).__name__}: {exc}); extractive fallback")
            return {"llm_failed": True, "notes": notes}
        drafts = parse_generation(text, len(evidence), {e.pmid for e in evidence})
        drafts, repeats = drop_repeats(drafts)
        if repeats:
            notes.append(f"dropped {repeats} repeated draft sentence(s)")
        drafts = self._within_limits(drafts, notes)
        if not drafts:
            notes.append("the generator's text had no parsable sentence; extractive fallback")
            return {"llm_failed": True, "notes": notes, "drafts": []}
        return {"drafts": drafts, "notes": notes}

    def _stream_answer(self, messages: list[BaseMessage], evidence: list[Evidence], notes: list[str]) -> str:
        """The generator's text, streamed as tokens; stopped (cancelling generation) once nothing more it
        writes could be kept: the limits of `_within_limits` are reached, or it loops."""
        chunks: list[str] = []
        written = checked = 0
        pmids = {e.pmid for e in evidence}
        limits = (self.config.max_words, self.config.max_sentences)
        stream = self.chat_model.stream(messages)
        try:
            for chunk in stream:
                token = chunk.content if isinstance(chunk.content, str) else ""
                chunks.append(token)
                _emit({"event": "token", "text": token})
                written += len(token)
                if written - checked < _CHECK_EVERY_CHARS:
                    continue
                checked = written
                if why := nothing_more_fits("".join(chunks), len(evidence), pmids, *limits):
                    notes.append(f"generation stopped early: {why}")
                    break
        finally:
            if close := getattr(stream, "close", None):  # a generator: cancels llama.cpp's generation
                close()
        return "".join(chunks)

    def _shown(self, state: AgentState) -> list[Evidence]:
        """The evidence the generator is shown, numbered [1], [2], ... in its prompt and in its drafts'
        citations: the sentences that report a finding (all when none does), best first, at most
        `max_evidence`; a sentence that points back ("This is therefore ...") comes with the sentence before it
        in its abstract (`with_antecedents`)."""
        shown = findings_or_all(state["evidence"])[: self.config.max_evidence]
        return with_antecedents(shown, _sentences_by_pmid(state))

    def verify(self, state: AgentState) -> AgentState:
        evidence = self._shown(state)
        notes = list(state.get("notes", []))
        counts = {"kept": 0, "re-cited": 0, "dropped": 0, "undetermined": 0}
        sentences = []
        aims = [states_aim(e.span.text) for e in evidence]  # once per answer, not once per draft
        try:
            for draft in state["drafts"]:
                sentence, outcome, undetermined = self._verify_one(draft, evidence, aims)
                counts[outcome] += 1
                counts["undetermined"] += undetermined
                if sentence:
                    sentences.append(sentence)
        except Exception as exc:  # noqa: BLE001
            self._raise_if_config_error(exc)
            notes.append(f"verification failed ({type(exc).__name__}: {exc}); extractive fallback")
            return {"llm_failed": True, "notes": notes}
        notes.append("verification: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
        if not sentences:
            notes.append("no generated sentence was supported by its evidence; extractive fallback")
            return {"llm_failed": True, "notes": notes, "sentences": []}
        _emit(
            {"event": "step", "node": "verify", "detail": f"{len(sentences)} of {len(state['drafts'])} kept"}
        )
        return {"sentences": sentences, "notes": notes, "answer_mode": "generate"}

    def polish(self, state: AgentState) -> AgentState:
        """The synthesis checks on the verified sentences (numbers in evidence, copies, uncited concepts,
        fragments)."""
        notes = list(state.get("notes", []))
        evidence = self._shown(state)
        sentences = polish(
            state.get("sentences", []), evidence, notes, self._uncited_check(state), _unseen_check(state)
        )
        if not sentences:
            notes.append("no generated sentence passed the synthesis checks; extractive fallback")
            return {"llm_failed": True, "notes": notes, "sentences": []}
        return {"sentences": sentences, "notes": notes}

    def _uncited_check(self, state: AgentState) -> Callable[[AnswerSentence], list[str]] | None:
        """For a generated sentence, the question's concepts it names that its cited abstracts do not cover
        (None when the question has no concepts to check)."""
        by_pmid = state.get("concepts_by_pmid") or {}
        concepts = self.question_concepts(state["standalone"]) if by_pmid else []
        if not concepts:
            return None

        def uncited(sentence: AnswerSentence) -> list[str]:
            cited = {text for c in sentence.citations for text in by_pmid.get(c.pmid, [])}
            return uncited_concepts(sentence.text, concepts, cited)

        return uncited

    def extractive(self, state: AgentState) -> AgentState:
        sentences = extractive_sentences(
            state["evidence"], self.config.max_sentences, self.config.max_words, _sentences_by_pmid(state)
        )
        notes = list(state.get("notes", []))
        if state["mode"] == "generate":
            notes.append("answer is the extractive fallback: verbatim evidence sentences")
        return {"sentences": sentences, "answer_mode": "extractive", "notes": notes}

    def abstain(self, state: AgentState) -> AgentState:
        if state.get("needs_context"):
            reason = (
                f"{state['question']!r} reads as a follow-up, but there is no earlier question to complete it "
                "with: ask the whole question (which treatment or condition, in whom)."
            )
        else:
            reason = self._not_enough_evidence(state)
        kind = self.asked_type(state["standalone"])
        update: AgentState = {"abstain_reason": reason, "sentences": [], "question_type": kind}
        if kind == "yes/no":
            update["verdict"], update["verdict_probability"] = "insufficient", None
        return update

    def _not_enough_evidence(self, state: AgentState) -> str:
        """Why the evidence found is not enough: what was searched, and which bar it missed."""
        if focus := state.get("focus"):
            return _not_in_named(focus, state)
        evidence = state.get("evidence", [])
        # a question with no content words searches itself again in round 2: said once
        queries = "; ".join(repr(q) for q in dict.fromkeys(state.get("queries", [])))
        bar = f"{self.config.min_relevance:.2f}"
        if evidence:
            found = (
                f"the best sentence scored {evidence[0].relevance:.2f} (needs {self.config.min_top_relevance:.2f}) "
                f"and {len(evidence)} cleared {bar} (needs {self.config.min_evidence})"
            )
        elif cleared := state.get("cleared", 0):  # all dropped by the coverage filter (`_naming_in_passing`)
            passing = passing_labels(state.get("in_passing_by_pmid") or {})
            named = ", ".join(repr(c) for c in passing) or "the key concepts"
            found = (
                f"{cleared} sentence{'s' if cleared > 1 else ''} cleared relevance {bar}, but none names "
                f"{named}, which the abstracts found mention only in passing"
            )
        else:
            found = f"no sentence cleared relevance {bar}"
        missing = state.get("unknown_concepts") or []
        if missing:
            # none of these concepts' words is in any indexed abstract (not only the ones found)
            found = "no indexed abstract mentions " + ", ".join(repr(c) for c in missing)
        return (
            f"Not enough evidence in the indexed abstracts: searched {queries} "
            f"({len(state.get('hits', []))} abstracts, {state.get('round', 0)} rounds); {found}."
        )

    def finalize(self, state: AgentState) -> AgentState:
        hits = state.get("hits", [])
        retrieved = {h.pmid for h in hits}
        notes = list(dict.fromkeys(state.get("notes", [])))  # a note repeated by each round, once
        sentences = state.get("sentences", [])
        if people := self._cited_in_other_people(state, sentences, hits):
            # the answer is about other people: no verdict, and the bottom line says whom no study mentions
            notes.append(f"every cited study is in {people[0]}: none mentions {people[1]}")
            not_covered = [*(state.get("not_covered") or []), people[1]]
            state = {**state, "verdict_probability": None, "not_covered": not_covered}
            state["verdict"] = "insufficient" if state.get("question_type") == "yes/no" else None
        missing = state.get("not_covered") or []
        passing = lead_in_passing(state) if state.get("verdict") == "insufficient" else []
        if sentences and (state.get("verdict") in ("yes", "no", "mixed") or missing or passing):
            verdict = state.get("verdict") or "insufficient"
            p = state.get("verdict_probability")
            # the bottom line quotes what the verdict read (a "no" had quoted a subgroup's benefit from the
            # first evidence sentences, not the null result it was read from); without a verdict, the evidence
            quoted = state.get("verdict_evidence") or state.get("evidence", [])
            line = bottom_line_sentence(
                verdict, quoted, not_covered=missing, probability=p, in_passing=passing
            )
            sentences = [line, *sentences]
        sentences = enforce_guarantees(
            sentences,
            retrieved,
            state.get("answer_mode", "extractive"),
            self.config.min_support,
            notes,
        )
        abstained = state.get("abstain_reason") is not None
        if not sentences and not abstained:
            abstained = True
            state = {
                **state,
                "abstain_reason": "No answer sentence survived verification against the evidence.",
            }
        answer = Answer(
            question=state["question"],
            sentences=sentences,
            abstained=abstained,
            abstain_reason=state.get("abstain_reason") if abstained else None,
            mode=state.get("answer_mode", state["mode"]),
            question_type=state.get("question_type"),
            verdict=("insufficient" if abstained and state.get("verdict") else state.get("verdict")),
            verdict_probability=None if abstained else state.get("verdict_probability"),
            not_covered=state.get("not_covered") or [],
            readings=state.get("readings") or [],
            trace=Trace(
                queries=state.get("queries", []),
                rounds=state.get("round", 0),
                retrieved=[h.pmid for h in hits],
                timings=state.get("timings", []),
                models=self.models(llm=state["mode"] == "generate"),
                notes=notes,
            ),
        )
        docs, _ = self._documents([h for h in hits if h.pmid in answer.cited_pmids])
        answer.references = self._references(answer, docs)
        standalone = state.get("standalone", state["question"])
        answer.caveats = evidence_caveats(
            standalone,
            [docs[p] for p in answer.cited_pmids if p in docs],
            self.question_concepts(standalone),
            follow_up=state["question"] if standalone != state["question"] else "",
        )
        turn = Turn(
            question=state["question"],
            standalone=state.get("standalone", state["question"]),
            answer=" ".join(s.text for s in sentences) or (answer.abstain_reason or ""),
            cited=answer.cited_pmids,
            focus=state.get("focus", []),
        )
        return {"answer": answer, "history": [turn]}

    # --- routing --------------------------------------------------------------------------------------

    def route_after_contextualize(self, state: AgentState) -> str:
        return "abstain" if state.get("needs_context") else "plan"

    def route_after_attribute(self, state: AgentState) -> str:
        enough = state.get("sufficient")
        if enough is None:
            enough = self.sufficient(state.get("evidence", []))
        if enough and state.get("evidence") and not state.get("unknown_concepts"):
            return "conclude"
        # the abstracts a question names are all there is to read: no second round
        done = bool(state.get("focus")) or state.get("round", 0) >= self.config.max_rounds
        return "abstain" if done else "plan"

    def route_after_conclude(self, state: AgentState) -> str:
        return "generate" if state["mode"] == "generate" and not state.get("llm_failed") else "extractive"

    def _verdict_evidence(
        self, question: str, evidence: list[Evidence], hits: list[SearchHit]
    ) -> tuple[list[Evidence], list[float]]:
        """The three most answer-bearing sentences as evidence, best first, and their P(answer-bearing):
        those of the abstract of the first evidence sentence (the best-ranked: relevance,
        P(answer-bearing) and its abstract's retrieval score), all its sentences scored, as the verdict model
        was trained (one source abstract). Without the findings model: the evidence sentences themselves.
        (It was the abstract of the most answer-bearing sentence: on TRAIN questions, the question's own
        abstract only half the time, as any abstract's conclusion reads answer-bearing;
        bench/agent_retrieval_weight.py.)"""
        lead = evidence[0]
        docs, sentences = self._documents([h for h in hits if h.pmid == lead.pmid])
        doc = docs.get(lead.pmid)
        # a funding or registration line closes many abstracts, where conclusions sit: it is never read
        own = [s for s in sentences.get(lead.pmid) or [] if doc and not is_metadata_sentence(doc, s)]
        findings = self.findings
        if findings is None or not own or lead.pmid not in docs:
            probs = np.array([e.answer if e.answer is not None else e.relevance for e in evidence])
            order, weights = top_evidence(probs)
            return [evidence[i] for i in order], weights
        scores = findings.score(question, own, [len(own)] * len(own), self.cache)
        order, _ = top_evidence(scores)
        lead_i = next((i for i, s in enumerate(own) if s.index == lead.sentence_index), None)
        if (
            lead_i is not None
            and lead_i not in order
            and self._names_more(question, own[lead_i].text, order, own)
        ):
            order = sorted([*order[:-1], lead_i], key=lambda i: -scores[i])
        read = score_sentences(question, [own[i] for i in order], self.cache, self.weights)
        terms = content_terms(question)
        quoted = [
            to_evidence(r.sentence, docs[lead.pmid], terms, r.relevance, float(scores[i]))
            for r, i in zip(read, order, strict=True)
        ]
        return quoted, [float(scores[i]) for i in order]

    def _names_more(self, question: str, lead: str, order: list[int], own: list[Sentence]) -> bool:
        """Whether the lead evidence sentence names an entity asked about (a key concept or the subject) that
        none of its abstract's most answer-bearing sentences names: then the verdict reads it too. A review's
        closing sentences are answer-bearing on other questions ("Does warfarin prevent stroke in atrial
        fibrillation?" was read from closing sentences on statins and ACE inhibitors, not the warfarin finding)."""
        entities = [c for c in self.question_concepts(question) if c.role in ("", "subject")]
        lead_terms, top = DocumentTerms(lead), [DocumentTerms(own[i].text) for i in order]
        return any(covers(c, lead_terms) and not any(covers(c, t) for t in top) for c in entities)

    def _verdict_mass(self, question: str, top: list[tuple[str, int, str]]) -> dict[str, float] | None:
        """The LLM's mass on yes/no/maybe for the verdict prompt; None when the call fails."""
        texts = reading_order(top)
        try:
            return answer_mass(self.chat_model, llm_messages(question, texts), LLM_WORDS)
        except Exception as exc:  # noqa: BLE001 - the cue-only verdict is the fallback
            self._raise_if_config_error(exc)
            return None

    def sufficient(self, evidence: list[Evidence]) -> bool:
        strong = [e for e in evidence if e.relevance >= self.config.min_relevance]
        return (
            len(strong) >= self.config.min_evidence
            and bool(strong)
            and max(e.relevance for e in strong) >= self.config.min_top_relevance
        )

    # --- helpers --------------------------------------------------------------------------------------

    def _complete(self, messages: list[BaseMessage]) -> str:
        """A short completion (query / follow-up rewriting): stop at the first line break."""
        try:
            result = self.chat_model.invoke(messages, stop=["\n"], max_tokens=60)
        except TypeError:
            result = self.chat_model.invoke(messages)
        return result.content if isinstance(result.content, str) else ""

    def _raise_if_config_error(self, exc: BaseException) -> None:
        if isinstance(exc, ModelError):
            raise exc
        if is_connection_error(exc):
            where = self.settings.llm.base_url or self.settings.llm.model
            raise ModelError(f"cannot reach the LLM endpoint {where}: {exc}") from None

    def _with_documents(self, hits: list[SearchHit]) -> list[SearchHit]:
        """The hits, each carrying its document and sentences: those the retriever did not attach are
        fetched here, once per question (later nodes read them from the hits)."""
        missing = [h.pmid for h in hits if h.document is None]
        if not missing:
            return hits
        store = self.retriever.documents
        found = store.get_many(missing)
        return [
            h.model_copy(update={"document": found[h.pmid], "sentences": store.sentences(h.pmid)})
            if h.document is None and h.pmid in found
            else h
            for h in hits
        ]

    def _documents(self, hits: list[SearchHit]) -> tuple[dict[str, Document], dict[str, list[Sentence]]]:
        """The hits' documents and sentences by PMID, in the order of the hits."""
        found = [h for h in self._with_documents(hits) if h.document is not None]
        return {h.pmid: h.document for h in found if h.document}, {h.pmid: h.sentences for h in found}

    def _cover(
        self,
        question: str,
        evidence: list[Evidence],
        docs: dict[str, Document],
        sentences: dict[str, list[Sentence]],
        notes: list[str],
    ) -> tuple[list[Evidence], Coverage | None, list[str], list[str]]:
        """Keep the evidence of the abstracts covering the most key concepts (of an abstract naming one only
        in passing, the sentences naming it); name the concepts the whole index never mentions (nothing can
        be said: the agent abstains) and how unseen question words were read in the evidence kept (also
        noted)."""
        df = self.doc_freqs
        if df is None or not evidence:
            return evidence, None, [], []
        concepts = self.question_concepts(question)
        if not concepts:
            return evidence, None, [], []
        terms = {p: DocumentTerms.of(docs[p]) for p in dict.fromkeys(e.pmid for e in evidence)}
        covered = coverage(concepts, terms)
        # Key concepts first, then the asked outcome: an abstract on the outcome alone substitutes nothing.
        # Among abstracts covering as many, those on the entity asked about (key concepts and the subject)
        # before those on the population alone: "Is CA19-9 useful in pancreatic cancer?" was answered from
        # pancreatic cancer abstracts that never mention CA19-9, with nothing said to be missing.
        # Then, where none covers the asked outcome, those on part of it ("muscle" of "muscle pain").
        parts = outcome_parts(concepts, covered, terms)
        rank = {
            p: (
                sum(not concepts[i].outcome for i in c),
                sum(concepts[i].role in ("", "subject") for i in c),
                len(c),
                *parts[p],
            )
            for p, c in covered.items()
        }
        most = max(rank.values())
        best = {p for p, r in rank.items() if r == most}
        union = set().union(*(covered[p] for p in best))
        readings = respelling_notes(concepts, union, [docs[p] for p in sorted(best)])
        notes.extend(readings)
        # Unknown to the index (abstain): none of the concept's specific words occurs in any abstract. A
        # concept whose rarest word is absent but whose other words are there ("hereditary transthyretin
        # V30M amyloidosis" vs "Val30Met") is only listed as not covered.
        unknown = [c.text for i, c in enumerate(concepts) if i not in union and never_indexed(c, df)]
        kept = [e for e in evidence if e.pmid in best]
        kept, passing = self._naming_in_passing(kept, concepts, covered, docs, sentences, notes)
        return kept, Coverage(concepts, covered, passing, terms), unknown, readings

    def _on_the_lead_topic(
        self,
        question: str,
        evidence: list[Evidence],
        docs: dict[str, Document],
        covered: Coverage | None,
        notes: list[str],
    ) -> list[Evidence]:
        """The evidence without the abstracts that lack a topic concept the lead abstract (the first evidence
        sentence's) names, unless they cover a key or topic concept the lead does not that is as rare in the index
        as the rarest they lack (`off_topic`; noted)."""
        bar, df = self.config.max_topic_df, self.doc_freqs
        if not evidence or bar <= 0 or df is None:
            return evidence
        topics = key_concepts(split_follow_up(question)[0], df, bar, bar, bar, bar)
        keys, known = (covered.concepts, covered.terms) if covered is not None else ([], {})
        lead = evidence[0].pmid
        terms = {
            p: known.get(p) or DocumentTerms.of(docs[p]) for p in dict.fromkeys(e.pmid for e in evidence)
        }
        dropped: set[str] = set()
        for pmid in [p for p in terms if p != lead]:
            if lacking := off_topic(topics, keys, terms[lead], terms[pmid], df):
                dropped.add(pmid)
                named = ", ".join(c.label for c in lacking)
                notes.append(
                    f"PMID {pmid} does not mention {named}, which the lead evidence (PMID {lead}) does"
                )
        return [e for e in evidence if e.pmid not in dropped]

    @staticmethod
    def _naming_in_passing(
        evidence: list[Evidence],
        concepts: list[Concept],
        covered: dict[str, set[int]],
        docs: dict[str, Document],
        sentences: dict[str, list[Sentence]],
        notes: list[str],
    ) -> tuple[list[Evidence], dict[str, list[str]]]:
        """Of an abstract naming a key concept or the subject only in passing, only the evidence sentences
        that name it: a raloxifene trial's results, "compared with tamoxifen" once, answered a tamoxifen
        question (noted, with what was dropped). Also, by PMID, the labels of the concepts that dropped
        sentences."""
        passing: dict[str, list[Concept]] = {}
        for p in dict.fromkeys(e.pmid for e in evidence):
            texts = [s.text for s in sentences[p]]
            passing[p] = [concepts[i] for i in in_passing(concepts, covered[p], docs[p], texts)]
        kept = [e for e in evidence if names_all(e.span.text, passing[e.pmid])]
        labels: dict[str, list[str]] = {}
        for pmid, named in passing.items():
            dropped = sum(e.pmid == pmid for e in evidence) - sum(e.pmid == pmid for e in kept)
            if named and dropped:
                notes.append(
                    f"PMID {pmid} names {', '.join(c.label for c in named)} only in passing: "
                    f"{dropped} of its evidence sentences that do not were dropped"
                )
                labels[pmid] = [c.label for c in named]
        return kept, labels

    def asks_anew(self, question: str, history: list[Turn]) -> bool:
        """Whether a short question with no pronoun and no "What about" / "And ..." opening asks a whole question
        of its own: of an entity the question before did not name (a key concept), and of an outcome. "Does
        smoking increase cancer risk?" after a question of ketamine sedation in children had been completed with
        it and abstained, the children and the sedation not covered; "Does atropine reduce vomiting?" after it
        still asks of ketamine sedation in children."""
        if not history or ASKS_AGAIN_ABOUT.match(question) or asked_outcome(question) is None:
            return False
        before = {c.label.casefold() for c in self.question_concepts(history[-1].standalone)}
        subjects = [c for c in self.question_concepts(question) if c.place == "subject"]
        return bool(subjects) and all(c.label.casefold() not in before for c in subjects)

    def question_concepts(self, question: str) -> list[Concept]:
        """The question's key concepts, asked outcome, setting and subject (agent/coverage.py); none without
        an index to count document frequencies in. A follow-up completed with its context asks its own words'
        concepts, and those of its context it does not replace (`carried_concepts`)."""
        df = self.doc_freqs
        if df is None:
            return []
        own, context = split_follow_up(question)
        carried = self.question_concepts(context) if context else []
        asks_again = bool(context and ASKS_AGAIN_ABOUT.match(own))
        harms = asks_of_harms(own)
        # "What about the long term?", "And at one year?": the question before, asked again over that time
        when = time_horizon(own) if context and not harms else None
        if when is not None:
            own, asks_again = without_time(own), True
        # "What about mortality?": the words after "What about" are what the follow-up asks of, a concept however
        # common (the bars keep a question's template words out; the follow-up has none but them). Not of harms:
        # "adverse events" would be "events".
        named = asks_again and not harms
        concepts = key_concepts(
            own,
            df,
            self.config.max_concept_df,
            1.0 if named else self.config.max_outcome_df,
            self.config.max_setting_df,
            1.0 if named else self.config.max_subject_df,
            subject_is_outcome=named and self.asks_of_another_outcome(own, carried),
        )
        if not context:
            return concepts
        # "What about hip replacement?" after "... after knee replacement?": in the knee's place
        if asks_again:
            concepts = in_place_of(concepts, carried)
        if when is not None and not concepts:
            return [when, *carried]
        refers_back = bool(PRONOUNS.search(own))
        return (
            ([when] if when is not None else [])
            + concepts
            + carried_concepts(
                concepts, carried, asks_again=asks_again, refers_back=refers_back, asks_of_harms=harms
            )
        )

    def asks_of_another_outcome(self, own: str, context: list[Concept]) -> bool:
        """Whether "What about X?" asks its question again of another outcome, X ("What about falls?" after "Does
        vitamin D prevent fractures?"), not of another entity ("What about calcium?"): X stands where the entity
        stands in either, and the aspect model reads which (class-balanced: its own decision, no threshold).
        So does a cost ("What about the cost?": `names_cost`). A disease X replaces what the concepts of the
        question before it (`context`) make it replace (`disease_replaces_outcome`)."""
        subject = asked_subject(own)
        words = subject.split() if subject else []
        if not subject or names_people(words) or names_a_drug(subject.casefold()):
            return False  # a drug is what is taken, never the outcome ("What about warfarin?")
        if names_cost(words):
            return True
        if names_disease(words):
            return disease_replaces_outcome(context)
        model = self.aspects
        return model is not None and model.outcome_probabilities([subject], self.cache)[0] > 0.5

    def asked_type(self, standalone: str) -> QuestionType:
        """The question's type; of "What about pregnant women?" or "What about falls?" completed with "Does
        vitamin D prevent fractures?", the type of the question it asks again of other people, another condition
        or another outcome, or another of a kind it named ("What about hip replacement?" after "... after knee
        replacement?"), or another entity ("What about Prozac?" after "Does Zoloft help depression?"): yes/no, not
        the factoid its "What" reads as. "How about the side effects?" asks which harms: its own type."""
        own, context = split_follow_up(standalone)
        over_a_time = context and time_horizon(own) is not None and not asks_of_harms(own)
        if over_a_time and not self.question_concepts(without_time(own)):
            return self.asked_type(context)  # "And at one year?": the question before, over a time
        if context and ASKS_AGAIN_ABOUT.match(own) and not asks_of_harms(own):
            # "What about heart failure?": a disease, too common in the index to be a concept alone; "What
            # about in adults?" (no chunk: "adults" is a generic word) the people
            subject = asked_subject(own)
            words = subject.split() if subject is not None else _WORD.findall(own)
            if names_disease_or_people(words):
                return self.asked_type(context)
            before = self.question_concepts(context)
            own_concepts = self.question_concepts(own)
            if (
                self.asks_of_another_outcome(own, before)
                or any(aspect(c) == "setting" for c in own_concepts)
                or any(kin_of(c, before) for c in own_concepts)  # "hip replacement" after "knee replacement"
                # another entity (the aspect model read no outcome), whether or not rare enough to be a concept
                # alone: "What about Prozac?" after "Does Zoloft help depression?", "What about calcium?" after
                # "Does vitamin D prevent fractures?"
                or (
                    subject is not None
                    and self.aspects is not None
                    and any(aspect(c) == "entity" for c in before)
                )
            ):
                return self.asked_type(context)
        return question_type(standalone)

    def _judge_relevance(self, question: str, evidence: list[Evidence]) -> tuple[list[Evidence], str]:
        """The LLM judge vetoes top evidence sentences it finds irrelevant (P(relevant) < agent.judge_veto).

        Relevance scores stay on the embedding scale the thresholds were calibrated on; the judge only removes,
        and never all of it: it vetoes about one in nine of a question's own conclusions (AUC 0.73,
        `bench/agent_relevance_judge.py`), and on held-out questions 151-180 it vetoed every sentence of two
        answerable questions ("p53 alteration ... is not a clinically useful predictor of local response" for
        a p53 question) after the relevance bars and the coverage check had passed them. Evidence about
        another entity is the coverage check's to remove.
        """
        prompt = load_prompt("relevance")
        vetoed: set[int] = set()
        undetermined = 0
        for i, item in enumerate(evidence[: self.config.judge_top]):
            try:
                p = self.judge(prompt.messages(question=question, sentence=item.span.text))
            except Exception as exc:  # noqa: BLE001
                self._raise_if_config_error(exc)
                return evidence, f"relevance judge failed ({type(exc).__name__}); embedding relevance kept"
            if p is None:
                undetermined += 1
            elif p < self.config.judge_veto:
                vetoed.add(i)
        kept = [e for i, e in enumerate(evidence) if i not in vetoed]
        judged = min(len(evidence), self.config.judge_top)
        note = (
            f"relevance judge: {judged} sentences judged, {len(vetoed)} vetoed, {undetermined} undetermined"
        )
        if not kept:
            return evidence, f"{note}; the veto would leave no evidence, so none is applied"
        return kept, note

    def _within_limits(self, drafts: list[DraftSentence], notes: list[str]) -> list[DraftSentence]:
        kept = within_limits(drafts, self.config.max_words, self.config.max_sentences)
        if len(kept) < len(drafts[: self.config.max_sentences]):
            notes.append(f"answer cut at {len(kept)} sentences to stay within {self.config.max_words} words")
        if len(drafts) > self.config.max_sentences:
            notes.append(f"answer cut to {self.config.max_sentences} sentences")
        return kept

    def _verify_one(
        self, draft: DraftSentence, evidence: list[Evidence], aims: list[bool]
    ) -> tuple[AnswerSentence | None, str, int]:
        """(sentence or None, "kept" | "re-cited" | "dropped", undetermined judgements). A sentence is judged
        against its abstracts' shown evidence sentences, without those stating a study's aim (`aims`, one flag
        per evidence sentence: `states_aim`): an aim shows no finding, yet the support model read "the study
        found that X" as supported by "the aim was to evaluate X"."""
        finding = not states_aim(draft.text)  # a sentence on what a study set out to do may quote its aim
        usable = [i for i in range(len(evidence)) if not (finding and aims[i])]
        by_pmid: dict[str, list[Evidence]] = {}
        for i in usable:
            by_pmid.setdefault(evidence[i].pmid, []).append(evidence[i])
        cited_items = [evidence[i - 1] for i in draft.evidence_ids if i - 1 in usable]
        cited = list(dict.fromkeys([e.pmid for e in cited_items] + [p for p in draft.pmids if p in by_pmid]))
        supported, undetermined = self._supported(draft.text, cited, by_pmid)
        outcome = "kept"
        if not supported:
            others = self._nearest_pmids(draft.text, [evidence[i] for i in usable], exclude=set(cited))
            supported, more = self._supported(draft.text, others, by_pmid)
            undetermined += more
            outcome = "re-cited"
        if not supported:
            return None, "dropped", undetermined
        supported.sort(key=lambda item: item[1], reverse=True)
        supported = supported[: self.config.max_citations_per_sentence]
        citations = []
        for pmid, _ in supported:
            own = [e for e in cited_items if e.pmid == pmid] or by_pmid[pmid]
            citations.append(Citation(pmid=pmid, evidence=own))
        support = round(max(p for _, p in supported), 4)
        return AnswerSentence(text=draft.text, citations=citations, support=support), outcome, undetermined

    @property
    def support_model(self) -> Any:
        """biocite's support model (core/support.py); trained once on first use."""
        if self._support_model is None:
            self._support_model = SupportModel.load(self.settings)
        return self._support_model

    def _supported(
        self, text: str, pmids: list[str], by_pmid: dict[str, list[Evidence]]
    ) -> tuple[list[tuple[str, float]], int]:
        if self._judge is None and self.config.verifier == "support" and pmids:
            passages = [" ".join(e.span.text for e in by_pmid[pmid]) for pmid in pmids]
            verdicts = self.support_model.check_many([(text, q) for q in passages])
            scored = [(pmid, v.probs["supports"]) for pmid, v in zip(pmids, verdicts, strict=True)]
            return [(p, s) for p, s in scored if s >= self.config.min_support], 0
        prompt = load_prompt("support")
        supported, undetermined = [], 0
        for pmid in pmids:
            quoted = " ".join(e.span.text for e in by_pmid[pmid])
            p = self.judge(prompt.messages(evidence=quoted, statement=text))
            if p is None:
                undetermined += 1  # undetermined is not support
            elif p >= self.config.min_support:
                supported.append((pmid, p))
        return supported, undetermined

    def _nearest_pmids(self, text: str, evidence: list[Evidence], exclude: set[str]) -> list[str]:
        candidates = [e for e in evidence if e.pmid not in exclude]
        if not candidates or self.config.recite_candidates <= 0:
            return []
        vectors = self.cache.encode([text, *[e.span.text for e in candidates]])
        order = sorted(range(len(candidates)), key=lambda i: -float(vectors[i + 1] @ vectors[0]))
        pmids = list(dict.fromkeys(candidates[i].pmid for i in order))
        return pmids[: self.config.recite_candidates]

    def _references(self, answer: Answer, docs: dict[str, Document]) -> list[Reference]:
        return [
            Reference(pmid=p, title=docs[p].title, year=docs[p].year, journal=docs[p].journal)
            for p in answer.cited_pmids
            if p in docs
        ]


_BOTTOM_LINES = {
    "yes": "Bottom line: yes, the cited studies support it.",
    "no": "Bottom line: no, the cited studies do not support it.",
    "mixed": "Bottom line: mixed, the cited studies are inconclusive or disagree.",
}
# Said when `records.hedged` (below LIKELY: records says why), as `Answer.verdict_shown` is.
_UNSURE_LINES = {
    "yes": "Bottom line: uncertain, leaning yes (probability {p:.2f}): the cited studies may support it.",
    "no": "Bottom line: uncertain, leaning no (probability {p:.2f}): the cited studies may not support it.",
    "mixed": "Bottom line: uncertain, the cited studies may be inconclusive or disagree (probability {p:.2f}).",
}


def _sentences_by_pmid(state: AgentState) -> dict[str, list[Sentence]]:
    """Each retrieved abstract's sentences, by PMID."""
    return {hit.pmid: hit.sentences for hit in state.get("hits", []) if hit.sentences}


def _unseen_check(state: AgentState) -> Callable[[AnswerSentence], list[str]] | None:
    """For a generated sentence, its content words that none of its cited abstracts (title and sentences) has;
    None when the abstracts are not at hand (a chat turn restored from a checkpoint)."""
    hits = {hit.pmid: hit for hit in state.get("hits", []) if hit.sentences}
    if not hits:
        return None
    terms = {
        pmid: content_terms(" ".join([hit.title, *(s.text for s in hit.sentences)]))
        for pmid, hit in hits.items()
    }

    def unseen(sentence: AnswerSentence) -> list[str]:
        if not sentence.citations or any(c.pmid not in terms for c in sentence.citations):
            return []  # no abstract at hand: nothing to check against
        return new_terms(sentence.text, set().union(*(terms[c.pmid] for c in sentence.citations)))

    return unseen


def lead_in_passing(state: AgentState) -> list[str]:
    """The key concepts the abstract of the first evidence sentence (the verdict's) names only in passing, when
    none of its evidence sentences left (those naming them) reads as a finding: a study of NOACs that lists
    apixaban once, in its methods, does not say whether apixaban is better than warfarin. A review whose one
    sentence naming warfarin is its finding on warfarin still answers a warfarin question. Without a findings
    model (P(answer-bearing) unknown) the verdict is read as before."""
    evidence = state.get("evidence") or []
    if not evidence:
        return []
    lead = [e for e in evidence if e.pmid == evidence[0].pmid]
    if any(e.answer is None or e.answer >= ANSWER_BEARING for e in lead):
        return []
    return (state.get("in_passing_by_pmid") or {}).get(evidence[0].pmid, [])


def _not_in_named(focus: list[str], state: AgentState) -> str:
    """Why the abstracts a question names give no answer: not indexed, or silent on what it asks."""
    read = [h.pmid for h in state.get("hits", [])]
    absent = ", ".join(p for p in focus if p not in read)
    if not read:
        return (
            f"PMID {absent}, named in the question, is not in the index: add the abstract (`biocite index add`) "
            "or ask without it."
        )
    passing = passing_labels(state.get("in_passing_by_pmid") or {})
    missing = state.get("not_covered") or state.get("unknown_concepts") or passing
    what = ", ".join(repr(c) for c in missing) if missing else "what the question asks"
    also = f" (PMID {absent} is not in the index)" if absent else ""
    return f"The abstracts named in the question (PMID {', '.join(read)}) do not mention {what}{also}."


def _bottom_line_hint(verdict: str | None) -> str:
    if verdict not in _BOTTOM_LINES:
        return ""
    return (
        ""  # a hint naming the verdict made the small model answer in one word; the bottom line is prepended
    )


def bottom_line_sentence(
    verdict: str,
    evidence: list[Evidence],
    max_citations: int = 2,
    not_covered: list[str] | None = None,
    probability: float | None = None,
    in_passing: list[str] | None = None,
) -> AnswerSentence:
    """The verdict as the answer's first sentence, quoting `evidence` (best first: the sentences the verdict
    read, else the answer's first evidence sentences), hedged below `LIKELY`; with concepts not covered, the
    sentence says the studies found do not mention them; with concepts the lead abstract names only in
    passing, that its findings are not about them."""
    by_pmid: dict[str, list[Evidence]] = {}
    for item in evidence[:3]:
        by_pmid.setdefault(item.pmid, []).append(item)
    citations = [Citation(pmid=p, evidence=items) for p, items in list(by_pmid.items())[:max_citations]]
    text = _BOTTOM_LINES.get(verdict, "")
    if hedged(verdict, probability):
        text = _UNSURE_LINES[verdict].format(p=probability)
    if in_passing:
        names = " or ".join(in_passing)
        text = f"Bottom line: not answered: the studies found name {names} only in passing; below is only what they report."
    if not_covered:
        names = " or ".join(not_covered)
        text = f"Bottom line: not answered: none of the studies found mentions {names}; below is only what they report."
    return AnswerSentence(text=text, citations=citations, kind="bottom_line")


def enforce_guarantees(
    sentences: list[AnswerSentence], retrieved: set[str], mode: str, min_support: float, notes: list[str]
) -> list[AnswerSentence]:
    """Drop citations to PMIDs not retrieved, then sentences left without a citation (in generate mode:
    without a verified one; the bottom line is the verdict model's, its probability is on the Answer)."""
    kept = []
    for sentence in sentences:
        citations = [c for c in sentence.citations if c.pmid in retrieved]
        if len(citations) < len(sentence.citations):
            notes.append(f"dropped a citation to a PMID that was not retrieved: {sentence.text[:60]!r}")
        if not citations:
            continue
        unverified = sentence.support is None or sentence.support < min_support
        if mode == "generate" and sentence.kind != "bottom_line" and unverified:
            notes.append(f"dropped an unverified sentence: {sentence.text[:60]!r}")
            continue
        kept.append(sentence.model_copy(update={"citations": citations}))
    return kept


def split_follow_up(standalone: str) -> tuple[str, str]:
    """A completed follow-up's own words and the question it completes ("" when it completes none)."""
    own, _, context = standalone.partition(CONTEXT_OPEN)
    return own, context[: -len(")")]


def whole_question(standalone: str) -> str:
    """The whole question a chain of completed follow-ups leans on: Q, of "What about adults? (context: And in
    children? (context: Q))"."""
    context = split_follow_up(standalone)[1]
    return whole_question(context) if context else standalone


def _searched(standalone: str) -> str:
    """What is searched for a question: a follow-up with its context, without the marker's word ("context" had
    become a search term of every completed follow-up)."""
    return standalone.replace(CONTEXT_OPEN, " (")


def expand_query(question: str, hits: list[SearchHit], earlier: list[str], extra_terms: int = 4) -> str:
    """A deterministic rewrite: the question's content words plus frequent title words of what was found."""
    words = tokenize(question, stem=False)
    counts: dict[str, int] = {}
    for hit in hits[:10]:
        for word in dict.fromkeys(tokenize(hit.title, stem=False)):
            if word not in words and len(word) > 3:
                counts[word] = counts.get(word, 0) + 1
    extra = [w for w, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if n >= 2][:extra_terms]
    query = " ".join(dict.fromkeys(words + extra)) or question
    return query if query not in earlier else f"{query} {' '.join(words[:2])}".strip()


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        line = re.sub(
            r"^(?:standalone question|query|rewritten question)\s*:\s*", "", line.strip(), flags=re.I
        )
        if line:
            return line[:300]
    return ""


def _timed(name: str, fn: Callable[[AgentState], AgentState]) -> Callable[[AgentState], AgentState]:
    def node(state: AgentState) -> AgentState:
        _emit({"event": "start", "node": name})
        start = time.perf_counter()
        update = fn(state)
        seconds = round(time.perf_counter() - start, 4)
        timings = [
            *state.get("timings", []),
            *update.get("timings", []),
            NodeTiming(node=name, seconds=seconds),
        ]
        return {**update, "timings": timings}

    node.__name__ = name
    return node


NODES = (
    "contextualize",
    "plan",
    "retrieve",
    "attribute",
    "conclude",
    "generate",
    "verify",
    "polish",
    "extractive",
    "abstain",
    "finalize",
)


def build_graph(agent: Agent) -> StateGraph:
    graph = StateGraph(AgentState)
    for name in NODES:
        graph.add_node(name, _timed(name, getattr(agent, name)))  # type: ignore[call-overload]
    graph.add_edge(START, "contextualize")
    graph.add_conditional_edges("contextualize", agent.route_after_contextualize, ["plan", "abstain"])
    graph.add_edge("plan", "retrieve")
    graph.add_edge("retrieve", "attribute")
    graph.add_conditional_edges("attribute", agent.route_after_attribute, ["conclude", "plan", "abstain"])
    graph.add_conditional_edges("conclude", agent.route_after_conclude, ["generate", "extractive"])
    graph.add_conditional_edges(
        "generate", lambda s: "extractive" if s.get("llm_failed") else "verify", ["verify", "extractive"]
    )
    graph.add_conditional_edges(
        "verify", lambda s: "extractive" if s.get("llm_failed") else "polish", ["polish", "extractive"]
    )
    graph.add_conditional_edges(
        "polish", lambda s: "extractive" if s.get("llm_failed") else "finalize", ["finalize", "extractive"]
    )
    graph.add_edge("extractive", "finalize")
    graph.add_edge("abstain", "finalize")
    graph.add_edge("finalize", END)
    return graph
