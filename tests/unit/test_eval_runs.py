"""Run-file readers: biocite JSON/JSONL, BioGen 2024/2025, BioACE; bad input names file, topic, field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biocite.app.evaluation import load_gold, parse_metrics
from biocite.errors import InputError
from biocite.evaluator.runs import journal_path, load_run, parse_inline_citations
from biocite.records import Answer, AnswerSentence, Citation
from biocite.settings import DATA_DIR


def _write(tmp_path: Path, data, name="run.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_biogen2024_example_file() -> None:
    run = load_run(DATA_DIR / "biogen" / "biogen2024_example_submission.json")
    assert run.format == "biogen2024" and run.run_name == "Dummy Run #1"
    entry = run.entries[0]
    assert entry.topic_id == "118" and entry.question.startswith("How long does a minor cornea injury")
    cites = [[c.pmid for c in s.citations] for s in entry.answer.sentences]
    assert cites[0] == ["32091909"] and cites[1] == [] and cites[-1] == ["31886449"]
    assert "[" not in entry.answer.sentences[0].text


def test_inline_citations_groups() -> None:
    out = parse_inline_citations("A works [1, 22]. B fails [PMID: 3].")
    assert [[c.pmid for c in s.citations] for s in out] == [["1", "22"], ["3"]]
    assert out[0].text == "A works."


def test_biocite_json_and_jsonl(tmp_path) -> None:
    ans = Answer(question="Q?", sentences=[AnswerSentence(text="S.", citations=[Citation(pmid="5")])])
    row = {"topic_id": "7", "question": "Q?", "answer": json.loads(ans.model_dump_json())}
    run = load_run(_write(tmp_path, {"run_name": "mine", "answers": [row]}))
    assert run.format == "biocite" and run.entries[0].answer.sentences[0].citations[0].pmid == "5"
    run = load_run(_write(tmp_path, json.dumps(row) + "\n" + json.dumps({**row, "topic_id": "8"}), "r.jsonl"))
    assert run.format == "biocite-jsonl" and [e.topic_id for e in run.entries] == ["7", "8"]


def test_biogen2025_sentences(tmp_path) -> None:
    data = {
        "run_name": "x",
        "results": [
            {"topic_id": "181", "answer": [{"text": "Axonal injury is damage.", "citations": ["123", 456]}]}
        ],
    }
    run = load_run(_write(tmp_path, data))
    assert run.format == "biogen2025" and run.entries[0].question.startswith("what is axonal injury")
    assert [c.pmid for c in run.entries[0].answer.sentences[0].citations] == ["123", "456"]


def test_a_batch_run_of_ones_own_topics_reads_its_questions_from_the_journal_beside_it(tmp_path) -> None:
    """An official BioGen run file has no questions; `biocite batch` keeps them in `<run>.journal.jsonl`.
    Topic "181" of the user's own topics is theirs, not BioGen's topic 181."""
    data = {
        "results": [
            {"topic_id": t, "answer": [{"text": "A sentence.", "citations": ["5"]}]} for t in ("181", "q7")
        ]
    }
    run_path = _write(tmp_path, data, "mine.json")
    with pytest.raises(InputError, match="topic q7: field 'question'.*keep its journal, mine.journal.jsonl"):
        load_run(run_path)
    header = {"kind": "header", "topics": "own.json", "format": "biogen2025", "mode": "extractive",
              "index_dir": "i", "llm": "none"}  # fmt: skip
    rows = [header] + [
        {"kind": "topic", "topic_id": t, "question": q, "status": "answered"}
        for t, q in (("181", "Does my own question count?"), ("q7", "Is q7 mine?"))
    ]
    journal_path(run_path).write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = load_run(run_path)
    assert [e.question for e in run.entries] == ["Does my own question count?", "Is q7 mine?"]


def test_bioace_shape(tmp_path) -> None:
    data = [
        {
            "question_id": "q1",
            "question": "Why?",
            "machine_generated_answers": {
                "M1": {
                    "answer_sentences": [
                        {"sentence": "Because.", "citation_assessment": [{"cited_pmid": "9"}]}
                    ]
                }
            },
        }
    ]
    run = load_run(_write(tmp_path, data))
    assert run.format == "bioace" and run.entries[0].topic_id == "q1/M1"


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"results": [{"topic_id": "118"}]}, "topic 118: field 'answer': missing"),
        ({"results": [{"topic_id": "999", "answer": "x"}]}, "topic 999: field 'question'"),
        (
            {"results": [{"topic_id": "118", "answer": [{"text": "a", "citations": "12"}]}]},
            "topic 118: field 'answer[0].citations'",
        ),
        (
            {"answers": [{"topic_id": "3", "question": "q", "answer": {"sentences": [{"citations": []}]}}]},
            "topic 3: field 'answer.sentences.0.text'",
        ),
        (
            {
                "answers": [
                    {"topic_id": "3", "question": "q", "answer": {}},
                    {"topic_id": "3", "question": "q", "answer": {}},
                ]
            },
            "topic 3: field 'topic_id'",
        ),
        ({"foo": 1}, "unknown run format"),
    ],
)
def test_malformed_input_names_file_topic_field(tmp_path, data, needle) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as err:
        load_run(path)
    assert str(path) in str(err.value) and needle in str(err.value)


def test_gold_and_metrics(tmp_path) -> None:
    assert load_gold(_write(tmp_path, {"1": ["a", "b"]}, "g.json")) == {"1": ["a", "b"]}
    with pytest.raises(InputError, match="topic 2: field 'nuggets'"):
        load_gold(_write(tmp_path, '{"topic_id": "2", "nuggets": "a"}\n', "g.jsonl"))
    assert parse_metrics("citation, nuggets") == ["citation", "nuggets"]
    with pytest.raises(InputError):
        parse_metrics("recall")
