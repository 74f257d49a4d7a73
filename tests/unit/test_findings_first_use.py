"""The findings model is trained once, on first use, and says so with a progress bar (issue 13: no silent
minutes). The first `biocite ask` after `make demo` waited ~4 minutes after "installing the shipped support
model" with nothing on the screen while it embedded the ~12,000 training sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from biocite.agent.findings import load_findings
from biocite.index.readers import read_documents
from biocite.pubmedqa import load_questions, split_questions
from biocite.settings import DEFAULT_CORPUS, load_settings
from tests.unit.agent_fakes import FakeDocs, HashEmbedder


class _MiniLMNamed(HashEmbedder):
    name = "minilm"  # the findings model is kept per embedder, and only for the real ones
    dim = 32


def _train_sources() -> FakeDocs:
    """The shipped source abstracts of the PubMedQA train questions (sentences cut as the fakes cut them)."""
    train, _ = split_questions(load_questions())
    docs = read_documents(DEFAULT_CORPUS[:1])  # the shipped abstracts (JSON lines)
    return FakeDocs({q.pmid: docs[q.pmid] for q in train})


def test_first_use_trains_once_saying_so_with_a_progress_bar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = load_settings("default", [f"home={tmp_path}"])
    embedder, store = _MiniLMNamed(), _train_sources()
    model = load_findings(settings, embedder, embedder, store)
    first = capsys.readouterr().err
    assert model is not None and model.meta["abstracts"]["pubmedqa"] >= 250
    assert "biocite: training the findings model once" in first
    assert "findings model: 100%" in first  # tqdm's bar, on stderr
    again = load_findings(settings, embedder, embedder, store)
    assert again is not None and capsys.readouterr().err == ""  # kept: no second training, nothing said
