"""Corpus readers: PubMed XML (2016 and current DTD), JSONL, updates, bad input, streaming, shipped data."""

from __future__ import annotations

import gzip
import inspect
import shutil
import tracemalloc
from pathlib import Path

import psutil
import pytest

from biocite.errors import InputError
from biocite.index.readers import Deletion, ReadStats, iter_records, read_documents
from biocite.records import Document

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
DATA = Path(__file__).resolve().parents[2] / "data"


def _docs(records: list[Document | Deletion]) -> list[Document]:
    return [r for r in records if isinstance(r, Document)]


def _read(*paths: Path) -> tuple[list[Document | Deletion], ReadStats]:
    stats = ReadStats()
    return list(iter_records(list(paths), stats)), stats


# ------------------------------------------------------------------------------------------- XML fields


def test_structured_abstract_sections_and_offsets() -> None:
    records, _ = _read(FIXTURES / "medline2016.xml")
    doc = _docs(records)[0]
    assert doc.pmid == "9000001"
    assert doc.abstract == (
        "Infection by S. aureus is common, e.g. in wounds. "
        "We enrolled 40 patients (mean age 54.3 yr) vs. 40 controls. "
        "The odds ratio was 2.1 (95% CI 1.2-3.4; P<.05). CO2 rose. "
        "Infection raises CO2."
    )
    assert [s.label for s in doc.sections] == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    parts = [doc.abstract[s.start : s.end] for s in doc.sections]
    assert parts[0] == "Infection by S. aureus is common, e.g. in wounds."
    assert parts[1] == "We enrolled 40 patients (mean age 54.3 yr) vs. 40 controls."  # whitespace normalised
    assert parts[3] == "Infection raises CO2."
    assert " ".join(parts) == doc.abstract
    assert doc.sections[-1].end == len(doc.abstract)


def test_2016_fields() -> None:
    records, stats = _read(FIXTURES / "medline2016.xml")
    docs = {d.pmid: d for d in _docs(records)}
    first = docs["9000001"]
    assert first.title == "Effect of Staphylococcus aureus on CO2 levels."  # inner markup flattened
    assert first.journal == "Journal of fixture medicine"
    assert first.year == 2008
    assert first.mesh == ["Humans", "Staphylococcal Infections"]
    second = docs["9000002"]
    assert second.year == 1998  # from MedlineDate
    assert second.publication_types == ["Journal Article", "Review"]
    assert second.sections == []  # one unlabelled part: not a structured abstract
    assert second.abstract == "Plain text abstract. It has two sentences."
    assert set(docs) == {"9000001", "9000002"}  # no abstract / no PMID skipped; CommentsCorrections ignored
    assert records[-1] == Deletion(pmids=["8000001", "8000002"], source=str(FIXTURES / "medline2016.xml"))
    assert (stats.records, stats.empty_abstracts, stats.malformed, stats.deleted) == (2, 1, 1, 2)


def test_current_dtd_matches_2016() -> None:
    old = _docs(_read(FIXTURES / "medline2016.xml")[0])[0]
    records, stats = _read(FIXTURES / "pubmed_current.xml")
    docs = {d.pmid: d for d in _docs(records)}
    assert set(docs) == {"9000001", "9000004"}  # no PMID taken from CommentsCorrections or PubmedData
    new = docs["9000001"]
    assert new.model_dump(exclude={"mesh"}) == old.model_dump(exclude={"mesh"})
    assert new.mesh == old.mesh
    other = docs["9000004"]
    assert other.year == 2021  # DateCompleted fallback
    assert other.title == "Titre en français."  # empty ArticleTitle: VernacularTitle
    assert records[-1] == Deletion(pmids=["8000003"], source=str(FIXTURES / "pubmed_current.xml"))
    assert stats.deleted == 1 and stats.malformed == 0


def test_gzipped_xml_reads_like_plain(tmp_path: Path) -> None:
    target = tmp_path / "pubmed_current.xml.gz"
    target.write_bytes(gzip.compress((FIXTURES / "pubmed_current.xml").read_bytes()))
    plain = _docs(_read(FIXTURES / "pubmed_current.xml")[0])
    assert _docs(_read(target)[0]) == plain


