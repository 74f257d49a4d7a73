"""The answering graph with a fake index, a scripted LLM and an overlap judge: the hard guarantees."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from agent_fakes import ABSTRACTS, FakeRetriever, agent_settings, fake_model, overlap_judge
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage

from biocite.agent.checks import ASKS_AGAIN_ABOUT
from biocite.agent.coverage import DocumentFrequencies
from biocite.agent.graph import CONTEXT_OPEN, Agent, enforce_guarantees, make_checkpointer
from biocite.errors import InputError, ModelError
from biocite.records import AnswerSentence, Citation
from biocite.tokenize import tokenize

QUESTION = "Does metformin reduce body weight in type 2 diabetes?"


def make_agent(
    *responses: str, judge=overlap_judge, model=None, settings=None
) -> tuple[Agent, FakeRetriever]:
    retriever = FakeRetriever()
    agent = Agent(
        settings or agent_settings(),
        retriever=retriever,
        chat_model=model or fake_model(*responses),
        judge=judge,
    )
    return agent, retriever


def check_spans(answer, retriever: FakeRetriever) -> None:
    docs = retriever.documents.docs
    for sentence in answer.sentences:
        for citation in sentence.citations:
            for evidence in citation.evidence:
                assert evidence.pmid == citation.pmid
                abstract = docs[citation.pmid].abstract
                assert abstract[evidence.span.start : evidence.span.end] == evidence.span.text
                for phrase in evidence.phrases:
                    assert abstract[phrase.start : phrase.end] == phrase.text


def test_extractive_mode_quotes_evidence_and_cites_its_own_abstract() -> None:
    agent, retriever = make_agent()
    answer = agent.ask(QUESTION, mode="extractive")
    assert not answer.abstained and answer.mode == "extractive"
    assert answer.sentences
    docs = retriever.documents.docs
    for sentence in answer.sentences:
        assert len(sentence.citations) == 1
        assert sentence.text in docs[sentence.citations[0].pmid].abstract
    assert answer.sentences[0].citations[0].pmid in {"111", "444"}
    check_spans(answer, retriever)
    assert {t.node for t in answer.trace.timings} >= {"plan", "retrieve", "attribute", "extractive"}
    assert answer.trace.queries == [QUESTION]
    assert {r.pmid for r in answer.references} == set(answer.cited_pmids)


def test_phrases_share_content_with_the_question() -> None:
    agent, _ = make_agent()
    answer = agent.ask(QUESTION, mode="extractive")
    phrases = [p.text for s in answer.sentences for c in s.citations for e in c.evidence for p in e.phrases]
    assert any("metformin" in p.lower() or "weight" in p.lower() for p in phrases)


def test_generate_keeps_supported_sentences_and_never_cites_unretrieved_pmids() -> None:
    text = (
        "Metformin reduced body weight in adults with type 2 diabetes [1]. "
        "Metformin cures cancer in mice [99]. "
        "Unicorns prefer statins (PMID 987654). "
        "The mean weight loss was 2.1 kg over 12 months [2]."
    )
    agent, _ = make_agent(text)
    answer = agent.ask(QUESTION, mode="generate")
    assert not answer.abstained and answer.mode == "generate"
    retrieved = set(answer.trace.retrieved)
    texts = [s.text for s in answer.sentences]
    assert "Metformin cures cancer in mice." not in texts
    assert not any("Unicorns" in t for t in texts)
    assert any(t.startswith("Metformin reduced body weight") for t in texts)
    for sentence in answer.sentences:
        assert sentence.citations, "no kept sentence without a citation"
        assert sentence.support is not None and sentence.support >= agent.config.min_support
        assert all(c.pmid in retrieved for c in sentence.citations)
        assert 1 <= len(sentence.citations) <= agent.config.max_citations_per_sentence
    assert "987654" not in answer.cited_pmids
    assert any(note.startswith("verification:") for note in answer.trace.notes)


def test_a_generated_sentence_with_details_of_its_own_is_dropped() -> None:
    """Verified (most of its words are in the evidence), but six of its words are in no cited abstract: the
    polish step drops it and says which words (agent.synthesis.MAX_NEW_TERMS)."""
    invented = (
        "Metformin reduced body weight in adults with type 2 diabetes, with appetite suppression, gut hormones "
        "and microbiome changes [1]. "
    )
    agent, _ = make_agent(invented + "Metformin reduced body weight in adults with type 2 diabetes [1].")
    answer = agent.ask(QUESTION, mode="generate")
    assert answer.mode == "generate"
    assert [s.text for s in answer.sentences if s.kind != "bottom_line"] == [
        "Metformin reduced body weight in adults with type 2 diabetes."
    ]
    assert any("its citations have none of appetit, chang, gut" in n for n in answer.trace.notes)
    assert any(n.startswith("verification: 2 kept") for n in answer.trace.notes)


class CountingModel(FakeListChatModel):
    """Streams its response a character at a time and counts the characters the agent consumed."""

    consumed: int = 0

    def _stream(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        for chunk in super()._stream(*args, **kwargs):
            self.consumed += len(chunk.text)
            yield chunk


def test_a_looping_generator_is_stopped_with_the_same_answer() -> None:
    """The model loops on one sentence: generation stops after two repeats, and the answer is the one the
    whole text would have given (repeats are dropped anyway)."""
    sentence = "Metformin reduced body weight in adults with type 2 diabetes [1]. "
    whole, _ = make_agent(sentence + "Diarrhoea was frequent in the metformin group [2]. " + sentence)
    expected = whole.ask(QUESTION, mode="generate")
    assert expected.mode == "generate" and expected.sentences
    text = sentence + "Diarrhoea was frequent in the metformin group [2]. " + sentence * 40
    model = CountingModel(responses=[text])
    agent, _ = make_agent(model=model)
    answer = agent.ask(QUESTION, mode="generate")
    assert answer.mode == "generate" and not answer.abstained
    assert [s.text for s in answer.sentences] == [s.text for s in expected.sentences]
    assert "generation stopped early: the generator repeated itself 2 times in a row" in answer.trace.notes
    assert model.consumed < len(text) / 5  # the rest was never generated


def test_sentence_citing_the_wrong_abstract_is_recited_to_the_supporting_one() -> None:
    # [1] is the best evidence (metformin, PMID 111); the sentence is about statins (PMID 222, evidence [2]).
    agent, _ = make_agent("Statin therapy was associated with muscle pain in 10% of patients [1].")
    question = "Does metformin reduce body weight in diabetes, and does statin therapy cause muscle pain?"
    answer = agent.ask(question, mode="generate")
    assert not answer.abstained
    assert answer.mode == "generate", answer.trace.notes
    assert [c.pmid for c in answer.sentences[0].citations] == ["222"]
    assert any("1 re-cited" in note for note in answer.trace.notes)


def test_unsupported_generation_falls_back_to_extractive() -> None:
    agent, _ = make_agent("Metformin cures cancer [1].", judge=lambda messages: 0.01)
    answer = agent.ask(QUESTION, mode="generate")
    assert answer.mode == "extractive" and not answer.abstained
    assert any("extractive fallback" in note for note in answer.trace.notes)


def test_undetermined_judgements_never_count_as_support() -> None:
    agent, _ = make_agent("Metformin reduced body weight [1].", judge=lambda messages: None)
    answer = agent.ask(QUESTION, mode="generate")
    assert answer.mode == "extractive"
    assert any("undetermined" in note for note in answer.trace.notes)


class BrokenModel(FakeListChatModel):
    error: type[Exception] = RuntimeError

    def _call(self, *args, **kwargs):  # type: ignore[override]
        raise self.error("boom")

    def _stream(self, *args, **kwargs):  # type: ignore[override]
        raise self.error("boom")


def test_llm_error_falls_back_to_extractive_and_says_so() -> None:
    agent, _ = make_agent(model=BrokenModel(responses=["x"]))
    answer = agent.ask(QUESTION, mode="generate")
    assert answer.mode == "extractive" and answer.sentences
    assert any("generation failed (RuntimeError" in note for note in answer.trace.notes)


def test_unreachable_endpoint_is_a_clear_model_error() -> None:
    agent, _ = make_agent(model=BrokenModel(responses=["x"], error=ConnectionError))
    with pytest.raises(ModelError, match="cannot reach the LLM endpoint"):
        agent.ask(QUESTION, mode="generate")


def test_unanswerable_question_abstains_after_the_rounds_naming_the_queries() -> None:
    agent, retriever = make_agent()
    answer = agent.ask("What is the mating season of emperor penguins in Antarctica?", mode="extractive")
    assert answer.abstained and not answer.sentences and not answer.references
    assert answer.trace.rounds == agent.config.max_rounds
    assert len(answer.trace.queries) == 2 and len(retriever.queries) == 2
    assert "emperor penguins" in (answer.abstain_reason or "")
    # no content word to add: round 2 searches the question again, and the reason names it once
    answer = agent.ask("What is it?", mode="extractive")
    assert answer.abstained and answer.trace.queries == ["What is it?", "What is it?"]
    assert "searched 'What is it?' (" in (answer.abstain_reason or "")


def test_a_follow_up_with_no_earlier_question_abstains_saying_so_and_is_completed_in_a_thread() -> None:
    retriever = FakeRetriever()
    agent = Agent(agent_settings(), retriever=retriever, checkpointer=make_checkpointer())
    agent._loaded.add("doc_freqs")  # an index where "children" is a generic word: in half the abstracts
    agent._doc_freqs = DocumentFrequencies(Counter({"children": 500}), 1000)
    answer = agent.ask("What about in children?", mode="extractive")
    assert answer.abstained and answer.trace.rounds == 0 and retriever.queries == []
    assert "reads as a follow-up, but there is no earlier question" in (answer.abstain_reason or "")
    agent.ask(QUESTION, mode="extractive", thread_id="t")
    follow = agent.ask("What about in children?", mode="extractive", thread_id="t")
    assert "follow-up completed with the previous question" in follow.trace.notes
    assert "reads as a follow-up" not in (follow.abstain_reason or "")


def test_what_about_after_a_follow_up_asks_the_whole_question_again_of_something_else() -> None:
    """After "And in children?", "What about older adults?" means metformin and body weight in older adults,
    not in children and older adults; its "What" does not make the yes/no question a factoid."""
    agent = agent_with_rare_words()
    agent.ask(QUESTION, mode="extractive", thread_id="t")
    agent.ask("And in children?", mode="extractive", thread_id="t")
    again = agent.ask("What about older adults?", mode="extractive", thread_id="t")
    assert again.trace.queries[0] == f"What about older adults? ({QUESTION})"
    assert "asks the last whole question again, without the follow-up 'And in children?'" in again.trace.notes
    assert again.question_type == "yes/no"
    # a follow-up that refers back ("Was it ...?") keeps what the one before it added
    kept = agent.ask("Was it well tolerated?", mode="extractive", thread_id="t")
    assert kept.trace.queries[0] == f"Was it well tolerated? (What about older adults? ({QUESTION}))"
    # another aspect, not other people: not the yes/no question again (no "yes" read from body-weight findings)
    aspect = agent.ask("How about the body weight?", mode="extractive", thread_id="t")
    assert aspect.question_type == "open" and aspect.verdict is None


def test_a_question_of_four_common_words_in_a_chat_asks_of_the_question_before() -> None:
    """ "How long do patients stay in hospital?" after a question of laparoscopic adrenalectomy was answered
    from length-of-stay abstracts of anything: it names nothing of its own, only words common in the index."""
    agent = agent_with_rare_words()
    common = tokenize("long patients stay hospital", stem=True)
    agent._doc_freqs.counts.update({t: 500 for t in common})
    alone = agent.ask("How long do patients stay in hospital?", mode="extractive", thread_id="a")
    assert alone.trace.queries[0] == "How long do patients stay in hospital?"  # no question before it
    agent.ask(QUESTION, mode="extractive", thread_id="t")
    later = agent.ask("How long do patients stay in hospital?", mode="extractive", thread_id="t")
    assert later.trace.queries[0] == f"How long do patients stay in hospital? ({QUESTION})"
    # a question with a word of its own is asked alone
    own = agent.ask(
        "How long do patients stay in hospital after adrenalectomy?", mode="extractive", thread_id="t"
    )
    assert CONTEXT_OPEN not in own.trace.queries[0]


def test_a_short_whole_question_of_another_entity_in_a_chat_is_asked_alone() -> None:
    """ "Does smoking increase cancer risk?" after a question of ketamine sedation in children was completed with
    it (three words of its own) and abstained: the sedation and the children were not covered."""
    agent = agent_with_rare_words()
    agent.ask(QUESTION, mode="extractive", thread_id="t")
    alone = agent.ask("Does smoking cause cancer?", mode="extractive", thread_id="t")  # 3 words of its own
    assert alone.trace.queries[0] == "Does smoking cause cancer?"
    # of the entity asked before, it still asks in the question's setting
    agent.ask(QUESTION, mode="extractive", thread_id="v")
    again = agent.ask("Does metformin reduce appetite?", mode="extractive", thread_id="v")
    assert again.trace.queries[0] == f"Does metformin reduce appetite? ({QUESTION})"
    # and one that names no outcome is a follow-up, as before
    other = agent.ask("What about sitagliptin?", mode="extractive", thread_id="v")
    assert other.trace.queries[0] == f"What about sitagliptin? ({QUESTION})"


def test_a_time_horizon_asks_the_last_question_again_over_that_time() -> None:
    """ "What about the long term?" after "Does metformin reduce HbA1c in type 2 diabetes?" read "long term" as another
    outcome and dropped HbA1c; "in the long term" replaced the population. A time horizon replaces nothing: after
    "And in children?" it asks of metformin and body weight in children, over the long term, still yes/no, and
    says that no abstract speaks of the long term."""
    agent = agent_with_rare_words()
    agent.ask(QUESTION, mode="extractive", thread_id="t")
    agent.ask("And in children?", mode="extractive", thread_id="t")
    later = agent.ask("What about the long term?", mode="extractive", thread_id="t")
    assert later.trace.queries[0] == f"What about the long term? (And in children? ({QUESTION}))"
    keys = "key concepts: long term (time); children; metformin (subject); body weight (outcome)"
    assert keys in " ".join(later.trace.notes), later.trace.notes
    assert later.question_type == "yes/no" and "long term" in later.not_covered


def test_a_common_disease_after_what_about_asks_the_yes_no_question_again() -> None:
    """ "What about heart failure?" after "Do beta-blockers reduce mortality after myocardial infarction?" was a
    factoid: "heart failure", in a third of the abstracts, is no concept alone, so nothing read it as a condition."""
    agent = Agent(agent_settings(), retriever=FakeRetriever(), checkpointer=make_checkpointer())
    agent._loaded.add("doc_freqs")
    agent._doc_freqs = DocumentFrequencies(
        Counter({t: 300 for t in tokenize("heart failure", stem=True)}), 1000
    )
    assert agent.asked_type(f"What about heart failure?{CONTEXT_OPEN}{QUESTION})") == "yes/no"
    # the people after "in", too common to be a concept: "What about in adults?" had been a factoid
    agent._doc_freqs = DocumentFrequencies(Counter({"adult": 300}), 1000)
    assert agent.asked_type(f"What about in adults?{CONTEXT_OPEN}{QUESTION})") == "yes/no"
    dose = agent.asked_type(f"What about its dose?{CONTEXT_OPEN}{QUESTION})")
    assert dose != "yes/no"  # an aspect of the drug asks a question of its own


def test_another_of_a_kind_after_what_about_asks_the_yes_no_question_again() -> None:
    """ "What about hip replacement?" after "Does tranexamic acid reduce bleeding after knee replacement?" was a
    factoid about hip replacement; it asks the yes/no question again of it."""
    agent = Agent(agent_settings(), retriever=FakeRetriever(), checkpointer=make_checkpointer())
    agent._loaded.add("doc_freqs")
    agent._doc_freqs = DocumentFrequencies(Counter(), 1000)
    before = "Does tranexamic acid reduce bleeding after knee replacement?"
    assert agent.asked_type(f"What about hip replacement?{CONTEXT_OPEN}{before})") == "yes/no"
    assert agent.asked_type(f"What about its dose?{CONTEXT_OPEN}{before})") != "yes/no"


class _AspectsReading:
    """The aspect model's reading of every phrase as P(outcome) = p (the model itself is measured in
    bench/follow_up_aspects.py)."""

    def __init__(self, p: float) -> None:
        self.p = p

    def outcome_probabilities(self, phrases: list[str], cache: object) -> list[float]:
        return [self.p] * len(phrases)


def test_another_entity_after_what_about_asks_the_yes_no_question_again() -> None:
    """ "What about Prozac?" after "Does Zoloft help depression in the elderly?" asked of Prozac in the elderly,
    but as a factoid, with no verdict; so did "What about calcium?" after a vitamin D question."""
    agent = Agent(agent_settings(), retriever=FakeRetriever(), checkpointer=make_checkpointer())
    agent._loaded.update({"doc_freqs", "aspects"})
    agent._doc_freqs = DocumentFrequencies(
        Counter({"calcium": 400}), 1000
    )  # too common to be a concept alone
    before = "Does Zoloft help depression in the elderly?"
    agent._aspects = _AspectsReading(0.2)  # type: ignore[assignment]  # read as an entity
    assert agent.asked_type(f"What about Prozac?{CONTEXT_OPEN}{before})") == "yes/no"
    assert (
        agent.asked_type(f"What about calcium?{CONTEXT_OPEN}Does vitamin D prevent fractures?)") == "yes/no"
    )
    assert agent.asked_type(f"What about its dose?{CONTEXT_OPEN}{before})") != "yes/no"  # an aspect of it
    # "And Prozac?" asks again as "What about Prozac?" does; "And is it safe?" asks a question of its own
    assert agent.asked_type(f"And Prozac?{CONTEXT_OPEN}{before})") == "yes/no"
    assert ASKS_AGAIN_ABOUT.match("And Prozac?") and not ASKS_AGAIN_ABOUT.match("And is it safe?")
    agent._aspects = (
        None  # no model: what the phrase names is not known, and the follow-up keeps its own type
    )
    assert agent.asked_type(f"What about Prozac?{CONTEXT_OPEN}{before})") != "yes/no"


def agent_with_rare_words() -> Agent:
    """An agent on the fake abstracts counted among 1,000 others: their words are rare, not absent."""
    agent = Agent(agent_settings(), retriever=FakeRetriever(), checkpointer=make_checkpointer())
    agent._loaded.add("doc_freqs")
    texts = [tokenize(f"{title} {abstract}", stem=True) for title, abstract in ABSTRACTS.values()]
    agent._doc_freqs = DocumentFrequencies.from_token_lists([*texts, *[["filler"]] * 1000])
    return agent


def test_a_follow_up_asks_the_concepts_of_its_context_it_does_not_replace() -> None:
    """ "What about older adults?" after a metformin question asks of metformin in older adults: the vitamin D trial
    in older adults answered it; now older adults are not covered, and the metformin findings are all there is."""
    agent = agent_with_rare_words()
    agent.ask(QUESTION, mode="extractive", thread_id="t")
    again = agent.ask("What about older adults?", mode="extractive", thread_id="t")
    assert again.not_covered == ["older adults"] and "333" not in again.cited_pmids
    assert "key concepts: older adults (subject); metformin (subject); body weight (outcome)" in " ".join(
        again.trace.notes
    )


def test_a_follow_up_asking_of_side_effects_is_answered_from_sentences_on_harms_of_the_same_drug() -> None:
    """ "How about the side effects?" after "Does metformin lower HbA1c in type 2 diabetes?" was answered with
    efficacy findings on other drugs: it names no concept, so nothing of its context was carried, and no
    sentence had to speak of harms. It asks of metformin's harms in type 2 diabetes now."""
    agent = agent_with_rare_words()
    agent.ask(QUESTION, mode="extractive", thread_id="t")
    harms = agent.ask("How about the side effects?", mode="extractive", thread_id="t")
    quoted = [e.span.text for s in harms.sentences for c in s.citations for e in c.evidence]
    assert quoted == ["Gastrointestinal adverse events were the most common."], quoted
    assert "key concepts: metformin (subject); type 2 diabetes (setting)" in " ".join(harms.trace.notes)


