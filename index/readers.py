"""Streaming corpus readers: PubMed/MEDLINE XML (2016 and current DTD) and JSONL, plain or gzipped.

`iter_records` yields `Document`s and `Deletion`s in file order without holding a file in memory
(lxml `iterparse` with element clearing, JSONL line by line); `read_documents` applies replacements and
deletions to give the final corpus. Bad records are skipped with a warning in `ReadStats`; a file that
cannot be read at all raises `InputError` naming it.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from lxml import etree
from pydantic import BaseModel, Field, ValidationError, field_validator

from biocite.errors import InputError, first_problem
from biocite.records import Document, Section, pmid_problem
from biocite.sentences import inline_sections, with_label_colons

log = logging.getLogger(__name__)

MAX_WARNINGS = 50
XML_SUFFIXES = (".xml", ".xml.gz")
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")
XML_ROOTS = {"MedlineCitationSet", "PubmedArticleSet"}
# Top-level children of the set elements; cleared (with their earlier siblings) once handled.
XML_RECORD_TAGS = ("MedlineCitation", "DeleteCitation", "PubmedArticle", "PubmedBookArticle")
_YEAR = re.compile(r"\b(\d{4})\b")


class Deletion(BaseModel):
    """A <DeleteCitation> in an update file: these PMIDs leave the corpus."""

    pmids: list[str]
    source: str


class ReadStats(BaseModel):
    files: int = 0
    records: int = 0  # documents yielded (duplicates included)
    malformed: int = 0
    empty_abstracts: int = 0
    duplicates: int = 0
    deleted: int = 0  # PMIDs named by DeleteCitation elements
    truncated: int = 0  # titles or abstracts cut to the per-record size limit
    warnings: list[str] = Field(default_factory=list)
    warnings_dropped: int = 0  # warnings past MAX_WARNINGS, counted but not kept
    log_file: str | None = Field(default=None, exclude=True)  # every warning is appended here, if set

    def warn(self, message: str) -> None:
        log.debug(message)
        if self.log_file:
            with open(self.log_file, "a", encoding="utf-8") as handle:
                handle.write(message + "\n")
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(message)
        else:
            self.warnings_dropped += 1

    def summary(self) -> str:
        text = (
            f"{self.files} files: {self.records} records, {self.duplicates} duplicates replaced, "
            f"{self.deleted} deleted, {self.empty_abstracts} empty abstracts skipped, "
            f"{self.malformed} malformed skipped"
            + (f", {self.truncated} truncated" if self.truncated else "")
        )
        n_warn = len(self.warnings) + self.warnings_dropped
        return f"{text}, {n_warn} warnings" if n_warn else text

    def warning_lines(self, first: int = 10) -> list[str]:
        """The first warnings, then how many more and where the full list is."""
        lines = [f"warning: {w}" for w in self.warnings[:first]]
        more = len(self.warnings) + self.warnings_dropped - len(lines)
        if more > 0:
            where = self.log_file or "--json"
            lines.append(f"... and {more} more warnings (all of them: {where})")
        return lines


class _JsonRecord(BaseModel):
    """The JSONL schema; unknown keys are ignored."""

    pmid: str
    title: str = ""
    abstract: str = ""
    year: int | None = None
    journal: str | None = None
    mesh: list[str] = Field(default_factory=list)
    publication_types: list[str] = Field(default_factory=list)

    @field_validator("pmid", mode="before")
    @classmethod
    def _pmid(cls, value: Any) -> Any:
        problem = pmid_problem(value)
        if problem:
            raise ValueError(problem)
        return str(value).strip()

    @field_validator("title", "abstract", "journal", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


# Per-record size limits: the longest real PubMed abstracts are ~20k characters; beyond these a record is
# truncated (at a space) with a warning, so one runaway record cannot stall or bloat a build.
MAX_ABSTRACT_CHARS = 100_000
MAX_TITLE_CHARS = 5_000


def _limited(text: str, limit: int, what: str, where: str, stats: ReadStats) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    stats.truncated += 1
    stats.warn(f"{where}: {what} of {len(text):,} characters truncated to {limit:,}")
    return text[: cut if cut > limit // 2 else limit]


def norm_space(text: str) -> str:
    """Collapse runs of whitespace (including non-breaking spaces) to one space."""
    return " ".join(text.split())


def _abstract_text(raw: str) -> str:
    """An abstract's text, spaces collapsed once a label written with two spaces has its colon back
    ("RESULTS  X": `with_label_colons`)."""
    return norm_space(with_label_colons(raw.strip()))


# --------------------------------------------------------------------------------------------- files


def _suffix_kind(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(XML_SUFFIXES):
        return "xml"
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    return None


def expand_paths(paths: Sequence[Path | str]) -> list[Path]:
    """Files as given; folders recursed with their corpus files sorted by relative path. Hidden files and
    folders in a folder are left out: macOS's `._pubmed24n0001.xml.gz` copies are not PubMed, and a `.venv`
    or `.git` inside holds no corpus."""
    if isinstance(paths, str | Path):  # one path given bare, not a string to iterate character by character
        paths = [paths]
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = [
                p
                for p in path.rglob("*")
                if p.is_file()
                and _suffix_kind(p)
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            ]
            files.extend(sorted(found, key=lambda p: p.relative_to(path).as_posix()))
        elif path.is_file():
            if _suffix_kind(path) is None:
                raise InputError(f"{path}: not a corpus file (expected .jsonl, .jsonl.gz, .xml or .xml.gz)")
            files.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    return files


def _open_binary(path: Path) -> BinaryIO | gzip.GzipFile:
    try:
        if not path.name.lower().endswith(".gz"):
            return path.open("rb")
        handle = gzip.open(path, "rb")
        try:
            handle.peek(1)  # fail here, not mid-parse, on a file that is not gzip at all
        except BaseException:
            handle.close()
            raise
        return handle
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: cannot read ({_reason(exc)})") from exc


def _reason(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


# --------------------------------------------------------------------------------------------- JSONL


def _iter_jsonl(path: Path, stats: ReadStats) -> Iterator[Document]:
    with _open_binary(path) as handle:
        line_no = 0
        try:
            for line_no, raw in enumerate(handle, start=1):
                if raw.strip():
                    doc = _jsonl_record(raw, f"{path}:{line_no}", stats)
                    if doc is not None:
                        yield doc
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{path}: cannot read after line {line_no} ({_reason(exc)})") from exc


def _jsonl_record(raw: bytes, where: str, stats: ReadStats) -> Document | None:
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        _malformed(stats, f"{where}: bad JSON ({exc.__class__.__name__}: {_reason(exc)})")
        return None
    except RecursionError:
        _malformed(stats, f"{where}: bad JSON (nested too deeply)")
        return None
    if not isinstance(data, dict):
        _malformed(stats, f"{where}: expected a JSON object, got {type(data).__name__}")
        return None
    try:
        rec = _JsonRecord.model_validate(data)
    except ValidationError as exc:
        field, why = first_problem(exc)
        field = field or "record"
        pmid = data.get("pmid")
        who = f" (PMID {pmid})" if isinstance(pmid, str | int) and field != "pmid" else ""
        _malformed(stats, f"{where}{who}: field '{field}': {why}")
        return None
    abstract = _abstract_text(rec.abstract)
    if not abstract:
        stats.empty_abstracts += 1
        stats.warn(f"{where} (PMID {rec.pmid}): empty abstract, skipped")
        return None
    where = f"{where} (PMID {rec.pmid})"
    abstract = _limited(abstract, MAX_ABSTRACT_CHARS, "abstract", where, stats)
    return Document(
        pmid=rec.pmid,
        title=_limited(norm_space(rec.title), MAX_TITLE_CHARS, "title", where, stats),
        abstract=abstract,
        sections=inline_sections(abstract),  # "BACKGROUND: ... RESULTS: ..." written into the text
        year=rec.year,
        journal=norm_space(rec.journal or "") or None,
        mesh=[m for m in (norm_space(x) for x in rec.mesh) if m],
        publication_types=[t for t in (norm_space(x) for x in rec.publication_types) if t],
    )


def _malformed(stats: ReadStats, message: str) -> None:
    stats.malformed += 1
    stats.warn(f"{message}; record skipped")


# --------------------------------------------------------------------------------------------- XML


def _text(elem: etree._Element | None) -> str:
    return norm_space("".join(elem.itertext())) if elem is not None else ""


def _abstract(citation: etree._Element) -> tuple[str, list[Section]]:
    """AbstractText parts joined with one space; labelled or multi-part abstracts get Sections, and so does
    one plain text with its labels written inline."""
    parts = []
    for node in citation.iterfind("Article/Abstract/AbstractText"):
        text = _abstract_text("".join(node.itertext()))
        if text:
            parts.append((node.get("Label") or None, text))
    sections: list[Section] = []
    pos = 0
    for label, text in parts:
        sections.append(Section(label=label, start=pos, end=pos + len(text)))
        pos += len(text) + 1
    structured = len(parts) > 1 or any(label for label, _ in parts)
    abstract = " ".join(text for _, text in parts)
    return abstract, sections if structured else inline_sections(abstract)


def _year(citation: etree._Element) -> int | None:
    pub = citation.find("Article/Journal/JournalIssue/PubDate")
    candidates = []
    if pub is not None:
        candidates += [pub.findtext("Year"), pub.findtext("MedlineDate")]
    candidates.append(citation.findtext("DateCompleted/Year"))
    for value in candidates:
        match = _YEAR.search(value or "")
        if match:
            return int(match.group(1))
    return None


def _xml_document(citation: etree._Element, path: Path, stats: ReadStats) -> Document | None:
    pmid = norm_space(citation.findtext("PMID") or "")
    if not pmid:
        _malformed(stats, f"{path}:{citation.sourceline}: MedlineCitation without PMID")
        return None
    if pmid_problem(pmid):
        _malformed(stats, f"{path}:{citation.sourceline}: {pmid_problem(pmid)}")
        return None
    abstract, sections = _abstract(citation)
    if not abstract:
        stats.empty_abstracts += 1
        stats.warn(f"{path} (PMID {pmid}): empty abstract, skipped")
        return None
    article = citation.find("Article")
    title = _text(article.find("ArticleTitle")) if article is not None else ""
    if not title and article is not None:
        title = _text(article.find("VernacularTitle"))
    where = f"{path}:{citation.sourceline} (PMID {pmid})"
    limited = _limited(abstract, MAX_ABSTRACT_CHARS, "abstract", where, stats)
    return Document(
        pmid=pmid,
        title=_limited(title, MAX_TITLE_CHARS, "title", where, stats),
        abstract=limited,
        sections=[c for c in sections if c.end <= len(limited)] if limited != abstract else sections,
        year=_year(citation),
        journal=_text(citation.find("Article/Journal/Title")) or None,
        mesh=[t for t in map(_text, citation.iterfind("MeshHeadingList/MeshHeading/DescriptorName")) if t],
        publication_types=[
            t for t in map(_text, citation.iterfind("Article/PublicationTypeList/PublicationType")) if t
        ],
    )


def _release(elem: etree._Element) -> None:
    """Free a handled top-level record and anything before it, so memory stays flat."""
    elem.clear(keep_tail=False)
    parent = elem.getparent()
    if parent is not None:
        while elem.getprevious() is not None:
            del parent[0]


def _iter_xml(path: Path, stats: ReadStats) -> Iterator[Document | Deletion]:
    with _open_binary(path) as handle:
        context = etree.iterparse(
            handle,
            events=("end",),
            tag=XML_RECORD_TAGS,
            resolve_entities=False,
            load_dtd=False,
            no_network=True,
            remove_comments=True,
        )
        root_checked = False
        try:
            for _, elem in context:
                if not root_checked:
                    _check_root(path, elem.getroottree().getroot().tag)
                    root_checked = True
                parent = elem.getparent()
                top_level = parent is not None and parent.getparent() is None
                if elem.tag == "MedlineCitation":
                    doc = _xml_document(elem, path, stats)
                    if doc is not None:
                        yield doc
                elif elem.tag == "PubmedBookArticle":
                    stats.warn(f"{path}:{elem.sourceline}: PubmedBookArticle not supported, skipped")
                elif elem.tag == "DeleteCitation":
                    pmids = [p for p in (norm_space(x.text or "") for x in elem.iterfind("PMID")) if p]
                    yield Deletion(pmids=pmids, source=str(path))
                if top_level:
                    _release(elem)
        except etree.XMLSyntaxError as exc:
            raise InputError(f"{path}: not well-formed XML (line {exc.lineno}): {exc.msg}") from exc
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{path}: cannot read ({_reason(exc)})") from exc
        if not root_checked:
            _check_root(path, context.root.tag if context.root is not None else "")


def _check_root(path: Path, tag: str) -> None:
    if tag not in XML_ROOTS:
        raise InputError(f"{path}: not a PubMed/MEDLINE file (root element <{tag}>)")


# --------------------------------------------------------------------------------------------- API


def iter_records(
    paths: Sequence[Path | str], stats: ReadStats | None = None
) -> Iterator[Document | Deletion]:
    """Documents and deletions of every file in order; a later record with the same PMID replaces one."""
    stats = stats if stats is not None else ReadStats()
    seen: set[str] = set()
    for path in expand_paths(paths):
        stats.files += 1
        reader = _iter_xml(path, stats) if _suffix_kind(path) == "xml" else _iter_jsonl(path, stats)
        for record in reader:
            if isinstance(record, Deletion):
                stats.deleted += len(record.pmids)
                seen.difference_update(record.pmids)
            else:
                stats.records += 1
                if record.pmid in seen:
                    stats.duplicates += 1
                seen.add(record.pmid)
            yield record


def read_documents(paths: Sequence[Path | str], stats: ReadStats | None = None) -> dict[str, Document]:
    """The corpus after applying, in order, every replacement and deletion; keyed by PMID."""
    docs: dict[str, Document] = {}
    for record in iter_records(paths, stats):
        if isinstance(record, Deletion):
            for pmid in record.pmids:
                docs.pop(pmid, None)
        else:
            docs[record.pmid] = record
    return docs
