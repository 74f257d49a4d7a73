"""User-facing errors: the CLI prints their message on one line and exits non-zero, no traceback."""

from collections.abc import Collection, Sequence

from pydantic import ValidationError


class BiociteError(Exception):
    """A problem the user can fix (bad input, missing file, stale index). Message names what and where."""

    exit_code = 2


class InputError(BiociteError):
    """Malformed or missing input file, record or field."""


class IndexMismatchError(BiociteError):
    """The index on disk is stale or was built with other models or parameters."""


class ModelError(BiociteError):
    """A model file is missing or fails its checksum, or an endpoint is unreachable."""


def field_path(loc: Sequence[int | str], skip: Collection[str] = ()) -> str:
    """A pydantic error location as a dotted field path: ('results', 0, 'pmid') -> 'results.0.pmid'."""
    return ".".join(str(part) for part in loc if part not in skip)


def first_problem(exc: ValidationError) -> tuple[str, str]:
    """The field path and message of a validation error's first problem; the one line users are shown."""
    first = exc.errors()[0]
    return field_path(first["loc"]), first["msg"]
