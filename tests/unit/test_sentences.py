"""Sentence splitting: exact offsets, biomedical abbreviations, repairs of false splits, sections."""

from __future__ import annotations

from pathlib import Path

import pytest

from biocite.index.readers import read_documents
from biocite.records import Document, Section, Sentence
from biocite.sentences import split_sentences

DATA = Path(__file__).resolve().parents[2] / "data"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"


def _texts(abstract: str, sections: list[Section] | None = None) -> list[str]:
    doc = Document(pmid="1", title="A title. With two sentences.", abstract=abstract, sections=sections or [])
    return [s.text for s in split_sentences(doc)]


def _check_offsets(doc: Document, sentences: list[Sentence]) -> None:
    assert [s.index for s in sentences] == list(range(len(sentences)))
    for s in sentences:
        assert s.pmid == doc.pmid
        assert doc.abstract[s.start : s.end] == s.text
        assert s.text and s.text == s.text.strip()
    for a, b in zip(sentences, sentences[1:], strict=False):
        assert a.end <= b.start
    # nothing but whitespace is left between or around sentences
    covered = "".join(doc.abstract[s.start : s.end] for s in sentences)
    assert covered.replace(" ", "") == doc.abstract.replace(" ", "")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Patients received NSAIDs, e.g. ibuprofen, i.e. a common drug. Outcomes improved.",
            ["Patients received NSAIDs, e.g. ibuprofen, i.e. a common drug.", "Outcomes improved."],
        ),
        (
            "Drug A vs. drug B was compared. The difference was significant (P<.05). Harms were rare.",
            [
                "Drug A vs. drug B was compared.",
                "The difference was significant (P<.05).",
                "Harms were rare.",
            ],
        ),
        (
            "The odds ratio was 2.1 (95% CI 1.2-3.4; P = .01). No other factor was associated.",
            ["The odds ratio was 2.1 (95% CI 1.2-3.4; P = .01).", "No other factor was associated."],
        ),
        (
            "Smith et al. reported this in 2001. See Fig. 2 for details. Mean age was 54.3 years.",
            ["Smith et al. reported this in 2001.", "See Fig. 2 for details.", "Mean age was 54.3 years."],
        ),
        (
            "Cells were cultured for 48 h. The number of apoptotic cells rose. Is it causal? We think so!",
            [
                "Cells were cultured for 48 h.",
                "The number of apoptotic cells rose.",
                "Is it causal?",
                "We think so!",
            ],
        ),
    ],
)
def test_biomedical_abbreviations(text: str, expected: list[str]) -> None:
    assert _texts(text) == expected


def test_repairs_of_false_splits() -> None:
    # ".." at the end: no lone "." sentence
    assert _texts("The gene was mapped to 6p21. The family was studied..") == [
        "The gene was mapped to 6p21.",
        "The family was studied..",
    ]
    # pysbd splits after "Staph." and "mEq."; a plain lowercase word does not start a sentence
    assert _texts("Infection by Staph. aureus was common. Serum levels were 10 mEq. per liter.") == [
        "Infection by Staph. aureus was common.",
        "Serum levels were 10 mEq. per liter.",
    ]
    # enumerations: "(Arm | 2)" is no boundary, the text before it does not end a sentence
    assert _texts(
        "Responses were seen in 8/10 (Arm 1) and 3/20 (Arm 2) patients. Median follow-up was 2 y."
    ) == [
        "Responses were seen in 8/10 (Arm 1) and 3/20 (Arm 2) patients.",
        "Median follow-up was 2 y.",
    ]


def test_lowercase_gene_names_still_start_sentences() -> None:
    assert _texts("Tumours were sequenced. p53 was mutated in 40%. mRNA levels fell.") == [
        "Tumours were sequenced.",
        "p53 was mutated in 40%.",
        "mRNA levels fell.",
    ]


def test_section_boundaries_are_sentence_boundaries() -> None:
    parts = ["Aim of the study", "We enrolled 40 patients (mean age 54.3 yr) vs. 40 controls", "It worked."]
    abstract = " ".join(parts)
    sections, pos = [], 0
    for label, part in zip(["OBJECTIVE", "METHODS", "RESULTS"], parts, strict=True):
        sections.append(Section(label=label, start=pos, end=pos + len(part)))
        pos += len(part) + 1
    assert len(_texts(abstract)) < 3  # without sections these parts run together
    assert _texts(abstract, sections) == parts


def test_structured_fixture_and_title_excluded() -> None:
    doc = read_documents([FIXTURES / "medline2016.xml"])["9000001"]
    sentences = split_sentences(doc)
    _check_offsets(doc, sentences)
    assert [s.text for s in sentences] == [
        "Infection by S. aureus is common, e.g. in wounds.",
        "We enrolled 40 patients (mean age 54.3 yr) vs. 40 controls.",
        "The odds ratio was 2.1 (95% CI 1.2-3.4; P<.05).",
        "CO2 rose.",
        "Infection raises CO2.",
    ]
    starts = {s.start for s in sentences}
    assert all(section.start in starts for section in doc.sections)


def test_empty_and_whitespace() -> None:
    assert split_sentences(Document(pmid="1", title="Only a title.")) == []
    assert _texts("One sentence without a final period") == ["One sentence without a final period"]


@pytest.fixture(scope="module")
def corpus() -> list[Document]:
    return list(read_documents([DATA / "corpus" / "abstracts.jsonl", DATA / "pubmed_xml"]).values())


def test_offsets_round_trip_on_corpus_sample(corpus: list[Document]) -> None:
    sample = corpus[:: max(1, len(corpus) // 120)]  # ~120 abstracts spread over the corpus
    sample += [d for d in corpus if d.sections]
    for doc in sample:
        _check_offsets(doc, split_sentences(doc))


@pytest.mark.slow
def test_offsets_round_trip_on_every_corpus_abstract(corpus: list[Document]) -> None:
    total = 0
    for doc in corpus:
        sentences = split_sentences(doc)
        _check_offsets(doc, sentences)
        starts = {s.start for s in sentences}
        assert all(
            section.start in starts for section in doc.sections if doc.abstract[section.start :].strip()
        )
        total += len(sentences)
    assert total > 8 * len(corpus)  # abstracts average ~9-10 sentences; a splitter that gives up fails here