# ------------------------------------------------------------------------------------------- updates


def test_update_folder_replaces_and_deletes_in_name_order() -> None:
    stats = ReadStats()
    docs = read_documents([FIXTURES / "updates"], stats)
    assert sorted(docs) == ["9100001", "9100002"]
    assert docs["9100002"].abstract == "Revised abstract two."
    assert docs["9100002"].year == 2021
    assert (stats.files, stats.records, stats.duplicates, stats.deleted) == (2, 4, 1, 1)  # README ignored


def test_a_folder_leaves_out_hidden_files_and_folders(tmp_path: Path) -> None:
    """A folder copied from a Mac has `._name.xml` companions (not XML at all); one with a `.git` or `.venv`
    has files of its own. Given by name, a hidden file is still read."""
    shutil.copytree(FIXTURES / "updates", tmp_path / "u")
    (tmp_path / "u" / "._pubmed26n0010.xml").write_bytes(b"\x00\x05\x16\x07 Mac OS X resource fork")
    (tmp_path / "u" / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / "u" / ".venv" / "lib" / "manifest.xml").write_text("<assembly/>")
    assert sorted(read_documents([tmp_path / "u"])) == ["9100001", "9100002"]
    with pytest.raises(InputError, match="._pubmed26n0010.xml"):
        read_documents([tmp_path / "u" / "._pubmed26n0010.xml"])


def test_iter_records_yields_in_file_order() -> None:
    records, _ = _read(FIXTURES / "updates")
    kinds = [r.pmid if isinstance(r, Document) else ("del", *r.pmids) for r in records]
    assert kinds == ["9100001", "9100002", "9100003", "9100002", ("del", "9100003")]


def test_deleted_then_readded_is_not_a_duplicate(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "updates", tmp_path / "u")
    (tmp_path / "u" / "pubmed26n0011.xml").write_text(
        "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>9100003</PMID><Article>"
        "<ArticleTitle>Back.</ArticleTitle><Abstract><AbstractText>Back again.</AbstractText></Abstract>"
        "</Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"
    )
    stats = ReadStats()
    docs = read_documents([tmp_path / "u"], stats)
    assert docs["9100003"].abstract == "Back again."
    assert stats.duplicates == 1


# ------------------------------------------------------------------------------------------- JSONL


def test_jsonl_records_duplicates_and_bad_lines() -> None:
    path = FIXTURES / "abstracts_mixed.jsonl"
    stats = ReadStats()
    docs = read_documents([path], stats)
    assert sorted(docs) == ["9200001", "9200002"]
    assert docs["9200001"].abstract == "Stored with int PMID."  # int PMID normalised, whitespace collapsed
    assert docs["9200001"].year == 2001 and docs["9200001"].mesh == ["Humans"]
    assert docs["9200002"].abstract == "Second record, replaced."
    assert (stats.records, stats.duplicates, stats.empty_abstracts, stats.malformed) == (3, 1, 1, 4)
    joined = "\n".join(stats.warnings)
    assert f"{path}:3: bad JSON" in joined
    assert f"{path}:5: field 'pmid'" in joined
    assert f"{path}:6 (PMID 9200004): field 'mesh'" in joined
    assert f"{path}:7 (PMID 9200005): empty abstract" in joined
    assert f"{path}:8: expected a JSON object" in joined
    assert "1 duplicates replaced" in stats.summary() and "4 malformed" in stats.summary()