def test_a_question_naming_a_pmid_is_answered_from_that_abstract_alone() -> None:
    agent, retriever = make_agent()
    answer = agent.ask("What did PMID 444 find about body weight?", mode="extractive")
    assert not answer.abstained and answer.cited_pmids == ["444"] and retriever.queries == []
    assert answer.trace.retrieved == ["444"] and answer.trace.rounds == 1
    assert "the question names PMID 444: answered from that abstract alone" in answer.trace.notes
    check_spans(answer, retriever)
    # "PMID 444" is no concept to cover, and no sentence needs to resemble a question with no content words
    assert not answer.not_covered
    assert not agent.ask("What did PMID 333 find?", mode="extractive").abstained
    unknown = agent.ask("What did PMID 999 find about body weight?", mode="extractive")
    assert unknown.abstained and unknown.trace.rounds == 1
    assert "PMID 999, named in the question, is not in the index" in (unknown.abstain_reason or "")


def test_a_follow_up_on_a_named_pmid_reads_that_abstract_and_a_new_question_does_not() -> None:
    retriever = FakeRetriever()
    agent = Agent(agent_settings(), retriever=retriever, checkpointer=make_checkpointer())
    agent.ask("What did PMID 444 find about body weight?", mode="extractive", thread_id="t")
    follow = agent.ask("Was it well tolerated?", mode="extractive", thread_id="t")
    assert follow.trace.retrieved == ["444"] and retriever.queries == []
    assert "a follow-up on PMID 444: answered from that abstract alone" in follow.trace.notes
    fresh = agent.ask(
        "Does vitamin D supplementation reduce hip fractures in older adults?",
        mode="extractive",
        thread_id="t",
    )
    assert retriever.queries and not any("names PMID" in note for note in fresh.trace.notes)


