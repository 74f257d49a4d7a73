"""HTML rendering through Jinja2 with autoescaping: abstract text is always inserted as text, never markup."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape


@cache
def environment(package: str = "biocite") -> Environment:
    return Environment(
        loader=PackageLoader(package, "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(template: str, package: str = "biocite", **context: Any) -> str:
    return environment(package).get_template(template).render(**context)
