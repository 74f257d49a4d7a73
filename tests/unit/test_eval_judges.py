"""Judge cache (resume, torn lines), label parsing, LLM judge with a fake chat model."""

from __future__ import annotations

import json

from biocite.evaluator.judges import (
    COMPLETENESS_LABELS,
    SUPPORT_LABELS,
    UNDETERMINED,
    JudgeCache,
    LLMJudge,
    parse_label,
)


class FakeChat:
    def __init__(self, replies):
        self.replies = list(replies)
        self.calls = 0

    def invoke(self, messages, **kwargs):
        self.calls += 1

        class R:
            content = self.replies.pop(0)

        return R()


def test_parse_label() -> None:
    assert parse_label("Supports.", SUPPORT_LABELS) == "Supports"
    assert parse_label("  notrelevant", SUPPORT_LABELS) == "Not relevant"
    assert parse_label("It is Not Relevant here", SUPPORT_LABELS) == "Not relevant"
    assert parse_label("irrelevant", SUPPORT_LABELS) == "Not relevant"
    assert parse_label("required", COMPLETENESS_LABELS) == "Required"
    assert parse_label("I cannot tell", SUPPORT_LABELS) == UNDETERMINED


def test_llm_judge_caches_and_logs_raw(tmp_path) -> None:
    path = tmp_path / "cache.jsonl"
    chat = FakeChat(["Supports", "hmm, maybe?"])
    judge = LLMJudge(chat, "fake", "support", JudgeCache(path))
    out = judge.judge([("s1", "w1"), ("s2", "w2")])
    assert [v.label for v in out] == ["Supports", UNDETERMINED]
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[1]["raw"] == "hmm, maybe?" and lines[1]["label"] == UNDETERMINED
    # a new process resumes from the file: no model call, same labels
    with path.open("a") as f:
        f.write('{"key": "torn')  # interrupted write
    again = LLMJudge(FakeChat([]), "fake", "support", JudgeCache(path))
    out2 = again.judge([("s1", "w1"), ("s2", "w2")])
    assert [v.label for v in out2] == ["Supports", UNDETERMINED] and all(v.cached for v in out2)
    # another prompt version or model is another key
    assert JudgeCache.key("m", "v1", "support", ["a", "b"]) != JudgeCache.key(
        "m", "v2", "support", ["a", "b"]
    )


def test_shipped_nugget_answers_are_served_only_for_the_same_model_file_and_prompt(tmp_path) -> None:
    from biocite.evaluator.judges import NuggetJudge, ShippedNuggetAnswers, nugget_prompt_sha256

    def never() -> None:
        raise AssertionError("the LLM was loaded")

    shipped = ShippedNuggetAnswers(llm="m", llm_sha256="s" * 64, prompt_sha256=nugget_prompt_sha256(),
                                   answers=["Aspirin lowers fever."], rows=[(0, "Aspirin lowers fever", 0.9)])  # fmt: skip
    judge = NuggetJudge(never, "m", JudgeCache(tmp_path / "c.jsonl"))
    assert judge.preload(shipped, "s" * 64) == 1
    assert judge("Aspirin lowers fever.", "Aspirin lowers fever") == 0.9  # from memory, no LLM loaded
    assert not (tmp_path / "c.jsonl").exists()  # the disk cache keeps this machine's own calls only
    exported = judge.export([("Aspirin lowers fever.", "Aspirin lowers fever")], "m", "s" * 64)
    assert exported == shipped
    for other in (
        NuggetJudge(never, "other", JudgeCache(None)).preload(shipped, "s" * 64),  # another model
        NuggetJudge(never, "m", JudgeCache(None)).preload(shipped, "t" * 64),  # another file of that name
        NuggetJudge(never, "m", JudgeCache(None)).preload(
            shipped.model_copy(update={"prompt_sha256": "x"}), "s" * 64
        ),
    ):
        assert other == 0