def test_thin_evidence_triggers_a_second_round_with_a_rewritten_query() -> None:
    # generate mode: the first LLM call rewrites the query; the question alone finds only weak evidence.
    settings = agent_settings("agent.min_top_relevance=0.95")
    agent, retriever = make_agent("vitamin D hip fractures older adults", settings=settings)
    answer = agent.ask("Vitamin D and hip fractures?", mode="generate")
    assert answer.trace.rounds == 2
    assert answer.trace.queries[1] == "vitamin D hip fractures older adults"
    assert retriever.queries == answer.trace.queries


def test_word_and_sentence_limits_count_words_without_markers() -> None:
    settings = agent_settings("agent.max_words=12", "agent.max_sentences=3")
    text = (
        "Metformin reduced body weight in adults with type 2 diabetes [1]. "
        "The mean weight loss was 2.1 kg over 12 months [2]."
    )
    agent, _ = make_agent(text, settings=settings)
    answer = agent.ask(QUESTION, mode="generate")
    words = sum(len(s.text.split()) for s in answer.sentences)
    assert words <= 12 and len(answer.sentences) <= 3


@pytest.mark.parametrize(
    "question",
    [
        "",
        "   ",
        "x" * 2000,
        "¿Cuál es el tratamiento de la diabetes con metformina en los niños?",
        "二甲双胍能减轻体重吗",
    ],
)
def test_bad_questions_are_refused_with_a_clear_message(question: str) -> None:
    agent, _ = make_agent()
    with pytest.raises(InputError):
        agent.ask(question, mode="extractive")


