"""`biocite check` through the installed executable and `POST /v1/check` over a socket, on the real
support model (the shipped one, installed on first use: see conftest.py) and a real index of four
abstracts; `biocite train support` with a tiny recipe."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from biocite.errors import ModelError
from biocite.heads import META_FILE, PairClassifier
from biocite.index.build import build_index
from biocite.settings import Settings, load_settings
from biocite.shipped import shipped_origin
from biocite.support import ARTIFACT_VERSION, LABELS, SupportModel, support_dir
from biocite.support_eval import citint_claims
from tests.conftest import MINI_CORPUS, REPO, write_jsonl

CLAIM = "Aspirin reduced recurrent stroke."


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, SupportModel]:
    root = tmp_path_factory.mktemp("check")
    write_jsonl(root / "mini.jsonl", MINI_CORPUS)
    settings = load_settings("test", [f"home={root / 'home'}", f"index.dir={root / 'index'}"])
    build_index(settings, [root / "mini.jsonl"], progress=False)
    return settings, SupportModel.load(settings)  # installs the shipped model once (conftest)


def biocite(settings: Settings, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    exe = shutil.which("biocite") or str(Path(sys.executable).with_name("biocite"))
    overrides = ["--set", f"home={settings.home}", "--set", f"index.dir={settings.index_dir}"]
    return subprocess.run(
        [exe, *args, "--preset", "test", *overrides],
        input=stdin, capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip


def check_verdict(doc: dict, evidence: str) -> None:
    assert doc["label"] in LABELS
    assert abs(sum(doc["probs"].values()) - 1) < 1e-3
    for ev in doc["evidence"]:
        assert evidence[ev["start"] : ev["end"]] == ev["text"]
        for span in ev["phrases"]:
            assert evidence[span["start"] : span["end"]] == span["text"]


def test_check_claim_against_pmids_and_text(setup) -> None:
    settings, _ = setup
    # the second PMID as copied from the browser reads as the PMID
    done = biocite(
        settings,
        "check",
        CLAIM,
        "--pmid",
        "1001",
        "--pmid",
        "https://pubmed.ncbi.nlm.nih.gov/1002/",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    abstracts = {d["pmid"]: d["abstract"] for d in MINI_CORPUS}
    assert {s["pmid"] for s in doc["sources"]} == {"1001", "1002"}
    for source in doc["sources"]:
        check_verdict(source, abstracts[source["pmid"]])
    text = MINI_CORPUS[0]["abstract"]
    done = biocite(settings, "check", CLAIM, "--text", text, "--json")
    assert done.returncode == 0, done.stderr
    check_verdict(json.loads(done.stdout), text)
    readable = biocite(settings, "check", CLAIM, "--text", text)
    assert readable.returncode == 0 and "P(supports)" in readable.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "", "--text", "x"], "claim is empty"),
        (["check", CLAIM, "--pmid", "424242"], "unknown PMID 424242"),
        (["check", CLAIM], "give the evidence"),
        # limits are the user's to fix: exit 2 naming the option, not an internal error
        (["check", CLAIM, "--text", "a " * 25_001], "--text: the evidence text is 50002 characters"),
        (["check", CLAIM, *[f"--pmid={n}" for n in range(51)]], "--pmid: 51 PMIDs; the limit is 50"),
        (["check", CLAIM, "--pmid", " "], "--pmid: a PMID is empty"),
        (["check", CLAIM, "--text", " "], "--text: the evidence text is empty"),
    ],
)
def test_bad_input_exits_2_with_one_line(setup, args, message) -> None:
    settings, _ = setup
    done = biocite(settings, *args)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_pairs_file_one_verdict_per_line(setup, tmp_path) -> None:
    settings, _ = setup
    rows = [
        {"claim": CLAIM, "evidence": MINI_CORPUS[0]["abstract"]},
        {"claim": "Metformin lowered weight gain.", "pmids": ["1003"]},
        {"claim": "Vitamin D prevents hip fractures.", "pmids": ["1004", "1001"]},
    ]
    path = write_jsonl(tmp_path / "pairs.jsonl", rows)
    done = biocite(settings, "check", "--pairs", str(path))
    assert done.returncode == 0, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(out) == 3 and [o["claim"] for o in out] == [r["claim"] for r in rows]
    check_verdict(out[0], rows[0]["evidence"])
    path.write_text(json.dumps(rows[0]) + "\n" + json.dumps({"claim": "x", "pmids": ["77"]}) + "\n")
    bad = biocite(settings, "check", "--pairs", str(path))
    assert bad.returncode == 2 and "pairs.jsonl:2" in bad.stderr and "unknown PMID 77" in bad.stderr
    # standard input, written on Windows (a byte-order mark, CRLF): read once, judged the same
    piped = biocite(settings, "check", "--pairs", "-", stdin="\ufeff" + json.dumps(rows[0]) + "\r\n")
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["probs"] == out[0]["probs"]


def test_a_verdict_does_not_depend_on_what_else_is_checked_with_it(setup, tmp_path) -> None:
    """A pairs file of 16 real Citation-Integrity claims with their cited passages, checked in one call,
    gives each pair the verdict it gets checked alone. (When all pairs shared int8 batches, a passage's
    probabilities moved by up to 0.17 with its neighbours.)"""
    settings, model = setup
    claims, _ = citint_claims("dev")
    rows = [{"claim": c.claim, "evidence": " ".join(c.sentences)} for c in claims[:16]]
    done = biocite(settings, "check", "--pairs", str(write_jsonl(tmp_path / "pairs.jsonl", rows)))
    assert done.returncode == 0, done.stderr
    together = [json.loads(line)["probs"] for line in done.stdout.splitlines()]
    alone = [model.check(r["claim"], r["evidence"]).probs for r in rows]
    assert len(together) == len(alone) == 16
    for both in zip(together, alone, strict=True):
        assert max(abs(both[0][k] - both[1][k]) for k in LABELS) < 1e-3


def test_run_audit_writes_json_and_html(setup, tmp_path) -> None:
    settings, _ = setup
    run = {
        "team_id": "t",
        "run_name": "r1",
        "contact_email": "",
        "results": [
            {
                "topic_id": "1",
                "question": "Does aspirin prevent stroke?",
                "responses": [
                    {"text": "Aspirin reduced recurrent stroke.", "citations": ["1001"]},
                    {"text": "Knee function did not differ.", "citations": ["1002", "1003"]},
                    {"text": "Aspirin increased recurrent stroke over two years.", "citations": ["1001"]},
                    {"text": "Major bleeding was not rare.", "citations": ["1001"]},
                ],
            }
        ],
    }
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    done = biocite(settings, "check", "--run", str(path), "--out", str(tmp_path / "out"), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["citations"] == 5
    doc = json.loads((tmp_path / "out" / "check.json").read_text())
    labels = [c["label"] for s in doc["topics"][0]["sentences"] for c in s["citations"]]
    assert set(labels) <= {"Supports", "Contradicts", "Neutral", "Not relevant"} and len(labels) == 5
    reversed_cite = doc["topics"][0]["sentences"][2]["citations"][0]  # the finding said the other way round
    assert reversed_cite["label"] == "Contradicts" and reversed_cite["reversal"] == "opposite direction"
    denied_cite = doc["topics"][0]["sentences"][3]["citations"][0]  # denies what the abstract states
    assert denied_cite["label"] == "Contradicts" and denied_cite["reversal"] == "denied statement"
    page = (tmp_path / "out" / "check.html").read_text()
    assert "PMID 1001" in page and "the evidence says otherwise (opposite direction)" in page
    # the run read once: from standard input too (it was read twice, and the second read found it empty)
    piped = biocite(
        settings, "check", "--run", "-", "--out", str(tmp_path / "piped"), "--json", stdin=json.dumps(run)
    )
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["labels"] == summary["labels"]
    path.write_text("{not a run")
    bad = biocite(settings, "check", "--run", str(path))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_server_check_over_a_socket(setup) -> None:
    import uvicorn

    from biocite.app.server import create_app

    settings, _ = setup
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.time() + 60
        while not server.started and time.time() < deadline:
            time.sleep(0.1)
        base = f"http://127.0.0.1:{port}"
        r = httpx.post(f"{base}/v1/check", json={"claim": CLAIM, "pmids": ["1001"]}, timeout=120)
        assert r.status_code == 200, r.text
        doc = r.json()
        assert doc["pmid"] == "1001"
        check_verdict(doc, MINI_CORPUS[0]["abstract"])
        r = httpx.post(
            f"{base}/v1/check", json={"claim": CLAIM, "text": "Aspirin reduced stroke."}, timeout=60
        )
        assert r.status_code == 200 and r.json()["pmid"] is None
        r = httpx.post(f"{base}/v1/check", json={"claim": CLAIM, "pmids": ["999"]}, timeout=60)
        assert r.status_code == 422 and "unknown PMID 999" in r.json()["detail"]
        r = httpx.post(f"{base}/v1/check", json={"claim": " ", "text": "x"}, timeout=60)
        assert r.status_code == 422 and r.json()["detail"] == "claim: the claim is empty"
        r = httpx.post(f"{base}/v1/check", json={"claim": CLAIM, "pmids": ["1001", " "]}, timeout=60)
        assert r.status_code == 422 and r.json()["detail"] == "pmids: a PMID is empty"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_a_support_model_from_an_earlier_version_is_replaced_on_first_use(setup, tmp_path) -> None:
    settings, model = setup
    old = tmp_path / "support"
    shutil.copytree(support_dir(settings), old)
    meta = json.loads((old / META_FILE).read_text())
    (old / META_FILE).write_text(json.dumps({**meta, "support_version": 1}))
    settings = settings.model_copy(update={"support": settings.support.model_copy(update={"path": old})})
    with pytest.raises(ModelError, match="version"):
        SupportModel.load(settings, train_if_missing=False)
    retrained = SupportModel.load(settings)  # what `ask`, `check` and `evaluate` do: reinstall, not fail
    assert json.loads((old / META_FILE).read_text())["support_version"] == ARTIFACT_VERSION
    assert retrained.check(CLAIM, MINI_CORPUS[0]["abstract"]).label in LABELS


def quantized(model: SupportModel) -> bool:
    import torch

    modules = list(model.head.model.model.modules())
    dynamic = any("quantized" in type(m).__module__ for m in modules)
    assert dynamic != any(type(m) is torch.nn.Linear for m in modules)  # all Linear layers, or none
    return dynamic


def test_the_support_model_scores_with_the_int8_weights_its_aggregator_was_fitted_on(setup) -> None:
    settings, model = setup
    assert model.meta["int8"] is True and model.folder == support_dir(settings)
    assert quantized(model)
    # the artifact on disk keeps the fp32 weights: a plain load is fp32
    assert not quantized(SupportModel(PairClassifier.load(support_dir(settings)), model.aggregator, {}))
    verdict = model.check(CLAIM, MINI_CORPUS[0]["abstract"])
    assert verdict.label == "supports" and not verdict.verbatim and not verdict.clause_quote


def test_a_claim_quoted_word_for_word_from_the_abstract_is_supported(setup) -> None:
    settings, _ = setup
    quote = "aspirin reduced recurrent stroke by 22% over two years"  # sentence 2 of PMID 1001, recased
    done = biocite(settings, "check", quote, "--pmid", "1001", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["label"] == "supports" and doc["verbatim"] is True and doc["probs"]["supports"] == 1.0
    assert doc["evidence"][0]["text"] == "Aspirin reduced recurrent stroke by 22% over two years."


def test_a_clause_the_evidence_asserts_is_supported_and_a_conditioned_one_is_left_to_the_model(setup) -> None:
    settings, _ = setup
    text = (
        "We treated 40 children. Since sedation often fails in toddlers, ketamine was given intranasally and was "
        "well tolerated in all cases. If the dose was doubled, vomiting increased."
    )
    done = biocite(settings, "check", "Ketamine was given intranasally.", "--text", text, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["label"] == "supports" and doc["probs"]["supports"] == 1.0
    assert doc["clause_quote"] is True and doc["verbatim"] is False
    assert doc["evidence"][0]["text"].startswith("Since sedation often fails")
    conditioned = json.loads(
        biocite(settings, "check", "Vomiting increased.", "--text", text, "--json").stdout
    )
    assert conditioned["clause_quote"] is False and conditioned["verbatim"] is False


def test_first_use_installs_the_shipped_model_and_a_model_trained_here_is_kept(setup, tmp_path) -> None:
    settings, _ = setup
    home = tmp_path / "support"
    env = {**os.environ, "BIOCITE_SUPPORT__PATH": str(home), "BIOCITE_SUPPORT__SOURCE": "shipped"}
    evidence = MINI_CORPUS[0]["abstract"]

    def check() -> subprocess.CompletedProcess:
        exe = shutil.which("biocite") or str(Path(sys.executable).with_name("biocite"))
        return subprocess.run([exe, "check", CLAIM, "--text", evidence, "--json"], capture_output=True, text=True,
                              timeout=600, cwd=REPO, env=env)  # fmt: skip

    first = check()
    assert first.returncode == 0, first.stderr
    assert "installing the shipped support model" in first.stderr
    assert "MISSING" not in first.stderr  # the backbone's load report stays quiet
    assert "Warning" not in first.stderr, first.stderr  # it warned it could not re-enable progress bars
    assert json.loads((home / META_FILE).read_text())["origin"] == shipped_origin()
    check_verdict(json.loads(first.stdout), evidence)
    again = check()
    assert again.returncode == 0 and "installing" not in again.stderr

    # `biocite train support` (tiny recipe from conftest's environment) writes a model that is kept
    trained = subprocess.run(
        [shutil.which("biocite") or str(Path(sys.executable).with_name("biocite")), "train", "support",
         "--out", str(home), "--device", "cpu", "--json"],
        capture_output=True, text=True, timeout=900, cwd=REPO, env=env,
    )  # fmt: skip
    assert trained.returncode == 0, trained.stderr[-2000:]
    meta = json.loads((home / META_FILE).read_text())
    assert meta["origin"] == f"trained:{meta['train_data_sha256'][:16]}" and meta["train_pairs"] == 96
    assert meta["int8"] is True and quantized(SupportModel.from_folder(home, settings))
    kept = check()
    assert kept.returncode == 0 and "installing" not in kept.stderr
    assert json.loads((home / META_FILE).read_text())["origin"].startswith("trained:")


def test_an_abstracts_metadata_is_not_evidence(setup) -> None:
    """A keyword line names every word of a claim about its topic; the model scored it "supports" (0.80)."""
    settings, model = setup
    keywords = "Keywords: aspirin; recurrent stroke; secondary prevention."
    alone = model.check(CLAIM, keywords)
    assert alone.label == "not_relevant" and alone.evidence == [] and alone.probs["not_relevant"] == 1.0
    assert model.check(CLAIM, "  ").label == "not_relevant"  # an empty passage scored "contradicts" 0.41
    finding = "Aspirin reduced recurrent stroke by 22% over two years."
    both = model.check(CLAIM, f"{finding} {keywords}")
    assert [e.text for e in both.evidence] == [finding]
    readable = biocite(settings, "check", CLAIM, "--text", keywords)
    assert readable.returncode == 0 and readable.stdout.startswith("not_relevant")
    assert "no sentence to judge" in readable.stdout


@dataclasses.dataclass(frozen=True)
class RuleCase:
    """A claim the cross-encoder alone judged supported that a support rule overrules, and its fix."""

    text: str
    claim: str
    label: str
    field: str  # the verdict's field that says how: "reversal", "other_population" or "added_clause"
    value: str
    first_evidence: str  # how the sentence the rule read starts (shown first)
    shown: str  # the CLI's line
    fixed: str  # the claim said as the evidence says it: the rule is silent


RULE_CASES = {
    # "aspirin is superior to warfarin" read as supported by "warfarin is superior to aspirin" (0.93): word
    # order is the rule's to read (biocite.reversals)
    "swapped comparison": RuleCase(
        text="We pooled six trials of stroke prevention in atrial fibrillation. Overall, in high-risk patients, "
        "warfarin is superior to aspirin in preventing strokes, with a relative risk reduction of 36%.",
        claim="Aspirin is superior to warfarin for preventing strokes in atrial fibrillation.",
        label="contradicts",
        field="reversal",
        value="swapped comparison",
        first_evidence="Overall, in high-risk patients, warfarin is superior",
        shown="says otherwise (swapped comparison): contradicted",
        fixed="Warfarin is superior to aspirin for preventing strokes in atrial fibrillation.",
    ),
    # supports (0.88) to "... superior to budesonide maintenance" against "... superior to terbutaline but inferior
    # to budesonide maintenance therapy" (the README demo's abstract): a subject written once is the rule's to read
    "elided subject": RuleCase(
        text="We randomized 3849 patients with mild asthma. Budesonide-formoterol was superior to terbutaline "
        "(34.4% vs. 31.1% of weeks) but inferior to budesonide maintenance therapy (34.4% and 44.4%).",
        claim="Budesonide-formoterol was superior to budesonide maintenance therapy for asthma control.",
        label="contradicts",
        field="reversal",
        value="swapped comparison",
        first_evidence="Budesonide-formoterol was superior to terbutaline",
        shown="says otherwise (swapped comparison): contradicted",
        fixed="Budesonide-formoterol was inferior to budesonide maintenance therapy for asthma control.",
    ),
    # supports (0.79) to "reduced ... by 46%" against "reduced ... by 64%": the number is the rule's to read
    # (biocite.changed_numbers)
    "different number": RuleCase(
        text="We randomized 3849 patients with mild asthma. As-needed budesonide-formoterol reduced the "
        "annualized rate of severe exacerbations by 64% compared with terbutaline (rate ratio 0.36).",
        claim="As-needed budesonide-formoterol reduced the rate of severe exacerbations by 46% compared with "
        "terbutaline.",
        label="contradicts",
        field="reversal",
        value="different number",
        first_evidence="As-needed budesonide-formoterol reduced the annualized rate",
        shown="says otherwise (different number): contradicted",
        fixed="As-needed budesonide-formoterol reduced the rate of severe exacerbations by 64% compared with "
        "terbutaline.",
    ),
    # supports (0.94) to "In children ..." against a trial of adults: in whom is the rule's to read
    # (biocite.populations)
    "other population": RuleCase(
        text="We randomized 1,203 adults aged 40 to 75 years with type 2 diabetes to metformin or placebo. "
        "Metformin reduced HbA1c by 0.8% compared with placebo.",
        claim="In children with type 2 diabetes, metformin reduced HbA1c compared with placebo.",
        label="neutral",
        field="other_population",
        value="adults, not children",
        first_evidence="We randomized 1,203 adults",
        shown="the evidence is about adults, not children",
        fixed="In adults with type 2 diabetes, metformin reduced HbA1c compared with placebo.",
    ),
    # supports (0.54) with a clause the evidence never mentions appended: what the passage does not say is the
    # rule's to read (biocite.added_clauses)
    "added clause": RuleCase(
        text="We randomized 1,203 adults aged 40 to 75 years with type 2 diabetes to metformin or placebo. "
        "Metformin reduced HbA1c by 0.8% compared with placebo.",
        claim="In adults with type 2 diabetes, metformin reduced HbA1c, as shown previously by genome-wide "
        "sequencing of twins.",
        label="neutral",
        field="added_clause",
        value="as shown previously by genome-wide sequencing of twins",
        first_evidence="Metformin reduced HbA1c by 0.8%",
        shown='no sentence of the evidence mentions "as shown previously by genome-wide sequencing of twins"',
        fixed="In adults with type 2 diabetes, metformin reduced HbA1c.",
    ),
}


@pytest.fixture(scope="module")
def rule_verdicts(setup, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict]:
    """Every rule case's claim and its fixed claim, judged by one `biocite check --pairs` (each line is the verdict
    `check --json` prints; one process for all, where two per case had taken 14 s of CI): (claim, text) -> verdict."""
    settings, _ = setup
    pairs = [(claim, case.text) for case in RULE_CASES.values() for claim in (case.claim, case.fixed)]
    path = write_jsonl(
        tmp_path_factory.mktemp("rules") / "pairs.jsonl", [{"claim": c, "evidence": t} for c, t in pairs]
    )
    done = biocite(settings, "check", "--pairs", str(path))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return dict(zip(pairs, map(json.loads, done.stdout.splitlines()), strict=True))


@pytest.mark.parametrize("case", RULE_CASES.values(), ids=RULE_CASES.keys())
def test_a_support_rule_overrules_the_cross_encoder(setup, rule_verdicts, case: RuleCase) -> None:
    """The installed `biocite check`: the rule's label, how (JSON and the CLI line), the sentence it read
    first; the same claim said as the evidence says it is left alone."""
    settings, _ = setup
    doc = rule_verdicts[case.claim, case.text]
    assert doc["label"] == case.label and doc[case.field] == case.value
    other = {"reversal", "other_population", "added_clause"} - {case.field}
    assert all(doc[f] is None for f in other)
    assert doc["evidence"][0]["text"].startswith(case.first_evidence)
    shown = biocite(settings, "check", case.claim, "--text", case.text)
    assert shown.returncode == 0 and case.shown in shown.stdout
    assert rule_verdicts[case.fixed, case.text][case.field] is None
