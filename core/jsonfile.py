"""Reading user-supplied JSON and JSONL files: every failure is one InputError naming the file and line.

The one owner of "read a JSON or JSONL file the user gave us": strict UTF-8 (the line of the first bad
byte is named), no NaN / Infinity (not JSON, and they poison means), too deep nesting is an error (not a
RecursionError traceback), an empty file is an error, and a JSON document that is not JSONL is reported at the line
of its own error, not at line 1.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from biocite.errors import InputError


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in JSON")


def read_text(path: Path | str) -> str:
    """The file's text as UTF-8; `-` reads standard input."""
    path = Path(path)
    if str(path) == "-":
        data = sys.stdin.buffer.read()
    elif not path.is_file():
        raise InputError(f"{path}: file not found")
    else:
        data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{path}:{line}: not valid UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise InputError(f"{path}: the file is empty")
    return text.removeprefix("\ufeff")


def parse(text: str, where: str, *, first_line: int = 1) -> Any:
    """One JSON value; `where` names the file for the message."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}:{first_line + exc.lineno - 1}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise InputError(f"{where}:{first_line}: JSON nested too deeply") from None
    except ValueError as exc:
        raise InputError(f"{where}:{first_line}: not valid JSON ({exc})") from None


def load(path: Path | str) -> Any:
    """A JSON file."""
    return parse(read_text(path), str(path))


def iter_jsonl(text: str, where: str) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, parse(line, where, first_line=number)


def load_json_or_jsonl(path: Path | str) -> tuple[Any, list[tuple[int, Any]] | None]:
    """(document, None) for a JSON file, (None, rows) for JSONL. A file whose first line is not a
    complete JSON value is a JSON document: its errors are reported at their own line."""
    text = read_text(path)
    where = str(path)
    first = next(line for line in text.splitlines() if line.strip())
    try:
        parse(first, where)
        first_is_value = True
    except InputError:
        first_is_value = False
    if not first_is_value:
        return parse(text, where), None
    rows = list(iter_jsonl(text, where))
    if len(rows) == 1:
        return rows[0][1], None
    return None, rows