def test_enforce_guarantees_drops_unretrieved_citations_and_unverified_sentences() -> None:
    sentences = [
        AnswerSentence(text="a", citations=[Citation(pmid="1"), Citation(pmid="9")], support=0.9),
        AnswerSentence(text="b", citations=[Citation(pmid="9")], support=0.9),
        AnswerSentence(text="c", citations=[Citation(pmid="1")], support=0.2),
        AnswerSentence(text="d", citations=[Citation(pmid="1")], support=None),
    ]
    notes: list[str] = []
    kept = enforce_guarantees(sentences, {"1"}, "generate", 0.5, notes)
    assert [s.text for s in kept] == ["a"] and [c.pmid for c in kept[0].citations] == ["1"]
    assert len(notes) == 4


def test_relevance_margin_keeps_only_evidence_close_to_the_best() -> None:
    wide, _ = make_agent()
    narrow, _ = make_agent(settings=agent_settings("agent.relevance_margin=0.05", "agent.min_evidence=1"))
    question = "Does metformin reduce body weight in diabetes, and does statin therapy cause muscle pain?"
    all_evidence = wide.ask(question, mode="extractive").sentences
    close = narrow.ask(question, mode="extractive").sentences
    assert 1 <= len(close) < len(all_evidence)
    best = close[0].citations[0].evidence[0].relevance
    assert all(s.citations[0].evidence[0].relevance >= best - 0.05 for s in close)
    # the top min_evidence sentences stay even outside the margin, so one strong sentence is not left alone
    kept = make_agent(settings=agent_settings("agent.relevance_margin=0.0", "agent.min_evidence=2"))[0]
    two = kept.ask(question, mode="extractive")
    assert not two.abstained and len(two.sentences) == 2


