"""The shipped support model's files (core/shipped.py): checksums verified before anything is installed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from biocite.errors import ModelError
from biocite.shipped import (
    AGGREGATOR_FILE,
    DELTA_FILE,
    FILES,
    SHIPPED_DIR,
    SUMS_FILE,
    read_sums,
    shipped_origin,
    verify,
)


def test_the_shipped_files_match_their_checksums() -> None:
    sums = verify()
    assert set(sums) >= set(FILES)
    assert shipped_origin() == f"shipped:{sums[DELTA_FILE][:16]}+{sums[AGGREGATOR_FILE][:8]}"
    meta = json.loads((SHIPPED_DIR / "meta.json").read_text())
    assert meta["hyperparameters"]["freeze_word_embeddings"] is True
    assert meta["backbone_name"] == "minilm" and len(meta["train_data_sha256"]) == 64


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    folder = tmp_path / "support"
    shutil.copytree(SHIPPED_DIR, folder)
    return folder


def test_a_damaged_file_is_refused_naming_it(copy: Path) -> None:
    agg = copy / "aggregator.json"
    agg.write_text(agg.read_text().replace("0", "1", 1))
    with pytest.raises(ModelError, match=r"aggregator\.json: sha256 differs"):
        verify(copy)


def test_an_aggregator_refitted_over_the_same_delta_is_another_origin(copy: Path) -> None:
    """So an installed model is replaced when a newer biocite ships only a refitted aggregator."""
    sums = (copy / SUMS_FILE).read_text()
    aggregator = read_sums(copy)[AGGREGATOR_FILE]
    (copy / SUMS_FILE).write_text(sums.replace(aggregator, "0" * 64))
    assert shipped_origin(copy) != shipped_origin()
    assert shipped_origin(copy).split("+")[0] == shipped_origin().split("+")[0]  # type: ignore[union-attr]


def test_a_missing_file_or_checksum_is_refused(copy: Path) -> None:
    (copy / DELTA_FILE).unlink()
    with pytest.raises(ModelError, match="delta.safetensors: missing"):
        verify(copy)
    (copy / SUMS_FILE).write_text("")
    assert read_sums(copy) == {} and shipped_origin(copy) is None
    with pytest.raises(ModelError, match="no checksum"):
        verify(copy)
