"""One chat-model interface for local GGUF files (llama.cpp in-process) and OpenAI-compatible endpoints.

`make_chat_model(settings)` returns a LangChain `BaseChatModel`:
- backend `llamacpp`: `LlamaCppChatModel`, a thin LangChain wrapper around `xllamacpp.Server` (llama.cpp's
  server running in-process, OpenAI-shaped requests and responses, no HTTP hop). Models load once per
  process, cached by (path, n_ctx, threads).
- backend `openai`: `langchain_openai.ChatOpenAI` (vLLM, Ollama, llama.cpp server, OpenAI), with transport
  failures turned into one-line `ModelError`s.

Both put OpenAI-shaped logprobs into `AIMessage.response_metadata["logprobs"]`, which `yes_probability`
reads to turn a yes/no judgement into a calibrated P(yes).
"""

from __future__ import annotations

import math
import os
import queue
import string
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, convert_to_openai_messages
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field, SecretStr

from biocite.errors import ModelError
from biocite.models import model_path
from biocite.settings import Settings

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

TOP_LOGPROBS = 10  # OpenAI allows at most 20
LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "[::1]", "host.docker.internal")

# --- local llama.cpp ------------------------------------------------------------------------------------

_SERVERS: dict[tuple[str, int, int], Any] = {}
_SERVERS_LOCK = threading.Lock()


def load_server(path: str, n_ctx: int, threads: int) -> Any:
    """The in-process llama.cpp server for one GGUF file, loaded once per process and parameters."""
    key = (str(Path(path).resolve()), n_ctx, threads)
    with _SERVERS_LOCK:
        if key not in _SERVERS:
            _SERVERS[key] = _start_server(*key)
        return _SERVERS[key]


def unload_models() -> None:
    """Free every loaded local model (the next request loads it again)."""
    with _SERVERS_LOCK:
        _SERVERS.clear()


def _start_server(path: str, n_ctx: int, threads: int) -> Any:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # 2-thread generation collapses without it
    import xllamacpp

    if not Path(path).is_file():
        raise ModelError(f"model file not found: {path}")
    params = xllamacpp.CommonParams()
    params.model.path = path
    params.n_ctx = n_ctx
    params.n_parallel = 1  # one slot owning the whole context; requests queue
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.verbosity = 0  # llama.cpp logs go to stderr otherwise, one block per request
    try:
        return xllamacpp.Server(params)
    except RuntimeError as exc:
        raise ModelError(f"llama.cpp could not load {path}: {exc}") from None


def _raise_for_error(response: dict[str, Any], path: str) -> None:
    error = response.get("error")
    if error is None and "code" in response and "choices" not in response:
        error = response  # xllamacpp's own wrapper for unparseable output
    if error is not None:
        message = error.get("message", error) if isinstance(error, dict) else error
        raise ModelError(f"llama.cpp ({Path(path).name}): {message}")


def _usage(usage: dict[str, Any] | None) -> UsageMetadata | None:
    if not usage:
        return None
    return UsageMetadata(
        input_tokens=usage.get("prompt_tokens", 0),
        output_tokens=usage.get("completion_tokens", 0),
        total_tokens=usage.get("total_tokens", 0),
    )


