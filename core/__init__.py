"""biocite: answers biomedical questions from PubMed abstracts, every sentence citing checkable evidence.

`biocite.ask`, `biocite.search`, `biocite.evaluate` and `biocite.check` are the Python API (see biocite.app.api); they load
on first use, so `import biocite` stays light for the command line.
"""

from importlib.metadata import version
from typing import Any

__version__ = version("biocite")
__all__ = ["ask", "check", "evaluate", "search", "__version__"]
_API = {"ask", "check", "evaluate", "search"}


def __getattr__(name: str) -> Any:
    if name in _API:
        from biocite.app import api

        return getattr(api, name)
    raise AttributeError(f"module 'biocite' has no attribute {name!r}")