def test_jsonl_inline_labels_become_sections(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(
        '{"pmid": "1", "abstract": "OBJECTIVE: To test.  RESULTS: It fell. CONCLUSIONS: It works."}\n'
    )
    doc = read_documents([path])["1"]
    assert [(s.label, doc.abstract[s.start : s.end]) for s in doc.sections] == [
        ("OBJECTIVE", "OBJECTIVE: To test."), ("RESULTS", "RESULTS: It fell."), ("CONCLUSIONS", "CONCLUSIONS: It works.")
    ]  # fmt: skip


def test_a_label_whose_colon_was_lost_still_makes_a_section(tmp_path: Path) -> None:
    """16 corpus abstracts write their labels with two spaces instead of a colon ("RESULTS  The mother ...");
    collapsed to one space they were no labels, so the abstract had no sections and a quote opened on
    "RESULTS". A lone label gets its colon when it is a common heading, and no sections; an acronym with two
    spaces is left alone."""
    path = tmp_path / "a.jsonl"
    path.write_text(
        '{"pmid": "1", "abstract": "BACKGROUND & AIMS  X is lost. RESULTS  It fell (PWCR  15q11). '
        'CONCLUSIONS  Works."}\n'
        '{"pmid": "2", "abstract": "A region (PWCR  15q11) was lost. CONCLUSIONS  None."}\n'
        '{"pmid": "4", "abstract": "We studied it. AIDS  patients were seen."}\n'
    )
    docs = read_documents([path])
    assert [(s.label, docs["1"].abstract[s.start : s.end]) for s in docs["1"].sections] == [
        ("BACKGROUND & AIMS", "BACKGROUND & AIMS: X is lost."),
        ("RESULTS", "RESULTS: It fell (PWCR 15q11)."),
        ("CONCLUSIONS", "CONCLUSIONS: Works."),
    ]
    assert (
        docs["2"].abstract == "A region (PWCR 15q11) was lost. CONCLUSIONS: None."
        and docs["2"].sections == []
    )
    assert docs["4"].abstract == "We studied it. AIDS patients were seen."
    xml = tmp_path / "pubmed26n0001.xml"
    xml.write_text(
        "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>3</PMID><Article><ArticleTitle>T.</ArticleTitle>"
        "<Abstract><AbstractText>OBJECTIVE  To test.  RESULTS  It fell.</AbstractText></Abstract>"
        "</Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"
    )
    doc = read_documents([xml])["3"]
    assert [s.label for s in doc.sections] == ["OBJECTIVE", "RESULTS"] and doc.abstract.startswith(
        "OBJECTIVE: To"
    )


def test_jsonl_gz(tmp_path: Path) -> None:
    target = tmp_path / "a.jsonl.gz"
    target.write_bytes(gzip.compress((FIXTURES / "abstracts_mixed.jsonl").read_bytes()))
    assert read_documents([target]) == read_documents([FIXTURES / "abstracts_mixed.jsonl"])


def test_warnings_are_capped(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("{oops\n" * 70)
    stats = ReadStats()
    assert list(iter_records([path], stats)) == []
    assert stats.malformed == 70
    assert len(stats.warnings) == 50 and stats.warnings_dropped == 20
    assert "70 warnings" in stats.summary()


# ------------------------------------------------------------------------------------------- bad files


def test_missing_path_raises_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(InputError, match="nope.jsonl"):
        read_documents([missing])


def test_iter_records_is_lazy(tmp_path: Path) -> None:
    gen = iter_records([tmp_path / "nope.xml"])
    assert inspect.isgenerator(gen)
    with pytest.raises(InputError, match="nope.xml"):
        next(gen)


@pytest.mark.parametrize("name", ["bad.xml.gz", "bad.jsonl.gz"])
def test_not_gzip_raises(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"this is not gzip data at all")
    with pytest.raises(InputError, match=name.replace(".", r"\.")):
        read_documents([path])


@pytest.mark.parametrize("name", ["cut.xml.gz", "cut.jsonl.gz"])
def test_truncated_gzip_raises(tmp_path: Path, name: str) -> None:
    source = FIXTURES / ("pubmed_current.xml" if "xml" in name else "abstracts_mixed.jsonl")
    data = gzip.compress(source.read_bytes() * 20)
    path = tmp_path / name
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=name.replace(".", r"\.")):
        read_documents([path])


def test_unparseable_xml_raises(tmp_path: Path) -> None:
    path = tmp_path / "broken.xml"
    path.write_text("<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID>")
    with pytest.raises(InputError, match=r"broken\.xml: not well-formed XML"):
        read_documents([path])
    path.write_text("")
    with pytest.raises(InputError, match=r"broken\.xml"):
        read_documents([path])


def test_foreign_xml_and_suffix_rejected(tmp_path: Path) -> None:
    other = tmp_path / "other.xml"
    other.write_text("<html><body>hello</body></html>")
    with pytest.raises(InputError, match=r"other\.xml: not a PubMed/MEDLINE file"):
        read_documents([other])
    csv = tmp_path / "data.csv"
    csv.write_text("pmid,title\n")
    with pytest.raises(InputError, match=r"data\.csv: not a corpus file"):
        read_documents([csv])


# ------------------------------------------------------------------------------------------- streaming


def _write_big_xml(path: Path, target_bytes: int) -> int:
    record = (
        "<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><Journal><JournalIssue><PubDate>"
        "<Year>2020</Year></PubDate></JournalIssue><Title>Synthetic journal</Title></Journal>"
        "<ArticleTitle>Synthetic record {pmid}</ArticleTitle><Abstract>"
        '<AbstractText Label="BACKGROUND">' + "Background sentence number one here. " * 25 + "</AbstractText>"
        '<AbstractText Label="RESULTS">' + "Results were significant (P&lt;.05). " * 25 + "</AbstractText>"
        "</Abstract></Article></MedlineCitation>"
        "<PubmedData><History>" + "<PubMedPubDate/>" * 20 + "</History></PubmedData></PubmedArticle>\n"
    )
    count = size = 0
    with path.open("w") as out:
        out.write("<?xml version='1.0'?>\n<PubmedArticleSet>\n")
        while size < target_bytes:
            text = record.format(pmid=count + 1)
            out.write(text)
            size += len(text)
            count += 1
        out.write("</PubmedArticleSet>\n")
    return count


def test_streaming_memory_stays_flat(tmp_path: Path) -> None:
    path = tmp_path / "big.xml"
    expected = _write_big_xml(path, 20_000_000)
    process = psutil.Process()
    rss_start = rss_peak = process.memory_info().rss
    tracemalloc.start()
    try:
        count = 0
        for count, record in enumerate(iter_records([path]), start=1):  # noqa: B007
            if count % 500 == 0:
                rss_peak = max(rss_peak, process.memory_info().rss)
        _, py_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == expected
    assert py_peak < 4_000_000  # Python objects: no list of records kept
    # libxml2's memory is invisible to tracemalloc; keeping the parsed tree would add ~60+ MB of RSS here
    assert rss_peak - rss_start < 25_000_000


# ------------------------------------------------------------------------------------------- shipped data


def test_shipped_corpus_counts() -> None:
    jsonl = ReadStats()
    assert len(_docs(list(iter_records([DATA / "corpus" / "abstracts.jsonl"], jsonl)))) == 5136
    assert (jsonl.malformed, jsonl.duplicates, jsonl.empty_abstracts) == (0, 0, 0)

    medline = ReadStats()
    records = list(iter_records([DATA / "pubmed_xml" / "medline16n0902.xml.gz"], medline))
    assert len(_docs(records)) == 526
    assert [r.pmids for r in records if isinstance(r, Deletion)] == [["26432306"]]
    assert (medline.empty_abstracts, medline.malformed) == (78, 0)

    nejm = _docs(list(iter_records([DATA / "pubmed_xml" / "pubmed-29768149.xml"])))
    assert [d.pmid for d in nejm] == ["29768149"]
    assert [s.label for s in nejm[0].sections] == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert nejm[0].journal == "The New England journal of medicine" and nejm[0].year == 2018

    current = ReadStats()
    assert len(_docs(list(iter_records([DATA / "pubmed_xml" / "test_current_medline.xml.gz"], current)))) == 3
    assert current.empty_abstracts == 1

    total = ReadStats()
    docs = read_documents([DATA / "corpus" / "abstracts.jsonl", DATA / "pubmed_xml"], total)
    assert len(docs) == 5136 + 526 + 1 + 3
    assert all(d.abstract[s.start : s.end] for d in docs.values() for s in d.sections)
