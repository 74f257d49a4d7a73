"""`biocite report`: the evaluator on a batch run, with what only the batch journal knows.

The evaluator reads the journal's full answers (abstentions with their reasons, the trace's retrieved
PMIDs), not the official file, which cannot tell an abstention from a failure. Failed topics are left out
of the scores and listed. BioGen has no public gold nuggets, so only completeness, correctness, citation
support and abstention are reported; a PubMedQA run (`--topics pubmedqa`) also gets nugget recall against
the questions' long answers, split into nuggets by the evaluator's clause nuggetizer (a proxy for
annotated nuggets: the long answers are the abstracts' own conclusions).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from biocite import pubmedqa
from biocite.app.batch import JournalHeader, TopicRecord, read_journal
from biocite.app.evaluation import METRICS_FILE, REPORT_FILE, evaluate_run_file
from biocite.errors import InputError
from biocite.evaluator.nuggets import clause_nuggets
from biocite.evaluator.report import write_report
from biocite.evaluator.runs import journal_path, load_run
from biocite.files import output_folder
from biocite.settings import Settings

ANSWERS_FILE = "answers.json"
PUBMEDQA_GOLD_FILE = "gold_pubmedqa.json"


def report_dir(run: Path) -> Path:
    return run.with_name(run.stem + ".report")


def node_timings(records: list[TopicRecord]) -> dict[str, dict[str, float]]:
    """Per agent node: calls, total, mean and median seconds over every answered or abstained topic."""
    per: dict[str, list[float]] = {}
    for record in records:
        if record.answer is None:
            continue
        for t in record.answer.trace.timings:
            per.setdefault(t.node, []).append(t.seconds)
    return {
        node: {
            "calls": len(v),
            "total_s": round(sum(v), 2),
            "mean_s": round(statistics.fmean(v), 3),
            "median_s": round(statistics.median(v), 3),
        }
        for node, v in sorted(per.items(), key=lambda kv: -sum(kv[1]))
    }


def batch_section(header: JournalHeader, records: list[TopicRecord]) -> dict[str, Any]:
    seconds = [r.seconds for r in records]
    by = {s: [r.topic_id for r in records if r.status == s] for s in ("answered", "abstained", "failed")}
    return {
        "topics": header.topics,
        "format": header.format,
        "mode": header.mode,
        "llm": header.llm,
        "index_dir": header.index_dir,
        "journaled": len(records),
        "answered": len(by["answered"]),
        "abstained": len(by["abstained"]),
        "failed": len(by["failed"]),
        "failed_topics": {r.topic_id: r.error for r in records if r.status == "failed"},
        "seconds_per_topic": {
            "median": round(statistics.median(seconds), 2) if seconds else None,
            "mean": round(statistics.fmean(seconds), 2) if seconds else None,
            "total": round(sum(seconds), 1),
        },
        "node_timings": node_timings(records),
    }


def _pubmedqa_gold(folder: Path, topic_ids: list[str]) -> Path:
    answers = pubmedqa.long_answers()
    missing = [t for t in topic_ids if t not in answers]
    if missing:
        raise InputError(
            f"--gold pubmedqa: topics {', '.join(missing[:5])} are not PubMedQA development questions"
        )
    gold = {t: clause_nuggets(answers[t]) for t in topic_ids}
    path = folder / PUBMEDQA_GOLD_FILE
    path.write_text(json.dumps(gold, indent=1, ensure_ascii=False))
    return path


def report_run(
    settings: Settings,
    run: Path,
    *,
    out_dir: Path | None = None,
    gold: str | None = None,
    metrics: list[str],
    progress: bool = True,
) -> tuple[dict[str, Any], Path]:
    """Evaluate a batch run (or any run file the evaluator reads); write metrics.json + report.html."""

    run = Path(run)
    if not run.is_file():
        raise InputError(f"{run}: run file not found")
    if gold and gold != "pubmedqa" and not Path(gold).is_file():  # before the report folder is made
        raise InputError(f"--gold {gold}: gold nuggets file not found (or --gold pubmedqa)")
    folder = output_folder(out_dir or report_dir(run))
    folder.mkdir(parents=True, exist_ok=True)
    jpath = journal_path(run)
    section: dict[str, Any] | None = None
    evaluated, topics_name = run, None
    if jpath.is_file():
        header, by_topic = read_journal(jpath)
        records = list(by_topic.values())
        section = batch_section(header, records)
        topics_name = header.topics
        if settings.index.dir is None:  # score against the index the run was answered from
            settings = settings.model_copy(
                update={"index": settings.index.model_copy(update={"dir": Path(header.index_dir)})}
            )
        kept = [r for r in records if r.answer is not None]
        if not kept:
            raise InputError(f"{jpath}: no answered or abstained topic to evaluate")
        evaluated = folder / ANSWERS_FILE
        evaluated.write_text(
            json.dumps(
                {
                    "run_name": run.stem,
                    "answers": [
                        {"topic_id": r.topic_id, "question": r.question, "answer": r.answer.model_dump()}
                        for r in kept
                        if r.answer is not None
                    ],
                },
                ensure_ascii=False,
            )
        )
    gold_path: Path | None = None
    if gold == "pubmedqa" or (gold is None and topics_name == "pubmedqa"):
        gold_path = _pubmedqa_gold(folder, [e.topic_id for e in load_run(evaluated).entries])
    elif gold:
        gold_path = Path(gold)
    doc = evaluate_run_file(
        settings, evaluated, folder, metrics=metrics, gold_path=gold_path, progress=progress
    )
    if section is not None:
        doc["batch"] = section
        doc["run"]["path"] = str(run)
        doc["notes"].insert(
            0,
            f"batch journal {jpath.name}: {section['journaled']} topics, {section['answered']} answered, "
            f"{section['abstained']} abstained, {section['failed']} failed (failed topics are not scored)",
        )
    if gold_path is not None and gold_path.name == PUBMEDQA_GOLD_FILE:
        doc["notes"].append(
            "gold nuggets: PubMedQA long answers split by the clause nuggetizer (a proxy for annotated nuggets)"
        )
    (folder / METRICS_FILE).write_text(json.dumps(doc, indent=2, ensure_ascii=False))
    write_report(folder / REPORT_FILE, doc)
    return doc, folder


def headline(doc: dict[str, Any]) -> list[str]:
    o = doc["overall"]
    lines = []
    batch = doc.get("batch")
    if batch:
        lines.append(
            f"{batch['journaled']} topics ({batch['mode']}): {batch['answered']} answered, "
            f"{batch['abstained']} abstained, {batch['failed']} failed"
        )
    else:
        lines.append(f"{o['questions']} questions: {o['answered']} answered, {o['abstained']} abstained")
    for name, m in o["metrics"].items():
        if m["n"]:
            lines.append(f"{name:<20} {m['mean']:.3f}  95% CI {m['ci95']}  (n={m['n']})")
    if o.get("undetermined"):
        lines.append(f"undetermined judgements: {o['undetermined']}")
    return lines
