"""The index on disk: build, reopen, incremental add/delete, resume, stale and foreign refusal."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from biocite.errors import IndexMismatchError, InputError
from biocite.index.build import add_sources, build_index, delete_documents, open_index
from biocite.index.store import read_manifest, write_manifest
from biocite.sentences import SPLITTER_VERSION
from biocite.settings import load_settings
from tests.conftest import MINI_CORPUS, write_jsonl


def settings_for(tmp_path: Path, *extra: str):
    return load_settings("test", [f"index.dir={tmp_path / 'index'}", "index.reranker=none", *extra])


def test_build_then_open_and_query(tmp_path, mini_corpus):
    settings = settings_for(tmp_path)
    report = build_index(settings, [mini_corpus], progress=False)
    assert report.documents == 4 and report.added == 4 and report.embedded == 4
    index = open_index(settings)
    assert len(index.docs) == 4 and len(index.dense) == 4
    doc = index.docs.get("1001")
    for sentence in index.docs.sentences("1001"):
        assert doc.abstract[sentence.start : sentence.end] == sentence.text
    hits = index.dense.search(index.embedder.encode(["does aspirin prevent another stroke"]), 2)[0]
    assert hits[0][0] == "1001"
    manifest = read_manifest(settings.index_dir)
    assert manifest.status == "complete" and manifest.embedding_model == "minilm"
    assert {"bm25s", "faiss-cpu", "torch"} <= set(manifest.library_versions)


def test_rebuild_unchanged_corpus_does_no_work(tmp_path, mini_corpus):
    settings = settings_for(tmp_path)
    build_index(settings, [mini_corpus], progress=False)
    again = build_index(settings, [mini_corpus], progress=False)
    assert (again.added, again.changed, again.removed, again.embedded) == (0, 0, 0, 0)


def _built_with(tmp_path: Path, doc: dict[str, str]):
    """An index of `doc` and one mini-corpus abstract: its settings, its corpus file and `doc`'s sentences."""
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [doc, MINI_CORPUS[0]])
    settings = settings_for(tmp_path)
    build_index(settings, [corpus], progress=False)
    return settings, corpus, [s.text for s in open_index(settings).docs.sentences(doc["pmid"])]


def _record_splitter(settings, version: int | None) -> None:
    """Make the index's manifest name an older sentence splitter (None: one from before versions were kept)."""
    manifest = read_manifest(settings.index_dir)
    write_manifest(settings.index_dir, manifest.model_copy(update={"splitter_version": version}))


def test_an_index_split_by_an_older_splitter_is_re_split_on_its_next_build(tmp_path):
    """A splitter change reaches an existing index on its next build, without re-embedding: here the label
    glued to the sentence before it ("... is unknown.AIM: To ...") that SPLITTER_VERSION 2 splits off."""
    glued = {
        "pmid": "3001",
        "title": "Group B streptococci in pregnancy",
        "abstract": "The carrier rate in the region is unknown.AIM: To measure the carrier rate. It was 12%.",
    }
    settings, corpus, split_now = _built_with(tmp_path, glued)
    assert split_now[:2] == [
        "The carrier rate in the region is unknown.",
        "AIM: To measure the carrier rate.",
    ]

    # make it an index of the older splitter: one sentence where there are two, no splitter version recorded
    end = glued["abstract"].index(" It was")
    old = [{"index": 0, "start": 0, "end": end, "text": glued["abstract"][:end]}]
    with sqlite3.connect(settings.index_dir / "docs.sqlite") as conn:
        conn.execute("UPDATE docs SET sentences = ? WHERE pmid = '3001'", (json.dumps(old),))
    _record_splitter(settings, None)

    # the installed executable, as a user runs it after an upgrade
    exe = shutil.which("biocite") or str(Path(sys.executable).with_name("biocite"))
    index_dir = f"index.dir={settings.index_dir}"
    command = [exe, "index", "build", "--corpus", str(corpus), "--preset", "test", "-s", index_dir]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "(+0 added, 2 changed, -0 removed, 0 embedded)" in done.stdout, done.stdout
    resplit = f"re-split: 2 documents that sentence splitter {SPLITTER_VERSION} may split differently"
    assert resplit in done.stdout, done.stdout
    assert [s.text for s in open_index(settings).docs.sentences("3001")] == split_now
    assert read_manifest(settings.index_dir).splitter_version == SPLITTER_VERSION
    assert build_index(settings, [corpus], progress=False).changed == 0


