"""One self-contained HTML report (Jinja2, autoescaped): inline CSS and SVG, no scripts or outside resources."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from biocite import html
from biocite.evaluator.nuggets import LLM_SCORE
from biocite.files import atomic_write_text

LABEL_CLASS = {
    "Supports": "ok",
    "Required": "ok",
    "Contradicts": "bad",
    "Inappropriate": "bad",
    "Neutral": "mid",
    "Borderline": "mid",
    "Not relevant": "dim",
    "Unnecessary": "dim",
    "undetermined": "und",
    "missing": "und",
}
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#1d2330}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #dde}
table{border-collapse:collapse;margin:8px 0}
td,th{padding:4px 10px;border-bottom:1px solid #eef;text-align:left}
th{background:#f4f6fa}.num{text-align:right;font-variant-numeric:tabular-nums}
.plots{display:flex;flex-wrap:wrap;gap:14px}.plot{border:1px solid #e3e6ee;padding:6px;border-radius:6px}
details{border:1px solid #e3e6ee;border-radius:6px;margin:6px 0;padding:4px 10px}summary{cursor:pointer}
.sent{margin:8px 0 8px 6px;padding-left:8px;border-left:3px solid #ccd}
.lab{display:inline-block;border-radius:4px;padding:0 6px;margin:0 3px;font-size:12px}
.ok{background:#d8f3dc}.bad{background:#ffd6d6}.mid{background:#fff1c2}.dim{background:#eceff4}
.und{background:#e9d8fd}.ev{color:#444;font-size:13px;margin:3px 0 3px 18px}mark{background:#ffe58a}
.note{color:#555;font-size:13px}a{color:#2450a8}
"""
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]{3,}")
_STOP = {
    "that",
    "with",
    "from",
    "this",
    "have",
    "were",
    "been",
    "their",
    "which",
    "there",
    "these",
    "those",
    "than",
    "then",
    "also",
    "into",
    "such",
    "more",
    "most",
    "some",
    "other",
    "about",
    "after",
    "before",
}


Segment = tuple[str, bool]  # (text, shared with the answer sentence)


def highlight(evidence: str, sentence: str) -> list[Segment]:
    """The evidence split into segments, the content words it shares with the answer sentence marked."""
    shared = {w.lower() for w in _WORD.findall(sentence)} - _STOP
    out: list[Segment] = []
    last = 0
    for m in _WORD.finditer(evidence):
        if m.group(0).lower() in shared:
            out += [(evidence[last : m.start()], False), (m.group(0), True)]
            last = m.end()
    return [*out, (evidence[last:], False)]


def histogram(title: str, values: list[float], bins: int = 10, width: int = 250, height: int = 120) -> dict:
    """Bar geometry of a 0..1 histogram for the report's inline SVG."""
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int(v * bins)))] += 1
    top = max(counts) or 1
    bar_w = (width - 30) / bins
    bars = []
    for i, c in enumerate(counts):
        h = (height - 40) * c / top
        tip = f"{i / bins:.1f}-{(i + 1) / bins:.1f}: {c}"
        bars.append({"x": 25 + i * bar_w, "y": height - 20 - h, "w": bar_w - 2, "h": h, "tip": tip})
    return {"title": title, "n": len(values), "bars": bars, "top": top, "width": width, "height": height}


def _aligned(alignments: list[list[Any]]) -> dict[int, list[Any]]:
    return {a[1]: a for a in alignments}


def render(doc: dict[str, Any]) -> str:
    overall = doc["overall"]
    plots = []
    for name in overall["metrics"]:
        values = [q["scores"][name] for q in doc["questions"] if q["scores"].get(name) is not None]
        if values:
            plots.append(histogram(name, values))
    first = next((i for i, q in enumerate(doc["questions"]) if q["outcome"] == "answered"), -1)
    return html.render(
        "report.html.j2",
        package="biocite.evaluator",
        css=CSS,
        label_class=LABEL_CLASS,
        highlight=highlight,
        aligned=_aligned,
        run=doc["run"],
        timing=doc["timing"],
        overall=overall,
        plots=plots,
        judges={k: str(v) for k, v in doc["judges"].items()},
        # what a matched nugget's number is: the LLM matcher's P(yes) or the token recall
        nugget_score="LLM P(yes)" if _nugget_score(doc["judges"]) == LLM_SCORE else "token recall",
        notes=doc.get("notes", []),
        questions=doc["questions"],
        first_answered=first,
    )


def _nugget_score(judges: dict[str, Any]) -> str:
    """The matcher's score kind; evaluations written before it was recorded carry it in the model id."""
    if "nugget_score" in judges:
        return str(judges["nugget_score"])
    return LLM_SCORE if f":{LLM_SCORE}:" in str(judges.get("nugget_matcher", "")) else ""


def write_report(path: Path, doc: dict[str, Any]) -> None:
    atomic_write_text(path, render(doc))
