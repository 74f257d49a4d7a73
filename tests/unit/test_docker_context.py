"""The Docker image installs biocite editable from the copied folders: each package folder that
pyproject.toml maps must be both let through docker/Dockerfile.dockerignore and COPY'd by docker/Dockerfile
(the `app/` layer once was neither, so the image's `biocite` command could not import its CLI)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_folder_reaches_the_image() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    folders = set(pyproject["tool"]["setuptools"]["package-dir"].values())
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text(encoding="utf-8")
    ignore = (ROOT / "docker" / "Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
    copied = set(re.findall(r"^COPY (\S+) \./\1$", dockerfile, flags=re.MULTILINE))
    let_through = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    assert folders <= copied, f"not COPY'd: {sorted(folders - copied)}"
    assert folders <= let_through, f"ignored by the build context: {sorted(folders - let_through)}"
