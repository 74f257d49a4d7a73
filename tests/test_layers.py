"""The import-linter contracts (pyproject.toml) hold: the layers of docs/ARCHITECTURE.md.

setuptools maps the repository's folders onto one package (`biocite.index` = index/, ...), but import-linter
reads a package from one folder tree; so the mapped folders are copied into that tree first, then
`lint-imports` runs on the copy. Also `python -m tests.test_layers` (what `make lint` runs).

mypy has the same blind spot: run on the folders, it cannot resolve `biocite.*` imports and treats every
cross-package call as untyped. `python -m tests.test_layers --mypy` type-checks the laid-out tree instead
(`make lint`; ~2-3 minutes cold, so not part of the test suite).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def package_tree(dest: Path) -> Path:
    """Copy the .py files of every mapped package into dest/biocite/..., as a wheel would lay them out."""
    mapping = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for package, folder in mapping.items():
        target = dest.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for source in (REPO / folder).glob("*.py"):
            shutil.copy2(source, target / source.name)
    return dest


def lint_imports(tmp: Path) -> subprocess.CompletedProcess[str]:
    tree = package_tree(tmp / "tree")
    exe = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(exe), "--config", str(REPO / "pyproject.toml")], capture_output=True, text=True, env=env, cwd=tmp
    )


def mypy_tree(tmp: Path) -> subprocess.CompletedProcess[str]:
    tree = package_tree(tmp / "tree")
    exe = Path(sys.executable).with_name("mypy")
    env = {**os.environ, "MYPYPATH": str(tree)}
    config = ["--config-file", str(REPO / "pyproject.toml"), "--cache-dir", str(REPO / ".mypy_cache")]
    return subprocess.run(
        [str(exe), *config, "-p", "biocite"], capture_output=True, text=True, env=env, cwd=tree
    )


def test_layer_contracts_hold(tmp_path: Path) -> None:
    done = lint_imports(tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


if __name__ == "__main__":
    import tempfile

    check = mypy_tree if "--mypy" in sys.argv[1:] else lint_imports
    with tempfile.TemporaryDirectory() as tmp:
        done = check(Path(tmp))
    print(done.stdout + done.stderr)
    sys.exit(done.returncode)