def test_llm_relevance_judge_vetoes_irrelevant_top_evidence() -> None:
    def judge(messages):
        text = str(messages[-1].content)
        if text.startswith("Question:"):  # the relevance prompt: veto the adolescents' abstract (PMID 444)
            return 0.05 if "adolescents" in text.split("Sentence:")[1] else 0.9
        return overlap_judge(messages)

    settings = agent_settings("agent.judge_top=5", "agent.min_evidence=1")
    text = (
        "Metformin reduced body weight in adults with type 2 diabetes [1]. Metformin lowered body weight [2]."
    )
    agent, _ = make_agent(text, judge=judge, settings=settings)
    answer = agent.ask(QUESTION, mode="generate")
    assert answer.mode == "generate" and answer.sentences
    assert "444" not in answer.cited_pmids
    assert any("vetoed" in note and "0 vetoed" not in note for note in answer.trace.notes)


def test_llm_relevance_judge_never_vetoes_all_the_evidence() -> None:
    """A 1.5B judge that rejects every sentence (it vetoed "p53 alteration ... is not a clinically useful
    predictor" for a p53 question) does not turn an answerable question into an abstention."""

    def judge(messages):
        text = str(messages[-1].content)
        return 0.01 if text.startswith("Question:") else overlap_judge(messages)

    text = "Metformin reduced body weight in adults with type 2 diabetes [1]."
    agent, _ = make_agent(text, judge=judge, settings=agent_settings("agent.judge_top=20"))
    answer = agent.ask(QUESTION, mode="generate")
    assert not answer.abstained and answer.sentences
    assert any("the veto would leave no evidence" in note for note in answer.trace.notes)


