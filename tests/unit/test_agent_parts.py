"""Parsing of the generator's citations, input checks, evidence spans, the extractive answer, chat memory."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import pytest
from agent_fakes import ABSTRACTS, FakeRetriever, HashEmbedder, agent_settings, fake_model, overlap_judge

from biocite.agent.checks import check_question, looks_english, named_pmids
from biocite.agent.evidence import (
    VectorCache,
    clause_spans,
    content_terms,
    contributory_phrases,
    relative_scores,
    select_evidence,
    with_antecedents,
)
from biocite.agent.extractive import extractive_sentences
from biocite.agent.graph import Agent, expand_query, make_checkpointer
from biocite.citations import DraftSentence, count_words, drop_repeats, nothing_more_fits, parse_generation
from biocite.errors import InputError
from biocite.records import Document, Evidence, SearchHit, Section, Sentence, Span
from biocite.sentences import refers_back


def test_parse_generation_reads_marker_styles_and_moves_trailing_markers() -> None:
    text = (
        "Answer: Smoking raises risk [1][2]. Survival fell (HR 1.2, p<0.05).[3] "
        "Statins help (PMID: 555) and [7]. Both [1-2]. Patients (12) improved [evidence 2]."
    )
    drafts = parse_generation(text, 3, {"555"})
    assert [d.text for d in drafts] == [
        "Smoking raises risk.",
        "Survival fell (HR 1.2, p<0.05).",
        "Statins help.",
        "Both.",
        "Patients (12) improved.",
    ]
    assert [d.evidence_ids for d in drafts] == [[1, 2], [3], [], [1, 2], [2]]
    assert drafts[2].pmids == ["555"] and drafts[2].invalid == ["7"]


def test_parse_generation_drops_words_that_only_pointed_at_a_marker() -> None:
    text = (
        "Mortality fell, as evidenced by [1]. Bleeding was rare according to [2][3]. "
        "Doses were adjusted in patients with renal failure [1]. Results (see [2]) were consistent."
    )
    assert [d.text for d in parse_generation(text, 3, set())] == [
        "Mortality fell.",
        "Bleeding was rare.",
        "Doses were adjusted in patients with renal failure.",
        "Results were consistent.",
    ]


def test_a_marker_standing_for_the_authors_leaves_no_gap() -> None:
    """Held-out generate run 61-90 kept "The study by shows that lunar phases influence the time of delivery." and
    "However, shows that Ki-67 values differ ..." once their markers were cut."""
    text = (
        "The study by [1] shows that lunar phases influence delivery. However, [2] shows that Ki-67 values differ. "
        "Results from [1] suggest a benefit. A review of [2] trials found none."
    )
    assert [d.text for d in parse_generation(text, 3, set())] == [
        "The study shows that lunar phases influence delivery.",
        "However, a study shows that Ki-67 values differ.",
        "Results suggest a benefit.",
        "A review of trials found none.",
    ]
    assert [d.evidence_ids for d in parse_generation(text, 3, set())] == [[1], [2], [1], [2]]
    # a text that opens with a marker: markers lead their sentences
    assert [d.text for d in parse_generation("[3] found that pressure was lower.", 3, set())] == [
        "A study found that pressure was lower."
    ]


def test_count_words_ignores_markers() -> None:
    assert count_words("Smoking raises the risk [1][2] of cancer [3].") == 6


def test_language_heuristic() -> None:
    assert looks_english("Does metformin reduce weight?")
    assert looks_english("BRCA1 breast cancer risk")
    assert looks_english("Is Guillain–Barré syndrome linked to Zika?")
    assert not looks_english("Quels sont les effets de la metformine sur le poids des patients?")
    assert not looks_english("Wie wirkt Metformin bei Diabetes und ist es sicher?")
    assert not looks_english("Метформин снижает вес?")


def test_check_question_normalises_space_and_names_the_limit() -> None:
    assert check_question("  Does  X help? ", 100) == "Does X help?"
    with pytest.raises(InputError, match="max_question_chars"):
        check_question("why " * 50, 100)
    with pytest.raises(InputError, match="no words"):
        check_question("???", 100)
    with pytest.raises(InputError, match="biocite show 12345"):
        check_question(" 12345 ", 100)


def test_named_pmids_are_read_as_the_study_and_dropped_in_brackets() -> None:
    assert named_pmids("What did PMID 29768149 find about asthma?") == (
        "What did the study find about asthma?",
        ["29768149"],
    )
    assert named_pmids("Does aspirin prevent stroke (PMID: 123)?") == (
        "Does aspirin prevent stroke?",
        ["123"],
    )
    assert named_pmids("In pmid 12 and PubMed ID 0034, or PMID 12 again?")[1] == ["12", "34"]
    assert named_pmids("Does aspirin prevent stroke in 2020?") == ("Does aspirin prevent stroke in 2020?", [])
    assert named_pmids("Do PMIDs 123, 456 and 789 agree?") == ("Do the studies agree?", ["123", "456", "789"])
    assert named_pmids("What did https://pubmed.ncbi.nlm.nih.gov/29768149/ find?") == (
        "What did the study find?",
        ["29768149"],
    )


def test_clause_spans_and_phrases_are_exact_slices() -> None:
    abstract = "Intro. In obese adolescents, metformin lowered body weight slightly; diarrhoea was frequent."
    start = abstract.index("In obese")
    sentence = Sentence(pmid="1", index=1, start=start, end=len(abstract), text=abstract[start:])
    spans = clause_spans(sentence)
    assert [sentence.text[a:b] for a, b in spans] == [
        "In obese adolescents",
        "metformin lowered body weight slightly",
        "diarrhoea was frequent",
    ]
    phrases = contributory_phrases(sentence, abstract, content_terms("Does metformin lower body weight?"))
    assert [p.text for p in phrases] == ["metformin lowered body weight slightly"]
    assert all(abstract[p.start : p.end] == p.text for p in phrases)


def test_select_evidence_thresholds_and_dedup() -> None:
    docs = {p: Document(pmid=p, title=t, abstract=a) for p, (t, a) in ABSTRACTS.items()}
    docs["555"] = Document(pmid="555", title="copy", abstract=ABSTRACTS["111"][1])  # a duplicate abstract
    retriever = FakeRetriever()
    sentences = {p: retriever.documents.sentences(p) if p != "555" else [] for p in docs}
    from agent_fakes import split_sentences

    sentences["555"] = split_sentences("555", docs["555"].abstract)
    cache = VectorCache(HashEmbedder())
    evidence = select_evidence("metformin body weight", docs, sentences, cache, per_doc=2, min_relevance=0.3)
    texts = [e.span.text for e in evidence]
    assert len(texts) == len(set(texts))
    assert all(e.relevance >= 0.3 for e in evidence)
    assert evidence == sorted(evidence, key=lambda e: -e.relevance)
    assert {e.pmid for e in evidence} <= {"111", "444", "555"}


def test_select_evidence_never_quotes_an_abstracts_metadata() -> None:
    """A keyword line names the question's words ("Medical Subject Headings (MeSH): ...") and was quoted as
    evidence; it and a FUNDING section are never chosen, however relevant they look."""
    abstract = (
        "Telephone counseling raised mammography screening adherence. "
        "Medical Subject Headings (MeSH): mammography screening, telephone counseling. "
        "Telephone counseling for mammography screening was funded by a grant."
    )
    funding = abstract.index("Telephone counseling for")
    doc = Document(
        pmid="9", abstract=abstract, sections=[Section(label="FUNDING", start=funding, end=len(abstract))]
    )
    from biocite.sentences import split_sentences as split_abstract

    evidence = select_evidence("telephone counseling mammography screening", {"9": doc},
                               {"9": split_abstract(doc)}, VectorCache(HashEmbedder()), per_doc=3,
                               min_relevance=0.0)  # fmt: skip
    assert [e.span.text for e in evidence] == ["Telephone counseling raised mammography screening adherence."]


def test_a_full_vector_cache_starts_again_without_losing_a_text_it_was_asked_for() -> None:
    """A long-running agent (the server) fills the cache; the call that overflows it mixes a cached text
    (the question) with new ones. The question was dropped by the clearing: KeyError, and the answer failed
    (found by bench/agent_answers.py at its ~170th question)."""
    embedder = HashEmbedder()
    cache = VectorCache(embedder, max_items=3)
    cache.encode(["question", "a", "b"])
    vectors = cache.encode(["question", "c"])  # 3 cached + 1 new > 3: cleared, both encoded again
    assert np.allclose(vectors, embedder.encode(["question", "c"]))
    assert np.allclose(cache.encode(["question"]), embedder.encode(["question"]))


def test_retrieval_score_of_the_abstract_orders_evidence_across_abstracts() -> None:
    """A sentence of the abstract retrieval put first leads over a slightly more question-like sentence of
    an abstract retrieval found weak; within the relevance bar, nothing is added or dropped."""
    retriever = FakeRetriever()
    docs = retriever.documents.docs
    sentences = {p: retriever.documents.sentences(p) for p in docs}
    select = lambda **kw: select_evidence(  # noqa: E731
        "metformin body weight diabetes", docs, sentences, VectorCache(HashEmbedder()), per_doc=2,
        min_relevance=0.0, **kw,
    )  # fmt: skip
    plain = select()
    runner_up = next(e.pmid for e in plain if e.pmid != plain[0].pmid)
    scores = {p: 0.1 for p in docs} | {runner_up: 1.0}
    weighted = select(retrieval_scores=scores, retrieval_weight=0.5)
    assert weighted[0].pmid == runner_up != plain[0].pmid
    assert sorted(e.span.text for e in weighted) == sorted(e.span.text for e in plain)
    assert select(retrieval_scores=scores, retrieval_weight=0.0) == plain


def test_relative_scores_put_the_best_hit_of_a_query_at_one() -> None:
    def hits(*scores: float) -> list[SearchHit]:
        return [SearchHit(pmid=str(i), title="t", score=s, rank=i) for i, s in enumerate(scores, start=1)]

    assert relative_scores(hits(0.8, 0.4, 0.2)) == {"1": 1.0, "2": 0.5, "3": 0.25}  # fusion: ratio
    assert relative_scores(hits(2.0, -1.0, -4.0)) == {"1": 1.0, "2": 0.5, "3": 0.0}  # logits: min-max
    assert relative_scores(hits(-1.0, -1.0)) == {"1": 1.0, "2": 1.0} and relative_scores([]) == {}


def test_extractive_sentences_respect_limits() -> None:
    retriever = FakeRetriever()
    docs = retriever.documents.docs
    sentences = {p: retriever.documents.sentences(p) for p in docs}
    evidence = select_evidence(
        "metformin body weight diabetes",
        docs,
        sentences,
        VectorCache(HashEmbedder()),
        per_doc=3,
        min_relevance=0.0,
    )
    out = extractive_sentences(evidence, max_sentences=2, max_words=30)
    assert 1 <= len(out) <= 2
    assert sum(count_words(s.text) for s in out) <= 30
    assert all(s.citations[0].evidence[0].span.text == s.text for s in out)


def test_an_extractive_sentence_drops_a_section_label_written_into_the_text() -> None:
    """478 corpus abstracts write "CONCLUSIONS: ..." inline; the answer reads without it, the quote keeps it."""
    text = "CONCLUSIONS: Statins raised the risk of myopathy."
    item = Evidence(pmid="9", sentence_index=4, span=Span(start=0, end=len(text), text=text), relevance=0.6)
    (sentence,) = extractive_sentences([item], max_sentences=3, max_words=100)
    assert sentence.text == "Statins raised the risk of myopathy."
    assert sentence.citations[0].evidence[0].span.text == text


def test_an_extractive_answer_quotes_a_studys_aim_only_when_nothing_else_is_left() -> None:
    """Held-out extractive answers quoted "The purpose of this study was to verify the efficacy of ..." (11 of 353
    sentences, 2026-12-05): an aim answers nothing, so it comes only when no other evidence sentence is left."""

    def item(pmid: str, text: str) -> Evidence:
        return Evidence(
            pmid=pmid, sentence_index=0, span=Span(start=0, end=len(text), text=text), relevance=0.6
        )

    aim = item(
        "1", "The purpose of this study was to verify the efficacy of quilting suture to prevent seroma."
    )
    finding = item("2", "Seroma formed in 2 of 21 patients after quilting suture.")
    assert [s.text for s in extractive_sentences([aim, finding], 3, 100)] == [finding.span.text]
    assert [s.text for s in extractive_sentences([aim], 3, 100)] == [aim.span.text]
    # a call for more research reports nothing either, although the findings model reads it as answer-bearing
    call = item("3", "Prospective studies are needed in sub-Saharan African populations.")
    call = call.model_copy(update={"answer": 0.9})
    assert [s.text for s in extractive_sentences([call, finding], 3, 100)] == [finding.span.text]
    assert [s.text for s in extractive_sentences([call], 3, 100)] == [call.span.text]


def _one_abstract(
    pmid: str, abstract: list[str]
) -> tuple[dict[str, list[Sentence]], Callable[[int], Evidence]]:
    """An abstract given as its sentences: (its sentences by PMID, a maker of the evidence of sentence i)."""
    starts = [sum(len(t) + 1 for t in abstract[:i]) for i in range(len(abstract))]
    sentences = [Sentence(pmid=pmid, index=i, start=starts[i], end=starts[i] + len(t), text=t)
                 for i, t in enumerate(abstract)]  # fmt: skip

    def item(index: int) -> Evidence:
        s = sentences[index]
        span = Span(start=s.start, end=s.end, text=s.text)
        return Evidence(pmid=pmid, sentence_index=index, span=span, relevance=0.6, answer=0.9)

    return {pmid: sentences}, item


def test_an_extractive_sentence_that_refers_back_is_quoted_with_the_sentence_before() -> None:
    """Asked "Are Japanese patients with gastric cancer different?" (2026-12-01), the extractive answer quoted
    "However, it does not appear to be useful for determining the prognosis ...": what "it" is (the body mass
    index) was in the abstract's sentence before. That sentence is quoted first; the cited evidence stays the
    chosen sentence. "It is concluded that" and "These findings" name their subject: quoted alone."""
    abstract = [
        "Patients were followed for five years.",
        "The body mass index is one of the prognostic factors of stage 2 gastric cancer.",
        "However, it does not appear to be useful for determining the prognosis of stage 4 disease.",
        "It is concluded that obesity does not worsen survival.",
    ]
    sentences, item = _one_abstract("7", abstract)

    quoted = extractive_sentences([item(2), item(3)], max_sentences=5, max_words=100, sentences=sentences)
    assert [s.text for s in quoted] == [f"{abstract[1]} {abstract[2]}", abstract[3]]
    assert [e.sentence_index for e in quoted[0].citations[0].evidence] == [2]
    # without the abstract's sentences (a chat follow-up from a checkpoint) the sentence is quoted alone
    assert extractive_sentences([item(2)], max_sentences=5, max_words=100)[0].text == abstract[2]
    # the sentence before, quoted already, is not quoted twice
    quoted = extractive_sentences([item(1), item(2)], max_sentences=5, max_words=100, sentences=sentences)
    assert [s.text for s in quoted] == [abstract[1], abstract[2]]


def test_the_generator_is_shown_the_sentence_an_evidence_sentence_points_back_to() -> None:
    """Asked "What genes are deleted in WAGR syndrome?" (2026-12-04), generate mode was shown only "This is
    therefore a rare case of an inherited WAGR deletion." and wrote it back; the genes (AN2, WT1) were in the
    sentence before. That sentence is now listed just before it (once), as evidence of the same abstract."""
    abstract = [
        "We studied one family.",
        "The mother carried a deletion including both the aniridia gene (AN2) and the Wilms tumor gene (WT1).",
        "This is therefore a rare case of an inherited WAGR deletion.",
        "Its detection needs cosmid probes.",
    ]
    sentences, item = _one_abstract("9", abstract)

    shown = with_antecedents([item(2), item(0)], sentences)
    assert [e.sentence_index for e in shown] == [1, 2, 0]
    assert shown[0].span.text == abstract[1] and shown[0].relevance == 0.6 and shown[0].answer is None
    # a sentence chosen already is not listed twice
    assert [e.sentence_index for e in with_antecedents([item(1), item(2)], sentences)] == [1, 2]
    assert [e.sentence_index for e in with_antecedents([item(3), item(2)], sentences)] == [3, 1, 2]
    # without the abstract's sentences the evidence is as chosen
    assert with_antecedents([item(2)], {}) == [item(2)]


@pytest.mark.parametrize(
    ("text", "refers"),
    [
        ("It was related significantly to symptoms of depression (r = .81).", True),
        ("However, its role in carcinogenesis needs to be explored further.", True),
        ("This may be a result of increased public awareness.", True),
        ("They were more likely to be readmitted.", True),
        ("It is concluded that preloading colloid prevents hypotension.", False),
        ("It is not clear whether screening helps.", False),
        ("These findings suggest that 5-FU impairs memory.", False),
        ("These results show that preconditioning occurs in the lung.", False),  # "results": a noun here
        ("This study shows no effect.", False),
        ("Italy had more cases.", False),
    ],
)
def test_a_sentence_refers_back_when_it_opens_on_a_pronoun(text: str, refers: bool) -> None:
    assert refers_back(text) is refers


def test_extractive_answers_quote_findings_when_there_are_some() -> None:
    """A methods sentence ("Patients with glaucoma were included.", P(answer-bearing) 0.27) was quoted after
    the findings; it is left out while a finding (or a result with a statistic) is there to quote, and kept
    when nothing else is."""

    def item(index: int, text: str, answer: float) -> Evidence:
        return Evidence(pmid="1", sentence_index=index, span=Span(start=0, end=len(text), text=text),
                        relevance=0.6, answer=answer)  # fmt: skip

    methods = item(0, "Patients with glaucoma were included.", 0.27)
    finding = item(1, "Steroid treatment raised intraocular pressure.", 0.90)
    aim = item(2, "We studied steroid-induced glaucoma.", 0.30)
    quoted = extractive_sentences([methods, finding, aim], max_sentences=5, max_words=100)
    assert [s.text for s in quoted] == [finding.span.text]
    quoted = extractive_sentences([methods, aim], max_sentences=5, max_words=100)
    assert [s.text for s in quoted] == [methods.span.text, aim.span.text]
    # a result with its effect size is a finding, whatever the model (taught on conclusions) says of it
    result = item(3, "Glaucoma was more frequent with steroids (OR 2.1, 95% CI 1.4 to 3.2).", 0.20)
    quoted = extractive_sentences([methods, result, finding], max_sentences=5, max_words=100)
    assert [s.text for s in quoted] == [result.span.text, finding.span.text]


def test_expand_query_adds_title_terms_found_twice() -> None:
    hits = FakeRetriever().search("metformin weight")
    query = expand_query("Is metformin useful?", hits, [])
    assert query.startswith("metformin useful") and "weight" in query


def test_chat_follow_up_uses_the_conversation() -> None:
    retriever = FakeRetriever()
    agent = Agent(
        agent_settings(),
        retriever=retriever,
        chat_model=fake_model("x"),
        judge=overlap_judge,
        checkpointer=make_checkpointer(),
    )
    first = agent.ask(
        "Does metformin reduce body weight in type 2 diabetes?", mode="extractive", thread_id="t1"
    )
    assert not first.abstained
    second = agent.ask("What about its adverse events?", mode="extractive", thread_id="t1")
    assert "metformin" in retriever.queries[-1].lower()
    # the previous question is searched, the marker's word is not ("context" had become a search term)
    assert not any("context" in q.lower() for q in retriever.queries), retriever.queries
    assert any("follow-up" in note for note in second.trace.notes)
    state = agent.graph.get_state({"configurable": {"thread_id": "t1"}}).values
    assert [t.question for t in state["history"]] == [first.question, second.question]
    # a new thread starts without memory
    agent.ask("What about its adverse events?", mode="extractive", thread_id="t2")
    assert "metformin" not in retriever.queries[-1].lower()


def test_chat_follow_up_rewritten_by_the_llm_in_generate_mode() -> None:
    retriever = FakeRetriever()
    model = fake_model(
        "Metformin reduced body weight in adults with type 2 diabetes [1].",
        "Does metformin cause gastrointestinal adverse events?\nextra line",
        "Gastrointestinal adverse events were the most common [1].",
    )
    agent = Agent(
        agent_settings(),
        retriever=retriever,
        chat_model=model,
        judge=overlap_judge,
        checkpointer=make_checkpointer(),
    )
    agent.ask("Does metformin reduce body weight in type 2 diabetes?", mode="generate", thread_id="t")
    second = agent.ask("And its side effects?", mode="generate", thread_id="t")
    assert retriever.queries[1] == "Does metformin cause gastrointestinal adverse events?"
    assert second.trace.queries[0] == retriever.queries[1]
    assert second.question == "And its side effects?"


def test_parse_generation_reads_leading_markers_when_the_text_opens_with_one() -> None:
    drafts = parse_generation("[2] Aspirin lowered stroke risk. [1][3] Bleeding was rare.", 3, set())
    assert [(d.text, d.evidence_ids) for d in drafts] == [
        ("Aspirin lowered stroke risk.", [2]),
        ("Bleeding was rare.", [1, 3]),
    ]


def test_drop_repeats_removes_looped_sentences_and_keeps_distinct_ones() -> None:
    drafts = [
        DraftSentence(text="As-needed budesonide-formoterol reduced severe exacerbations.", evidence_ids=[1]),
        DraftSentence(text="Budesonide-formoterol as needed reduced severe exacerbations.", evidence_ids=[2]),
        DraftSentence(text="Symptom control was inferior to maintenance therapy.", evidence_ids=[2]),
        DraftSentence(text="As-needed budesonide-formoterol reduced severe exacerbations.", evidence_ids=[3]),
    ]
    kept, dropped = drop_repeats(drafts)
    assert [d.text for d in kept] == [drafts[0].text, drafts[2].text]
    assert dropped == 2


def test_generation_can_stop_once_nothing_more_would_be_kept() -> None:
    """Finished sentences only (the last one may be cut off mid-word): a loop of repeats, the sentence limit
    or the word limit reached means whatever the model writes next is dropped anyway."""
    one = "Metformin reduced body weight [1]. "
    other = "Diarrhoea was frequent [2]. "
    fits = partial(nothing_more_fits, n_evidence=2, known_pmids=set(), max_words=12, max_sentences=3)
    assert fits(one + other + "Metformin redu") is None
    assert fits(one + other + one + "Metf") is None  # one repeat is not a loop yet
    assert fits(one + other + one + one + "Metf") == "the generator repeated itself 2 times in a row"
    assert fits(one + other + "Weight fell in obese adolescents too [2]. " + "More") == "3 sentences written"
    long = "Metformin reduced body weight by two kilograms over one year in adults [1]. "
    assert fits(long + "More") is None and fits(long + other + "More") == "12 words written"
