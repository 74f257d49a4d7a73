"""One self-contained HTML report: inline CSS and SVG, every text escaped, no scripts or outside resources."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from typing import Any

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


def label(text: str | None) -> str:
    if not text:
        return ""
    return f'<span class="lab {LABEL_CLASS.get(text, "dim")}">{escape(text)}</span>'


def highlight(evidence: str, sentence: str) -> str:
    """Escape the evidence and mark the content words it shares with the answer sentence."""
    shared = {w.lower() for w in _WORD.findall(sentence)} - _STOP
    out, last = [], 0
    for m in _WORD.finditer(evidence):
        if m.group(0).lower() in shared:
            out.append(escape(evidence[last : m.start()]))
            out.append(f"<mark>{escape(m.group(0))}</mark>")
            last = m.end()
    out.append(escape(evidence[last:]))
    return "".join(out)


def histogram_svg(
    title: str, values: list[float], bins: int = 10, width: int = 250, height: int = 120
) -> str:
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int(v * bins)))] += 1
    top = max(counts) or 1
    bar_w = (width - 30) / bins
    bars = []
    for i, c in enumerate(counts):
        h = (height - 40) * c / top
        x = 25 + i * bar_w
        bars.append(
            f'<rect x="{x:.1f}" y="{height - 20 - h:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" '
            'fill="#5b7bd5">'
            f"<title>{i / bins:.1f}-{(i + 1) / bins:.1f}: {c}</title></rect>"
        )
    axis = (
        f'<line x1="25" y1="{height - 20}" x2="{width - 5}" y2="{height - 20}" stroke="#888"/>'
        f'<text x="25" y="{height - 6}" font-size="10">0</text>'
        f'<text x="{width - 15}" y="{height - 6}" font-size="10">1</text>'
        f'<text x="2" y="{height - 20 - (height - 40)}" font-size="10">{top}</text>'
    )
    return (
        f'<svg class="plot" role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg"><text x="25" y="13" font-size="12" font-weight="600">'
        f"{escape(title)} (n={len(values)})</text>{''.join(bars)}{axis}</svg>"
    )


def _fmt(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}" if isinstance(x, float) else escape(str(x))


def summary_table(overall: dict[str, Any]) -> str:
    rows = []
    for name, m in overall["metrics"].items():
        ci = m["ci95"]
        ci_text = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "–"
        rows.append(
            f"<tr><td>{escape(name)}</td><td class='num'>{_fmt(m['mean'])}</td><td class='num'>{ci_text}</td>"
            f"<td class='num'>{m['n']}</td></tr>"
        )
    und = ", ".join(f"{escape(k)}: {v}" for k, v in sorted(overall["undetermined"].items())) or "none"
    return (
        "<table><tr><th>metric</th><th>mean</th><th>95% CI (bootstrap)</th><th>questions</th></tr>"
        + "".join(rows)
        + "</table>"
        + f"<p>Questions {overall['questions']}: answered {overall['answered']}, "
        f"abstained {overall['abstained']}; sentences {overall['sentences']}; "
        f"cited PMIDs missing from the corpus {overall['citations_missing']}; "
        f"undetermined judgements: {und}.</p>"
    )


def _pmid_link(pmid: str) -> str:
    return f"<a href='https://pubmed.ncbi.nlm.nih.gov/{escape(pmid)}/'>PMID {escape(pmid)}</a>"


def _unjudged(s: dict[str, Any]) -> str:
    if s["citations"]:
        return ""
    if s.get("cited"):
        links = ", ".join(_pmid_link(p) for p in s["cited"])
        return f"<div class='ev note'>cites {links} (citation support not evaluated)</div>"
    return "<div class='ev note'>no citation</div>"


def question_block(q: dict[str, Any], open_: bool = False) -> str:
    scores = " ".join(f"{escape(k)} {_fmt(v)}" for k, v in q["scores"].items())
    head = (
        f"<summary><b>{escape(q['topic_id'])}</b> {escape(q['question'])} <span class='note'>{scores}</span>"
    )
    if q["outcome"] == "abstained":
        reason = escape(q.get("abstain_reason") or "")
        return (
            f"<details>{head} {label('undetermined').replace('undetermined', 'abstained')}</summary>"
            f"<p>Abstained. {reason}</p></details>"
        )
    parts = [head + "</summary>"]
    for i, s in enumerate(q["sentences"], 1):
        tags = [label(s.get("completeness"))]
        if s.get("correct") is not None:
            tags.append(
                label("Supports" if s["correct"] else "Not relevant")
                .replace(">Supports<", ">correct<")
                .replace(">Not relevant<", ">not correct<")
            )
        if s.get("misattributed"):
            tags.append(
                f"<span class='lab bad'>misattributed: {escape(', '.join(s['supported_by_uncited']))}</span>"
            )
        cites = []
        for c in s["citations"]:
            link = _pmid_link(c["pmid"])
            ev = f"<div class='ev'>{highlight(c['evidence'], s['text'])}</div>" if c.get("evidence") else ""
            cites.append(f"<div class='ev'>{link} {label(c['label'])}{ev}</div>")
        parts.append(
            f"<div class='sent'><b>{i}.</b> {escape(s['text'])} {''.join(tags)}{''.join(cites) or ''}"
            + _unjudged(s)
            + "</div>"
        )
    n = q.get("nuggets")
    if n:
        matched = {a[1]: a for a in n["alignments"]}
        items = "".join(
            f"<li>{escape(g)} "
            + (
                f"<span class='lab ok'>matched: {escape(n['answer_nuggets'][matched[j][0]])} "
                f"(cos {matched[j][2]:.2f}, P {matched[j][3]:.2f})</span>"
                if j in matched
                else label("missing")
            )
            + "</li>"
            for j, g in enumerate(n["gold_nuggets"])
        )
        parts.append(f"<p>Gold nuggets ({escape(n['nuggetizer'])} nuggetizer):</p><ul>{items}</ul>")
    return ("<details open>" if open_ else "<details>") + "".join(parts) + "</details>"


def render(doc: dict[str, Any]) -> str:
    overall = doc["overall"]
    plots = []
    for name in overall["metrics"]:
        values = [q["scores"][name] for q in doc["questions"] if q["scores"].get(name) is not None]
        if values:
            plots.append(histogram_svg(name, values))
    notes = "".join(f"<li>{escape(n)}</li>" for n in doc.get("notes", []))
    judges = "".join(
        f"<tr><td>{escape(k)}</td><td>{escape(str(v))}</td></tr>" for k, v in doc["judges"].items()
    )
    first = next((i for i, q in enumerate(doc["questions"]) if q["outcome"] == "answered"), -1)
    questions = "".join(question_block(q, open_=i == first) for i, q in enumerate(doc["questions"]))
    run = doc["run"]
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>biocite evaluation: {escape(run['name'])}</title><style>{CSS}</style></head><body>"
        f"<h1>Evaluation of run {escape(run['name'])}</h1>"
        f"<p class='note'>{escape(run['path'])} ({escape(run['format'])}); {doc['timing']['seconds']} s</p>"
        f"<h2>Summary</h2>{summary_table(overall)}"
        "<h2>Score distributions (per question)</h2>"
        f"<div class='plots'>{''.join(plots) or '<p>none</p>'}</div>"
        f"<h2>Judges</h2><table>{judges}</table><ul class='note'>{notes}</ul>"
        f"<h2>Questions</h2>{questions}</body></html>"
    )


def write_report(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(render(doc), encoding="utf-8")