def test_trace_names_the_llm_only_when_one_was_used() -> None:
    agent, _ = make_agent("Metformin reduced body weight in adults with type 2 diabetes [1].")
    assert "llm" not in agent.ask(QUESTION, mode="extractive").trace.models
    assert agent.ask(QUESTION, mode="generate").trace.models["llm"] == "llamacpp:qwen1.5b"


AIM_ABSTRACTS = {
    **ABSTRACTS,
    "555": (
        "Metformin and body weight in obese adolescents",
        "The aim of this study was to evaluate whether metformin reduced body weight in obese adolescents. "
        "Metformin did not change body weight in obese adolescents over six months.",
    ),
}


def aim_fooled_judge(messages: list[BaseMessage]) -> float:
    """Reads any statement as supported by a study's aim, as the support model read "the study found that X"
    against "the aim of this study was to evaluate X" (held-out run 1-30); otherwise only a verbatim copy."""
    text = str(messages[-1].content)
    evidence = re.search(r"Evidence: (.*)", text)
    statement = re.search(r"Statement: (.*)", text)
    assert evidence and statement, text
    return float(
        "aim of this study" in evidence.group(1) or statement.group(1).rstrip(".") in evidence.group(1)
    )


def test_a_finding_is_never_judged_against_a_studys_aim() -> None:
    """A sentence stating a finding is judged against its abstract's evidence without the sentences stating the
    study's aim: an aim shows no finding. The invented finding is dropped although the judge would have taken
    the aim for support; a statement of the aim is judged with it (then dropped by the synthesis checks: it
    answers nothing)."""
    found = "The study found that metformin lowered body weight in obese adolescents (PMID 555). "
    aim = "The aim of this study was to evaluate whether metformin reduced body weight in obese adolescents (PMID 555). "
    kept = "Metformin reduced body weight in adults with type 2 diabetes (PMID 111)."
    agent = Agent(
        agent_settings(),
        retriever=FakeRetriever(AIM_ABSTRACTS),
        chat_model=fake_model(found + aim + kept),
        judge=aim_fooled_judge,
    )
    answer = agent.ask(QUESTION, mode="generate")
    assert answer.mode == "generate"
    assert [s.text for s in answer.sentences if s.kind != "bottom_line"] == [kept.replace(" (PMID 111)", "")]
    assert any(n.startswith("verification: 2 kept, 0 re-cited, 1 dropped") for n in answer.trace.notes)
    assert any("1 aims dropped" in n for n in answer.trace.notes)