class LlamaCppChatModel(BaseChatModel):
    """A local GGUF chat model run by llama.cpp in-process (xllamacpp), OpenAI-shaped in and out.

    Request-level options (`logprobs`, `top_logprobs`, `max_tokens`, `temperature`, `stop`,
    `response_format`, `seed`, ...) can be passed to `invoke`/`stream` or bound with `.bind(...)`.
    """

    model_path: str
    n_ctx: int = 4096
    threads: int = 2
    temperature: float = 0.0
    max_tokens: int = 400
    stop: list[str] | None = None
    seed: int = 13
    logprobs: bool = False
    top_logprobs: int | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)

    @property
    def _llm_type(self) -> str:
        return "xllamacpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "n_ctx": self.n_ctx, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "seed": self.seed}  # fmt: skip

    def _server(self) -> Any:
        return load_server(self.model_path, self.n_ctx, self.threads)

    def _body(self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "messages": convert_to_openai_messages(messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            **self.extra_body,
        }
        if self.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = self.top_logprobs or 1
        if stop or self.stop:
            body["stop"] = stop or self.stop
        if "max_completion_tokens" in kwargs:
            kwargs["max_tokens"] = kwargs.pop("max_completion_tokens")
        body.update({k: v for k, v in kwargs.items() if v is not None})
        return body

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        response = self._server().handle_chat_completions(self._body(messages, stop, **kwargs))
        _raise_for_error(response, self.model_path)
        choice = response["choices"][0]
        info = {"finish_reason": choice.get("finish_reason"), "model_name": Path(self.model_path).name,
                "logprobs": choice.get("logprobs"), "timings": response.get("timings")}  # fmt: skip
        message = AIMessage(
            content=choice["message"].get("content") or "", usage_metadata=_usage(response.get("usage"))
        )
        return ChatResult(
            generations=[ChatGeneration(message=message, generation_info=info)],
            llm_output={"token_usage": response.get("usage"), "model_name": Path(self.model_path).name},
        )

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        body = self._body(messages, stop, **kwargs) | {
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        for raw in self._raw_stream(body):
            chunk = self._to_chunk(raw)
            if chunk is None:
                continue
            if run_manager and chunk.text:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    def _raw_stream(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Runs the blocking streaming call in a thread (it releases the GIL) and yields its chunks live.

        Closing the iterator early cancels generation: the callback's True return tells llama.cpp to stop.
        """
        server = self._server()
        chunks: queue.Queue[dict[str, Any] | BaseException | None] = queue.Queue()
        cancel = threading.Event()

        def on_chunk(chunk: dict[str, Any]) -> bool:
            chunks.put(chunk)
            return cancel.is_set()

        def run() -> None:
            try:
                server.handle_chat_completions(body, on_chunk)
            except BaseException as exc:  # handed to the consumer thread
                chunks.put(exc)
            finally:
                chunks.put(None)

        worker = threading.Thread(target=run, name="llamacpp-stream", daemon=True)
        worker.start()
        try:
            while (item := chunks.get()) is not None:
                if isinstance(item, BaseException):
                    raise ModelError(f"llama.cpp ({Path(self.model_path).name}): {item}") from None
                _raise_for_error(item, self.model_path)
                yield item
        finally:
            cancel.set()
            worker.join()

    def _to_chunk(self, raw: dict[str, Any]) -> ChatGenerationChunk | None:
        """One streamed OpenAI chunk -> a LangChain chunk (text, logprobs, finish reason, usage)."""
        choice = (raw.get("choices") or [{}])[0]
        text = (choice.get("delta") or {}).get("content") or ""
        info: dict[str, Any] = {}
        if choice.get("logprobs"):
            info["logprobs"] = choice["logprobs"]
        if choice.get("finish_reason"):
            info |= {"finish_reason": choice["finish_reason"], "model_name": Path(self.model_path).name}
        if raw.get("timings") is not None:
            info["timings"] = raw["timings"]
        usage = _usage(raw.get("usage"))
        if not text and not info and usage is None:
            return None
        message = AIMessageChunk(content=text, usage_metadata=usage)
        return ChatGenerationChunk(message=message, generation_info=info or None)


# --- OpenAI-compatible endpoints --------------------------------------------------------------------------


@contextmanager
def _endpoint_errors(base_url: str | None, model: str) -> Iterator[None]:
    import openai

    where = base_url or "https://api.openai.com/v1"
    try:
        yield
    except openai.APITimeoutError:
        raise ModelError(f"LLM endpoint {where} timed out (model {model})") from None
    except openai.APIConnectionError:
        raise ModelError(
            f"LLM endpoint {where} is unreachable (model {model}); is the server running?"
        ) from None
    except openai.AuthenticationError:
        raise ModelError(f"LLM endpoint {where} rejected the API key (model {model})") from None
    except openai.APIStatusError as exc:
        raise ModelError(f"LLM endpoint {where} answered HTTP {exc.status_code}: {_short(exc)}") from None


def _short(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300]


@cache
def _openai_chat_class() -> type[ChatOpenAI]:
    """ChatOpenAI whose transport failures become one-line ModelErrors. Built on first use: importing
    langchain_openai (and openai) takes ~2 s, and only the `openai` backend needs it."""
    from langchain_openai import ChatOpenAI

    class OpenAICompatibleChat(ChatOpenAI):
        """ChatOpenAI whose transport failures become one-line ModelErrors."""

        def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
            with _endpoint_errors(self.openai_api_base, self.model_name):
                return super()._generate(*args, **kwargs)

        def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
            with _endpoint_errors(self.openai_api_base, self.model_name):
                yield from super()._stream(*args, **kwargs)

        async def _agenerate(self, *args: Any, **kwargs: Any) -> ChatResult:
            with _endpoint_errors(self.openai_api_base, self.model_name):
                return await super()._agenerate(*args, **kwargs)

        async def _astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
            with _endpoint_errors(self.openai_api_base, self.model_name):
                async for chunk in super()._astream(*args, **kwargs):
                    yield chunk

    return OpenAICompatibleChat


def _api_key(settings: Settings) -> str:
    key = os.environ.get(settings.llm.api_key_env)
    if key:
        return key
    if settings.llm.base_url:  # vLLM, Ollama, llama.cpp server: any non-empty key is accepted
        return "not-needed"
    raise ModelError(
        f"llm.backend is openai but the environment variable {settings.llm.api_key_env} is not set"
    )


# --- the factory ------------------------------------------------------------------------------------------


def make_chat_model(settings: Settings) -> BaseChatModel:
    """The chat model the settings select (local GGUF through llama.cpp, or an OpenAI-compatible endpoint)."""
    llm = settings.llm
    if llm.backend == "openai":
        return _openai_chat_class()(
            base_url=llm.base_url,
            model=llm.model,
            api_key=SecretStr(_api_key(settings)),
            temperature=llm.temperature,
            max_completion_tokens=llm.max_tokens,
            timeout=llm.timeout_s,
            max_retries=1,
        )
    path = model_path(settings, llm.model)
    if path.is_dir():
        raise ModelError(f"llm.model {llm.model!r} is a folder; the llamacpp backend needs a GGUF file")
    model = LlamaCppChatModel(
        model_path=str(path),
        n_ctx=llm.n_ctx,
        threads=llm.threads,
        temperature=llm.temperature,
        max_tokens=llm.max_tokens,
    )
    model._server()  # load now: a missing or broken file fails here, not mid-answer
    return model


# --- calibrated yes/no ------------------------------------------------------------------------------------


def _normalise(token: str) -> str:
    return token.strip().strip(string.punctuation + "\u2581\u0120").lower()


def word_mass(logprobs: dict[str, Any] | None, words: Sequence[str]) -> dict[str, float] | None:
    """Probability mass of each answer word among the first position's top logprobs (OpenAI shape); token
    variants ("Yes", " yes", "YES.") count for their word, a repeated token once."""
    content = (logprobs or {}).get("content") or []
    if not content:
        return None
    first = content[0]
    candidates = first.get("top_logprobs") or [first]
    mass = dict.fromkeys(words, 0.0)
    seen: set[str] = set()
    for cand in candidates:
        token = cand.get("token", "")
        if token in seen:  # some servers repeat the sampled token
            continue
        seen.add(token)
        word = _normalise(token)
        if word in mass:
            mass[word] += math.exp(cand["logprob"])
    return mass


def yes_no_mass(logprobs: dict[str, Any] | None) -> tuple[float, float] | None:
    """Probability mass of 'yes' and 'no' tokens among the first position's top logprobs (OpenAI shape)."""
    mass = word_mass(logprobs, ("yes", "no"))
    return None if mass is None else (mass["yes"], mass["no"])


def answer_mass(
    chat_model: BaseChatModel, messages: LanguageModelInput, words: Sequence[str], top_logprobs: int = 20
) -> dict[str, float] | None:
    """The first answer token's probability mass on each of `words`; None without logprobs."""
    reply = chat_model.invoke(
        messages, logprobs=True, top_logprobs=top_logprobs, max_tokens=1, temperature=0.0
    )
    mass = word_mass(reply.response_metadata.get("logprobs"), words)
    return mass if mass is not None and sum(mass.values()) > 0 else None


def _parse_word(text: str) -> float | None:
    words = text.split()
    first = _normalise(words[0]) if words else ""
    return {"yes": 1.0, "no": 0.0}.get(first)


def yes_probability(chat_model: BaseChatModel, messages: LanguageModelInput) -> float | None:
    """P(yes) / (P(yes) + P(no)) for the first answer token; None when undetermined (never a silent 0).

    Without logprobs from the backend, falls back to the answered word (1.0 / 0.0).
    """
    reply = chat_model.invoke(
        messages, logprobs=True, top_logprobs=TOP_LOGPROBS, max_tokens=1, temperature=0.0
    )
    mass = yes_no_mass(reply.response_metadata.get("logprobs"))
    if mass is not None and sum(mass) > 0:
        return mass[0] / (mass[0] + mass[1])
    return _parse_word(reply.text if isinstance(reply, AIMessage) else str(reply.content))