def _store_one_sentence(settings, pmid: str, abstract: str) -> None:
    """Make a stored document look split by an older splitter: its whole abstract as one sentence."""
    one = [{"index": 0, "start": 0, "end": len(abstract), "text": abstract}]
    with sqlite3.connect(settings.index_dir / "docs.sqlite") as conn:
        conn.execute("UPDATE docs SET sentences = ? WHERE pmid = ?", (json.dumps(one), pmid))


def test_an_index_of_splitter_2_re_splits_only_the_abstracts_splitter_3_may_change(tmp_path):
    """Splitter 3 changed labels written with "&" only: an upgrade re-splits those abstracts, not the whole
    index (full PubMed would take days)."""
    ampersand = {
        "pmid": "3002",
        "title": "Vaginal lesions",
        "abstract": "Their natural history is unknown.MATERIALS & A retrospective study of 40 women. Ten had CIN.",
    }
    plain = MINI_CORPUS[0]
    settings, corpus, split_now = _built_with(tmp_path, ampersand)
    assert split_now[:2] == [
        "Their natural history is unknown.",
        "MATERIALS & A retrospective study of 40 women.",
    ]
    for doc in (ampersand, plain):
        _store_one_sentence(settings, doc["pmid"], doc["abstract"])
    _record_splitter(settings, 2)

    report = build_index(settings, [corpus], progress=False)
    assert (report.changed, report.resplit_documents, report.embedded) == (1, 1, 0)
    docs = open_index(settings).docs
    assert [s.text for s in docs.sentences("3002")] == split_now
    assert [s.text for s in docs.sentences(plain["pmid"])] == [plain["abstract"]]  # not touched
    assert read_manifest(settings.index_dir).splitter_version == SPLITTER_VERSION


def test_add_and_delete_touch_only_those_documents(tmp_path, mini_corpus):
    settings = settings_for(tmp_path)
    build_index(settings, [mini_corpus], progress=False)
    extra = write_jsonl(
        tmp_path / "extra.jsonl",
        [
            {
                "pmid": "2001",
                "title": "Statins after myocardial infarction",
                "abstract": "Statin therapy reduced cardiovascular death after myocardial infarction.",
            },
            {**MINI_CORPUS[1], "title": MINI_CORPUS[1]["title"] + " (updated)"},
        ],
    )
    added = add_sources(settings, [extra])
    assert (added.added, added.changed, added.embedded, added.documents) == (1, 1, 2, 5)
    deleted = delete_documents(settings, ["1003"])
    assert deleted.removed == 1 and deleted.embedded == 0
    index = open_index(settings)
    assert "1003" not in index.docs and "2001" in index.docs
    assert "1003" not in index.dense.ids and index.bm25.search(["metformin"], 5) == []
    # A later build from the same files keeps the deletion, and its summary counts nothing for it (it had
    # re-added the deleted document and removed it again: "+1 added, -1 removed" on every later build).
    rebuilt = build_index(settings, [mini_corpus, extra], progress=False)
    assert (rebuilt.documents, rebuilt.added, rebuilt.changed, rebuilt.removed) == (4, 0, 0, 0)
    again = delete_documents(settings, ["1002"])
    assert (again.added, again.removed, again.documents) == (0, 1, 3)


def test_interrupted_build_resumes_without_redoing_finished_work(tmp_path, mini_corpus, monkeypatch):
    settings = settings_for(tmp_path)
    import biocite.index.build as build

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "_build_bm25", crash)
    with pytest.raises(KeyboardInterrupt):
        build_index(settings, [mini_corpus], progress=False)
    with pytest.raises(IndexMismatchError, match="did not finish"):
        open_index(settings)
    monkeypatch.undo()
    resumed = build_index(settings, [mini_corpus], progress=False)
    assert (resumed.added, resumed.embedded, resumed.documents) == (0, 0, 4)
    open_index(settings)


def test_stale_and_foreign_indexes_are_refused(tmp_path, mini_corpus):
    settings = settings_for(tmp_path)
    build_index(settings, [mini_corpus], progress=False)
    with pytest.raises(IndexMismatchError, match="BM25 parameters"):
        open_index(settings_for(tmp_path, "index.k1=1.2"))
    with pytest.raises(IndexMismatchError, match="embedded with"):
        open_index(settings_for(tmp_path, f"index.dense_model={tmp_path}"))
    rows = [*MINI_CORPUS, {"pmid": "9", "title": "t", "abstract": "new text"}]
    mini_corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(IndexMismatchError, match="stale"):
        open_index(settings)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "manifest.json").write_text('{"something": "else"')
    with pytest.raises(IndexMismatchError, match="foreign or corrupt"):
        open_index(load_settings("test", [f"index.dir={tmp_path / 'other'}"]))


