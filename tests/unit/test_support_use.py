"""Where the support model is used: the evaluator's judge and the agent's verify step (a rule-based stand-in
for the model, so these run in milliseconds; the real model is exercised in tests/integration)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from agent_fakes import FakeRetriever, agent_settings, fake_model

from biocite.agent.graph import Agent
from biocite.evaluator.evaluate import Evaluator
from biocite.evaluator.judges import JudgeCache, SupportJudge
from biocite.evaluator.runs import RunEntry
from biocite.evaluator.sources import DictSource
from biocite.records import Answer, AnswerSentence, Citation, Document
from biocite.support import LABELS, SupportVerdict


class RuleModel:
    """supports when every content word of the claim (> 4 letters) is in the evidence; contradicts on
    'not'; else not_relevant. Records what it was asked."""

    name = "support:rule"

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def check_many(self, pairs: Sequence[tuple[str, str]]) -> list[SupportVerdict]:
        self.asked.extend(pairs)
        out = []
        for claim, evidence in pairs:
            words = [w.strip(".,").lower() for w in claim.split() if len(w.strip(".,")) > 4]
            if " not " in f" {evidence.lower()} ":
                label = "contradicts"
            elif words and all(w in evidence.lower() for w in words):
                label = "supports"
            else:
                label = "not_relevant"
            probs = {lab: (0.97 if lab == label else 0.01) for lab in LABELS}
            out.append(SupportVerdict(label=label, probs=probs, evidence=[]))  # type: ignore[arg-type]
        return out


DOCS = {
    "1": Document(
        pmid="1", title="Aspirin", abstract="We ran a trial. Aspirin reduces fever. It is cheap. Dose low."
    ),
    "2": Document(pmid="2", title="Zinc", abstract="Zinc shortens colds in adults."),
}


def test_support_judge_reads_whole_abstracts_maps_labels_and_caches(tmp_path) -> None:
    model = RuleModel()
    judge = SupportJudge(model, JudgeCache(tmp_path / "cache.jsonl"))
    evaluator = Evaluator(metrics=["citation"], source=DictSource(DOCS), support_judge=judge)
    entry = RunEntry(
        topic_id="t",
        question="q?",
        answer=Answer(
            question="q?",
            sentences=[
                AnswerSentence(
                    text="Aspirin reduces fever.", citations=[Citation(pmid="1"), Citation(pmid="2")]
                )
            ],
        ),
    )
    result = evaluator.evaluate_entry(entry)
    assert [c.label for c in result.sentences[0].citations] == ["Supports", "Not relevant"]
    # one judgement per cited abstract (title + all sentences), not one per 3-sentence window
    assert (
        len(model.asked) == 2 and "Dose low." in model.asked[0][1] and "We ran a trial." in model.asked[0][1]
    )
    again = SupportJudge(model, JudgeCache(tmp_path / "cache.jsonl")).judge(model.asked[:1])
    assert (
        again[0].cached and again[0].label == "Supports" and again[0].probs["Supports"] == pytest.approx(0.97)
    )


def test_verify_step_uses_the_support_model_and_recites() -> None:
    # PMID 111 is metformin/weight, 222 statins/muscle pain (agent_fakes); the sentence cites [1] wrongly.
    agent = Agent(agent_settings(), retriever=FakeRetriever(), chat_model=fake_model(
        "Statin therapy was associated with muscle pain in patients [1]."))  # fmt: skip
    agent._support_model = model = RuleModel()
    question = "Does metformin reduce body weight in diabetes, and does statin therapy cause muscle pain?"
    answer = agent.ask(question, mode="generate")
    assert model.asked, "the verifier did not ask the support model"
    assert answer.mode == "generate", answer.trace.notes
    assert [c.pmid for c in answer.sentences[0].citations] == ["222"]
    assert answer.sentences[0].support == pytest.approx(0.97)


def test_verify_step_drops_what_the_model_does_not_support() -> None:
    agent = Agent(agent_settings(), retriever=FakeRetriever(), chat_model=fake_model(
        "Metformin cures pancreatic cancer in elderly smokers [1]."))  # fmt: skip
    agent._support_model = RuleModel()
    answer = agent.ask("Does metformin reduce body weight in type 2 diabetes?", mode="generate")
    assert answer.mode == "extractive"
    assert any("1 dropped" in note for note in answer.trace.notes)
