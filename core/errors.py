"""User-facing errors: the CLI prints their message on one line and exits non-zero, no traceback."""


class BiociteError(Exception):
    """A problem the user can fix (bad input, missing file, stale index). Message names what and where."""

    exit_code = 2


class InputError(BiociteError):
    """Malformed or missing input file, record or field."""


class IndexMismatchError(BiociteError):
    """The index on disk is stale or was built with other models or parameters."""


class ModelError(BiociteError):
    """A model file is missing or fails its checksum, or an endpoint is unreachable."""
