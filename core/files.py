"""Writing files so that a crash leaves the old file or the new one, never half of either.

The one owner of atomic writes: write a temporary file beside the target, flush and fsync it, then
rename it over the target (a rename within one folder is atomic on POSIX file systems). Also the one
owner of checking an output path before a command starts its work (`output_file`, `output_folder`), so a
folder given for a file is named at once rather than after minutes of answers or judgements.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from biocite.errors import InputError


def _blocking_file(path: Path) -> Path | None:
    """The nearest existing ancestor of `path` when it is a file, not a folder (nothing can be made under it)."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def output_file(path: Path) -> Path:
    """`path` can be written as a file: it is not a folder, and no file stands where its folder would be."""
    if path.is_dir():
        raise InputError(f"{path}: a folder, not a file (give the path of the file to write)")
    if blocked := _blocking_file(path):
        raise InputError(f"{blocked}: a file, not a folder, so {path} cannot be written")
    return path


def output_folder(path: Path) -> Path:
    """`path` can be made (or is) a folder: it is not a file, nor under one."""
    if path.exists() and not path.is_dir():
        raise InputError(f"{path}: a file, not a folder (give the folder to write into)")
    if blocked := _blocking_file(path):
        raise InputError(f"{blocked}: a file, not a folder, so {path} cannot be made")
    return path


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def atomic_write_text(path: Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, data: Any, *, indent: int | None = 2) -> Path:
    return atomic_write_text(path, json.dumps(data, indent=indent, ensure_ascii=False) + "\n")
