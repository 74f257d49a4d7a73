"""End to end on the real MiniLM: calibrate the matcher on a K-QA subset, train a tiny head, evaluate a run,
write metrics.json + report.html, re-run from the cache, compare two runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from biocite.app.evaluation import compare_runs, evaluate_run_file  # noqa: E402
from biocite.evaluator.calibrate import calibrate_nuggets  # noqa: E402
from biocite.evaluator.nuggets import MatchModel  # noqa: E402
from biocite.evaluator.sources import DictSource  # noqa: E402
from biocite.kqa import load_nli_labels, load_questions  # noqa: E402
from biocite.records import Answer, AnswerSentence, Citation, Document  # noqa: E402
from biocite.settings import load_settings  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedder():
    from biocite.embedder import Embedder

    return Embedder("minilm")


def test_calibrate_on_subset_round_trips(tmp_path, embedder) -> None:
    qs = load_questions()[:40]
    nli = [r for r in load_nli_labels() if r.question in {q.question for q in qs}]
    m = calibrate_nuggets(embedder, n_trials=8, questions=qs, nli=nli)
    assert 0.01 <= m.threshold <= 0.99 and len(m.fit_data_sha256) == 64
    assert m.selection["mixture_means"][m.match_component] == max(m.selection["mixture_means"])
    m.save(tmp_path / "m.json")
    back = MatchModel.load(tmp_path / "m.json")
    assert back.model_id == m.model_id
    # physicians' own must-have statements are mostly matched on held-out questions
    assert m.metrics["test"]["physician"]["f1"] > 0.6


def test_evaluate_compare_and_cache(tmp_path, embedder) -> None:
    from biocite.heads import PairClassifier

    pairs = [
        ("Aspirin reduces fever.", "Aspirin lowered fever in adults."),
        ("Zinc helps.", "Cats purr."),
    ] * 6
    labels = ["Supports", "Not relevant"] * 6
    head = PairClassifier.train(
        pairs,
        labels,
        label_set=["Supports", "Contradicts", "Neutral", "Not relevant"],
        epochs=1,
        batch_size=4,
        max_length=64,
        progress=False,
    )
    head.save(tmp_path / "citation_head", meta={"train_data_sha256": "t" * 64})
    matcher = calibrate_nuggets(embedder, n_trials=5, questions=load_questions()[:20], nli=[])
    matcher.save(tmp_path / "matcher.json")
    settings = load_settings(
        "default",
        [
            f"home={tmp_path}",
            "evaluator.judge=head",
            f"evaluator.citation_head={tmp_path / 'citation_head'}",
            f"evaluator.nugget_matcher={tmp_path / 'matcher.json'}",
            "evaluator.bootstrap_samples=200",
        ],
    )
    docs = {
        "1": Document(pmid="1", title="Aspirin", abstract="Aspirin lowered fever in adults. It was cheap.")
    }

    def run_file(name: str, cite: str) -> str:
        answers = [
            {
                "topic_id": "t1",
                "question": "Does aspirin reduce fever?",
                "answer": json.loads(
                    Answer(
                        question="Does aspirin reduce fever?",
                        sentences=[
                            AnswerSentence(text="Aspirin reduces fever.", citations=[Citation(pmid=cite)])
                        ],
                    ).model_dump_json()
                ),
            },
            {"topic_id": "t2", "question": "q", "answer": {"question": "q", "abstained": True}},
        ]
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"run_name": name, "answers": answers}))
        return path

    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"t1": ["Aspirin reduces fever", "Ibuprofen reduces pain"]}))
    a = run_file("a", "1")
    doc = evaluate_run_file(
        settings,
        a,
        tmp_path / "out",
        metrics=["citation", "correctness", "nuggets"],
        gold_path=gold,
        source=DictSource(docs),
        progress=False,
    )
    assert (tmp_path / "out" / "report.html").read_text().startswith("<!DOCTYPE html>")
    saved = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert (
        saved["overall"]["abstained"] == 1 and saved["overall"]["metrics"]["citation_coverage"]["mean"] == 1.0
    )
    assert saved["overall"]["metrics"]["nugget_recall"]["n"] == 1
    agreement = saved["judges"]["nugget_matcher_agreement"]  # the judge's own quality, beside its scores
    assert (
        agreement.startswith("K-QA held-out questions: physician answers F1 ")
        and "matching every" in agreement
    )
    assert "nugget_matcher_agreement" in (tmp_path / "out" / "report.html").read_text()
    assert doc["timing"]["cache_misses"] > 0
    again = evaluate_run_file(
        settings, a, tmp_path / "out2", metrics=["citation"], source=DictSource(docs), progress=False
    )
    assert again["timing"]["cache_misses"] == 0 and again["timing"]["cache_hits"] > 0
    b = run_file("b", "404")
    cmp = compare_runs(settings, a, b, tmp_path / "cmp", metrics=["citation"], source=DictSource(docs))
    assert cmp["metrics"]["citation_coverage"]["mean_diff"] == 0.0
    assert (tmp_path / "cmp" / "compare.json").is_file()


def _biocite(home, *args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("biocite") or str(Path(sys.executable).with_name("biocite"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIOCITE_")}
    env.update(BIOCITE_HOME=str(home), BIOCITE_PRESET="test", HF_HUB_OFFLINE="1")
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=600, env=env)


def test_calibrate_completeness_says_borderline_and_reaches_the_issue_figure(tmp_path) -> None:
    """The installed command fits the judge on K-QA train questions and reports the held-out questions: the
    fine-tuned head it replaces never said Borderline (F1 0.0, macro-F1 0.511)."""
    done = _biocite(tmp_path, "calibrate", "completeness", "--json")
    assert done.returncode == 0, done.stderr
    meta = json.loads(done.stdout)
    m = meta["metrics"]
    assert m["macro_f1"] >= 0.65 and m["per_label_f1"]["Borderline"] > 0.3, m
    assert (tmp_path / "models" / "evaluator" / "completeness_head" / "judge.json").is_file()
    # seeded: the same figures again (tests/unit/test_completeness_judge.py; a second run here took 45 s of CI)


def test_first_use_replaces_an_earlier_fine_tuned_head_and_keeps_a_named_one(tmp_path, monkeypatch) -> None:
    """The judge is trained on first use over an earlier biocite's head (with hashed word vectors: what is tested
    is the replacement, and the real embedder's training took 45 s of CI; the figures are the calibrate test's)."""
    from biocite.app.evaluation import _judge, head_path
    from biocite.evaluator import completeness
    from biocite.evaluator.heads import COMPLETENESS_HEAD_LABELS
    from biocite.evaluator.judges import JudgeCache
    from biocite.heads import PairClassifier
    from tests.unit.agent_fakes import HashEmbedder

    def tiny_head(folder) -> None:
        pairs = [("Does aspirin work?", "Aspirin lowered fever."), ("Does aspirin work?", "Cats purr.")] * 4
        head = PairClassifier.train(pairs, ["Required", "Unnecessary"] * 4, label_set=COMPLETENESS_HEAD_LABELS,
                                    epochs=1, batch_size=4, max_length=32, progress=False)  # fmt: skip
        head.save(folder, meta={"train_data_sha256": "t" * 64})

    monkeypatch.setattr(completeness, "Embedder", lambda name: HashEmbedder())
    settings = load_settings("test", [f"home={tmp_path}"])
    default = head_path(settings, "completeness")
    tiny_head(default)  # what an earlier biocite trained on first use
    cache = JudgeCache(tmp_path / "cache.jsonl")
    judge = _judge(settings, "completeness", cache, "support")
    assert (default / "judge.json").is_file() and judge.name != "head:completeness:tttttttttttt"
    assert sorted(f.name for f in default.iterdir()) == ["judge.json"]  # the replaced head's weights are gone
    pairs = [("Does aspirin prevent stroke?", "Aspirin reduced the risk of ischaemic stroke by 20%."),
             ("Does aspirin prevent stroke?", "Always talk to your doctor before starting any medication.")]  # fmt: skip
    assert [v.label for v in judge.judge(pairs)] == ["Required", "Unnecessary"]
    named = tmp_path / "mine"
    tiny_head(named)
    ev = settings.evaluator.model_copy(update={"completeness_head": named})
    kept = _judge(settings.model_copy(update={"evaluator": ev}), "completeness", cache, "support")
    assert kept.name == "head:completeness:tttttttttttt" and not (named / "judge.json").exists()


def test_calibrate_nuggets_reaches_the_measured_figure_and_an_earlier_matcher_is_refitted(tmp_path) -> None:
    """The installed command fits the token-recall matcher on K-QA train questions (seeded: the held-out
    figures of bench/kqa_token_recall.py). At the default path a version-1 matcher (clause cosines) is refitted
    on first use; one the user names is refused with the command to run."""
    from biocite.app.evaluation import load_or_calibrate_matcher, matcher_path
    from biocite.errors import ModelError

    done = _biocite(tmp_path, "calibrate", "nuggets", "--json")
    assert done.returncode == 0, done.stderr
    test = json.loads(done.stdout)["metrics"]["test"]
    assert test["physician"]["f1"] > 0.95, test  # 0.869 with the clause cosine
    assert test["nli"]["f1"] > test["nli"]["match_everything_f1"] + 0.02, test  # 0.5865 vs 0.5492

    gold = {  # statements of two answers of the shipped BioGen run, each beside one no answer makes
        "122": ["T-wave abnormalities can be related to a congenital coronary anomaly.",
                "Smoking tobacco lowers blood pressure in adolescents."],
        "123": ["A novel FBN1 mutation causes Marfan syndrome in the family.",
                "Aspirin prevents migraine in children."],
    }  # fmt: skip
    (tmp_path / "gold.json").write_text(json.dumps(gold))
    run = Path(__file__).parents[2] / "bench" / "runs" / "biogen2024_extractive.json"
    out = tmp_path / "out"
    done = _biocite(tmp_path, "evaluate", str(run), "--gold", str(tmp_path / "gold.json"),
                    "--metrics", "nuggets", "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    scored = {q["topic_id"]: q for q in json.loads((out / "metrics.json").read_text())["questions"]}
    for topic in gold:
        assert [a[1] for a in scored[topic]["nuggets"]["alignments"]] == [0], scored[topic]["nuggets"]
    assert "token recall" in (out / "report.html").read_text()

    settings = load_settings("test", [f"home={tmp_path}"])
    default = matcher_path(settings)
    earlier = json.loads(default.read_text()) | {"version": 1}
    default.write_text(json.dumps(earlier))
    refitted = load_or_calibrate_matcher(settings)
    assert refitted.version == 2 and refitted.metrics["test"] == test
    named = tmp_path / "mine.json"
    named.write_text(json.dumps(earlier))
    ev = settings.evaluator.model_copy(update={"nugget_matcher": named})
    with pytest.raises(ModelError, match="re-run `biocite calibrate nuggets`"):
        load_or_calibrate_matcher(settings.model_copy(update={"evaluator": ev}))


def test_the_llm_matcher_is_fitted_on_llm_answers_and_read_with_its_own_llm(tmp_path, embedder) -> None:
    """`evaluator.nugget_score=llm` on the real SmolLM2 (plumbing only: its judgements are noise): fitted on the
    physician-labelled rows of a few K-QA questions, then the installed command scores a run with it, caches each
    LLM call, and refuses it with another LLM configured."""
    from biocite.app.evaluation import nugget_judge
    from biocite.evaluator.judges import JudgeCache
    from biocite.kqa import split_of
    from biocite.models import install_models

    settings = load_settings("test", [f"home={tmp_path}", "llm.model=smollm2", "evaluator.nugget_score=llm"])
    list(install_models(settings, ["smollm2"]))
    rows = load_nli_labels()
    sample = [
        r for side in ("train", "test") for r in [r for r in rows if split_of(r.question, 13) == side][:6]
    ]
    judge = nugget_judge(settings, JudgeCache(tmp_path / "fit-cache.jsonl"))
    matcher = calibrate_nuggets(
        embedder, n_trials=5, questions=[], nli=sample, yes_probability=judge, llm=judge.name
    )
    assert (
        matcher.score == "llm-yes"
        and matcher.llm == "llm:smollm2"
        and "physician" not in matcher.metrics["test"]
    )
    assert matcher.metrics["test"]["nli"]["n"] == 6 and len(judge.cache) == 12
    matcher.save(tmp_path / "matcher.json")

    gold = {"122": ["T-wave abnormalities can be related to a congenital coronary anomaly."]}
    (tmp_path / "gold.json").write_text(json.dumps(gold))
    run = Path(__file__).parents[2] / "bench" / "runs" / "biogen2024_extractive.json"
    args = ["evaluate", str(run), "--gold", str(tmp_path / "gold.json"), "--metrics", "nuggets",
            "-s", "evaluator.nugget_score=llm", "-s", f"evaluator.nugget_matcher={tmp_path / 'matcher.json'}"]  # fmt: skip
    done = _biocite(tmp_path, *args, "-s", "llm.model=smollm2", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert (
        "llm-yes:llm:smollm2" in doc["judges"]["nugget_matcher"]
        and doc["judges"]["nugget_score"] == "llm-yes"
    )
    assert "LLM P(yes)" in (tmp_path / "out" / "report.html").read_text()
    assert doc["overall"]["metrics"]["nugget_recall"]["n"] == 1
    cache = (tmp_path / "cache" / "evaluator" / "judge_cache.jsonl").read_text().splitlines()
    assert [json.loads(line)["task"] for line in cache].count("nugget") == 1  # one (nugget, answer) call
    refused = _biocite(tmp_path, *args, "-s", "llm.model=qwen0.5b", "--out", str(tmp_path / "out2"))
    assert refused.returncode != 0 and "fitted on llm:smollm2's P(yes)" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr


def test_the_default_llms_matcher_fits_from_its_shipped_answers_without_loading_it(tmp_path) -> None:
    """qwen1.5b's K-QA answers ship in data/kqa/: the installed command fits its LLM matcher in seconds in a
    home where that model is not even installed, and reaches bench/kqa_llm_matcher.py's held-out figure."""
    done = _biocite(tmp_path, "calibrate", "nuggets", "-s", "evaluator.nugget_score=llm", "-s", "llm.model=qwen1.5b",
                    "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    matcher = json.loads(done.stdout)
    assert matcher["score"] == "llm-yes" and matcher["llm"] == "llm:qwen1.5b"
    test = matcher["metrics"]["test"]["nli"]
    assert test["f1"] > 0.68 and test["f1"] > test["match_everything_f1"] + 0.1, (
        test
    )  # 0.6923; token recall 0.5865
    assert not (tmp_path / "models" / "qwen1.5b").exists()