def test_an_index_of_an_older_tokenizer_answers_and_its_next_build_retokenizes_it(tmp_path):
    """Tokenizer version 2 keeps "ALS" (version 1 stemmed it to "al", a stop word): an index built before
    still opens (without the token), and its next `index build` re-reads its stored abstracts."""
    doc = {"pmid": "7", "title": "Riluzole in ALS", "abstract": "Riluzole prolonged survival in ALS."}
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [doc, *MINI_CORPUS])
    settings = settings_for(tmp_path)
    build_index(settings, [corpus], progress=False)
    with sqlite3.connect(settings.index_dir / "docs.sqlite") as db:  # the tokens version 1 stored
        (tokens,) = db.execute("SELECT tokens FROM docs WHERE pmid = '7'").fetchone()
        old = [t for t in json.loads(tokens) if t != "als"]
        db.execute("UPDATE docs SET tokens = ? WHERE pmid = '7'", (json.dumps(old),))
    manifest = read_manifest(settings.index_dir)
    bm25 = {**manifest.bm25, "tokenizer_version": 1}
    write_manifest(settings.index_dir, manifest.model_copy(update={"bm25": bm25}))
    open_index(settings)  # answers as it is
    build_index(settings, [corpus], progress=False)
    with sqlite3.connect(settings.index_dir / "docs.sqlite") as db:
        assert "als" in json.loads(db.execute("SELECT tokens FROM docs WHERE pmid = '7'").fetchone()[0])
    assert read_manifest(settings.index_dir).bm25["tokenizer_version"] == 2
    assert [pmid for pmid, _ in open_index(settings).bm25.search(["als"], 5)] == ["7"]


def test_missing_corpus_path_is_a_user_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        build_index(settings_for(tmp_path), [tmp_path / "nope.jsonl"], progress=False)


def test_failed_add_leaves_the_index_complete_and_whole(tmp_path, mini_corpus):
    from biocite.index.store import staging_dir

    settings = settings_for(tmp_path)
    build_index(settings, [mini_corpus], progress=False)
    good = write_jsonl(
        tmp_path / "good.jsonl", [{"pmid": "5001", "title": "Zinc", "abstract": "Zinc and colds."}]
    )
    bad = tmp_path / "bad.xml"
    bad.write_text("<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>5002</PMID")
    with pytest.raises(InputError, match="bad.xml"):
        add_sources(settings, [good, bad])
    assert read_manifest(settings.index_dir).status == "complete"
    assert not staging_dir(settings.index_dir).exists()
    assert sorted(open_index(settings).docs.pmids()) == ["1001", "1002", "1003", "1004"]


def test_a_failed_first_build_resumes_from_its_own_inputs_not_the_default_corpus(tmp_path, mini_corpus):
    from biocite.index.build import recorded_inputs

    settings = settings_for(tmp_path)
    bad = tmp_path / "later.xml"
    bad.write_text("<PubmedArticleSet><oops")
    with pytest.raises(InputError):
        build_index(settings, [mini_corpus, bad], progress=False)
    assert recorded_inputs(settings) == [mini_corpus.resolve(), bad.resolve()]
    bad.unlink()
    with pytest.raises(InputError, match="later.xml"):  # still its own inputs: refused, not replaced
        build_index(settings, recorded_inputs(settings) or [], progress=False)
    report = build_index(settings, [mini_corpus], progress=False)
    assert report.documents == 4


def test_damaged_store_is_rebuilt_from_the_sources(tmp_path, mini_corpus):
    from biocite.errors import IndexMismatchError
    from biocite.index.build import recorded_inputs

    settings = settings_for(tmp_path)
    build_index(settings, [mini_corpus], progress=False)
    store = settings.index_dir / "docs.sqlite"
    store.write_bytes(store.read_bytes()[:4096])
    with pytest.raises(IndexMismatchError, match=r"docs.sqlite is damaged .*biocite index build"):
        open_index(settings)
    report = build_index(settings, recorded_inputs(settings) or [], progress=False)
    assert report.documents == 4 and report.added == 4
    assert sorted(open_index(settings).docs.pmids()) == ["1001", "1002", "1003", "1004"]
