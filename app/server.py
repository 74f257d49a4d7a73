"""The HTTP API (`biocite serve`) and the web chat page, one FastAPI app.

    POST /v1/ask          the Answer JSON            POST /v1/ask/stream   the same as server-sent events
    GET  /v1/search       hybrid search hits         GET  /v1/documents    abstracts with sentence offsets
    POST /v1/evaluate     per-answer evaluator check GET  /healthz         liveness + queue state
    POST /v1/check        support verdict of a claim against PMIDs or text (the support model)
    GET  /                the web page (core/web/)   GET  /openapi.json    the schema

Local models answer one request at a time: /v1/ask, /v1/ask/stream and /v1/evaluate wait in one bounded
FIFO queue (`server.queue_size` places behind the running request); a full queue answers 429 with a
Retry-After estimated from measured run times. The agent runs in one dedicated worker thread, never in the
event loop. A client that disconnects frees its place: a queued request leaves the queue, a running one
stops consuming the agent's event generator at the next event (the step under way finishes first, so two
answers never run at once). Search and documents need no LLM and run beside it in a small thread pool.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import json
import logging
import math
import os
import secrets
import socket
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.routing import BaseRoute, Match
from starlette.types import Receive, Scope, Send

from biocite.agent.checks import check_question
from biocite.agent.graph import Agent, make_checkpointer
from biocite.app.check import CheckRequest, CheckResult, check_requests, new_request
from biocite.app.documents import DocumentView, document_views
from biocite.app.evaluation import build_evaluator
from biocite.errors import BiociteError, IndexMismatchError, InputError, ModelError, field_path
from biocite.evaluator.evaluate import QuestionResult
from biocite.evaluator.runs import RunEntry
from biocite.evaluator.sources import StoreSource
from biocite.index.hybrid import open_retriever
from biocite.records import Answer, SearchHit, check_pmid
from biocite.settings import Settings
from biocite.support import SupportModel

log = logging.getLogger("biocite.app.server")
T = TypeVar("T")
Event = dict[str, Any]

WEB_DIR = Path(__file__).resolve().parent / "web"
EVAL_METRICS = ("completeness", "correctness", "citation")
MAX_EVAL_SENTENCES = 50
BEARER = HTTPBearer(
    auto_error=False,
    description="Needed when the variable named by server.token_env (BIOCITE_API_TOKEN) is set.",
)
MAX_BODY_BYTES = 1 << 20
HEARTBEAT_S = 15.0  # an SSE comment after this long without an event
HARD_MAX_CHARS = 100_000  # schema-level cap; the configured limit (agent.max_question_chars) is checked after

# --- request and response records ------------------------------------------------------------------


class AskRequest(BaseModel):
    question: str = Field(max_length=HARD_MAX_CHARS, description="A biomedical question in English.")
    mode: Literal["generate", "extractive"] | None = Field(
        default=None, description="generate (LLM, verified) or extractive (no LLM); default: agent.mode."
    )
    thread_id: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9._:-]{1,128}$",
        description="Conversation id: later questions with the same id are follow-ups.",
    )


class QueueState(BaseModel):
    running: int
    waiting: int
    capacity: int = Field(description="Requests the queue holds in all, running included.")


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    queue: QueueState


class EvaluateRequest(BaseModel):
    question: str = Field(max_length=HARD_MAX_CHARS)
    answer: Answer
    metrics: list[Literal["completeness", "correctness", "citation"]] | None = Field(
        default=None, description=f"Default: {', '.join(EVAL_METRICS)}."
    )


class ErrorBody(BaseModel):
    detail: str


# --- the queue -------------------------------------------------------------------------------------------


class QueueFull(Exception):
    def __init__(self, retry_after: int) -> None:
        super().__init__(f"the server is busy: the request queue is full; retry in {retry_after} s")
        self.retry_after = retry_after


class Ticket:
    """One request's place: waiting in the queue, then holding the slot, then released (idempotent)."""

    def __init__(self, queue: SlotQueue, future: asyncio.Future[None] | None) -> None:
        self.queue = queue
        self.future = future  # None: the slot was free at once
        self.released = False
        self.started = time.monotonic() if future is None else None

    def _granted(self) -> bool:
        return self.future is None or (self.future.done() and not self.future.cancelled())

    @property
    def holding(self) -> bool:
        return not self.released and self._granted()

    async def wait(self, timeout: float | None = None) -> bool:
        """True once the slot is this request's; False if still waiting after `timeout` s."""
        if self.future is not None and not self.future.done():
            try:
                done, _ = await asyncio.wait({self.future}, timeout=timeout)
            except asyncio.CancelledError:
                self.release()
                raise
            if not done:
                return False
        if self.started is None:
            self.started = time.monotonic()
        return True

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        if self._granted():
            self.queue.hand_on(time.monotonic() - self.started if self.started else None)
        else:
            assert self.future is not None
            self.queue.leave(self.future)


class SlotQueue:
    """One running request at a time and at most `size` waiting, first come first served."""

    def __init__(self, size: int, first_estimate_s: float) -> None:
        self.size = size
        self.running = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._seconds = first_estimate_s  # moving average of run times, for Retry-After

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    @property
    def capacity(self) -> int:
        return 1 + self.size

    def state(self) -> QueueState:
        return QueueState(running=self.running, waiting=self.waiting, capacity=self.capacity)

    def retry_after(self) -> int:
        return max(1, math.ceil(self._seconds * (self.running + self.waiting)))

    def reserve(self) -> Ticket:
        """A place in the queue now, or QueueFull. Runs on the event loop (no locking needed)."""
        if self.running + self.waiting >= self.capacity:
            raise QueueFull(self.retry_after())
        if self.running == 0 and not self._waiters:
            self.running = 1
            return Ticket(self, None)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        return Ticket(self, future)

    def leave(self, future: asyncio.Future[None]) -> None:
        if future in self._waiters:
            self._waiters.remove(future)
        future.cancel()

    def hand_on(self, seconds: float | None) -> None:
        """The running request is done: the slot goes straight to the next waiter, if any."""
        if seconds is not None:
            self._seconds = 0.7 * self._seconds + 0.3 * seconds
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(None)
                return
        self.running = 0


# --- running the agent in its worker thread ------------------------------------------------------------


class AgentRun:
    """An event generator consumed in the agent's worker thread, its events handed to the event loop.

    `close()` asks the worker to stop consuming between events, then waits until it has (shielded from
    cancellation), so the slot is never freed while an agent step is still running.
    """

    def __init__(
        self, executor: ThreadPoolExecutor, events: Callable[[], Generator[Event, None, None]]
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._stop = threading.Event()
        self._future = self._loop.run_in_executor(executor, self._produce, events)

    def _put(self, item: tuple[str, Any]) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the event loop is gone (server shutting down)
            self._stop.set()

    def _produce(self, events: Callable[[], Generator[Event, None, None]]) -> None:
        try:
            generator = events()
            try:
                while not self._stop.is_set():
                    try:
                        event = next(generator)
                    except StopIteration:
                        break
                    self._put(("event", event))
            finally:
                generator.close()
                trim_heap()
        except BaseException as exc:  # noqa: BLE001 - handed to the request, which reports it
            self._put(("error", exc))
        else:
            self._put(("done", None))

    async def events(self, heartbeat: float | None = None) -> AsyncIterator[Event | None]:
        """The agent's events; None after each `heartbeat` s without one."""
        while True:
            try:
                kind, payload = await asyncio.wait_for(self._queue.get(), heartbeat)
            except TimeoutError:
                yield None
                continue
            if kind == "event":
                yield payload
            elif kind == "error":
                raise payload
            else:
                return

    def stop(self) -> None:
        self._stop.set()

    def on_done(self, callback: Callable[[AgentRun], None]) -> None:
        self._future.add_done_callback(lambda _: callback(self))

    async def close(self) -> None:
        self._stop.set()
        with anyio.CancelScope(shield=True):
            await self._future


def trim_heap() -> None:
    """Give freed heap pages back to the OS (glibc). Embedding batches of ever-different shapes otherwise
    leave the server's RSS growing by megabytes per answer (bench/load_api.py measured it)."""
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _LIBC.malloc_trim  # noqa: B018 - absent outside glibc
        except (OSError, AttributeError):
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)


_LIBC: Any = None


class Conversations:
    """Which thread_ids the agent's chat memory keeps: one-shot requests are forgotten when answered, and
    beyond `limit` conversations the least recently used go first, so a long-running server's memory stays
    bounded. Used only from the agent's worker thread."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._ids: OrderedDict[str, None] = OrderedDict()

    def done(self, agent: Any, thread_id: str, *, keep: bool) -> None:
        forget = []
        if keep:
            self._ids[thread_id] = None
            self._ids.move_to_end(thread_id)
            while len(self._ids) > self.limit:
                forget.append(self._ids.popitem(last=False)[0])
        else:
            forget.append(thread_id)
        saver = getattr(agent, "checkpointer", None)
        if saver is not None and hasattr(saver, "delete_thread"):
            for old in forget:
                saver.delete_thread(old)


# --- the service behind the routes ---------------------------------------------------------------------


def status_for(exc: BaseException) -> int:
    if isinstance(exc, ModelError | IndexMismatchError):
        return 503  # the server's models or index, not the request
    if isinstance(exc, BiociteError):
        return 422
    return 500


def describe(exc: BaseException) -> str:
    if isinstance(exc, BiociteError):
        return str(exc)
    return f"internal error ({type(exc).__name__}); see the server log"


class Service:
    def __init__(self, settings: Settings, agent: Any | None) -> None:
        self.settings = settings
        self.config = settings.server
        self.queue = SlotQueue(self.config.queue_size, self.config.retry_after_s)
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="biocite-agent")
        self.search_limiter = anyio.CapacityLimiter(self.config.search_threads)
        self.conversations = Conversations(self.config.max_conversations)
        self.token = os.environ.get(self.config.token_env) or None
        self._agent = agent
        self._lock = threading.Lock()
        self._evaluators: dict[tuple[str, ...], Any] = {}
        self._support: Any = None
        self.runs: set[AgentRun] = set()

    def agent(self) -> Any:
        with self._lock:
            if self._agent is None:
                self._agent = Agent(
                    self.settings, retriever=open_retriever(self.settings), checkpointer=make_checkpointer()
                )
            return self._agent

    def preload(self) -> None:
        self.agent().retriever.search("warm up the index", k=1)

    def check_question(self, question: str) -> str:
        return check_question(question, self.settings.agent.max_question_chars)

    # --- answers

    def answer_events(self, body: AskRequest, question: str) -> Generator[Event, None, None]:
        agent = self.agent()
        thread_id = body.thread_id or f"once-{uuid.uuid4().hex}"
        try:
            yield from agent.stream(question, mode=body.mode, thread_id=thread_id)
        finally:
            self.conversations.done(agent, thread_id, keep=body.thread_id is not None)

    def start(self, body: AskRequest, question: str) -> AgentRun:
        run = AgentRun(self.executor, lambda: self.answer_events(body, question))
        self.runs.add(run)
        run.on_done(self.runs.discard)
        return run

    async def answer(self, ticket: Ticket, body: AskRequest, question: str) -> Answer:
        run: AgentRun | None = None
        try:
            await ticket.wait()
            run = self.start(body, question)
            async for event in run.events():
                if event is not None and event["event"] == "answer":
                    return event["answer"]
            raise RuntimeError("the agent ended without an answer")
        finally:
            if run is not None:
                await run.close()
            ticket.release()

    async def sse(
        self, ticket: Ticket, body: AskRequest, question: str, runs: list[AgentRun]
    ) -> AsyncGenerator[str, None]:
        if not ticket.holding:
            yield f": queued behind {self.queue.running + self.queue.waiting - 1} request(s)\n\n"
        while not await ticket.wait(HEARTBEAT_S):
            yield ": still queued\n\n"  # comments keep proxies from timing the stream out
        run = self.start(body, question)
        runs.append(run)
        try:
            async for event in run.events(HEARTBEAT_S):
                yield ": working\n\n" if event is None else sse_event(*event_payload(event))
        except Exception as exc:  # reported in-band: the 200 status line has already been sent
            if status_for(exc) == 500:
                log.exception("answer stream failed")
            yield sse_event("error", {"detail": describe(exc)})

    # --- evaluation

    def evaluate_sync(self, body: EvaluateRequest, question: str) -> QuestionResult:
        metrics = tuple(body.metrics or EVAL_METRICS)
        evaluator = self._evaluators.get(metrics)
        if evaluator is None:
            source = StoreSource(self.agent().retriever.documents)
            evaluator, _ = build_evaluator(self.settings, list(metrics), source=source)
            self._evaluators[metrics] = evaluator
        try:
            return evaluator.evaluate_entry(RunEntry(topic_id="api", question=question, answer=body.answer))
        finally:
            trim_heap()

    async def in_worker(self, fn: Callable[..., T], *args: Any) -> T:
        """fn in the agent's thread; a cancelled caller still waits for it (the slot stays taken till then)."""
        future = asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)
        with anyio.CancelScope(shield=True):
            result = await future
        return result

    # --- search and documents

    async def in_search_thread(self, fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(fn, *args, limiter=self.search_limiter)

    def search(self, q: str, k: int) -> list[SearchHit]:
        return self.agent().retriever.search(q, k=k)

    def documents(self, pmids: list[str]) -> list[DocumentView]:
        return document_views(self.agent().retriever.documents, pmids)

    def check(self, body: CheckRequest) -> CheckResult:
        request = new_request(
            body.claim, body.pmids, body.text, {"claim": "claim", "pmids": "pmids", "text": "text"}
        )
        with self._lock:
            if self._support is None:
                self._support = SupportModel.load(self.settings)
        fetch = None
        if request.pmids:
            store = self.agent().retriever.documents
            fetch = lambda pmids: store.get_many(list(pmids))  # noqa: E731
        return check_requests(self._support, [request], fetch, ["pmids"])[0]

    def shutdown(self) -> None:
        for run in list(self.runs):
            run.stop()  # at the next event: an exiting server does not finish a long answer first
        self.executor.shutdown(wait=False, cancel_futures=True)


# --- server-sent events ------------------------------------------------------------------------------


def sse_event(kind: str, data: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def event_payload(event: Event) -> tuple[str, Any]:
    kind = str(event.get("event", "message"))
    if kind == "answer":
        return kind, event["answer"].model_dump(mode="json")
    return kind, {key: value for key, value in event.items() if key != "event"}


class EventStream(StreamingResponse):
    """text/event-stream that watches for the client leaving whatever the ASGI server's spec version, and
    always runs `on_close` (stop the agent run, free the queue place), even if streaming never started.

    Kept hand-written rather than FastAPI's `fastapi.sse.EventSourceResponse` (issue 15, checked against
    FastAPI 0.165): that streams a generator endpoint through Starlette's StreamingResponse, which listens
    for `http.disconnect` only under ASGI spec < 2.4; under 2.4 it learns of a departed client from the next
    failed write, so a queued stream (silent for HEARTBEAT_S = 15 s) would keep its queue place that long
    (tests/integration/test_server.py::test_queue_429_and_disconnects_free_their_place wants it freed at
    once). Its generator also starts only after the 200 status line, so the 429 would have to move into a
    dependency, and it adds its own ": ping" comments beside ours. sse-starlette would watch disconnects
    but is one more dependency for these 25 lines."""

    media_type = "text/event-stream"

    def __init__(self, content: AsyncGenerator[str, None], on_close: Callable[[], Awaitable[None]]) -> None:
        super().__init__(content, headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:

                async def stream() -> None:
                    try:
                        await self.stream_response(send)
                    except OSError:  # the client went away mid-write
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(stream)
                await self.listen_for_disconnect(receive)
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self._on_close()


class ClientGone(Exception):
    pass


async def until_disconnect(request: Request, work: Callable[[], Awaitable[T]]) -> T:
    """Run `work`, cancelling it if the client disconnects first (then ClientGone)."""
    outcome: dict[str, Any] = {}
    async with anyio.create_task_group() as group:

        async def run() -> None:
            try:
                outcome["value"] = await work()
            except Exception as exc:  # re-raised below, outside the task group's exception group
                outcome["error"] = exc
            group.cancel_scope.cancel()

        async def watch() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass
            group.cancel_scope.cancel()

        group.start_soon(run)
        group.start_soon(watch)
    if "error" in outcome:
        raise outcome["error"]
    if "value" not in outcome:
        raise ClientGone()
    return outcome["value"]


# --- the app -----------------------------------------------------------------------------------------------

ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "Missing or wrong bearer token (only when a token is set)."},
    422: {"model": ErrorBody, "description": "Invalid request: empty or too long question, bad mode, k, ..."},
}
QUEUED: dict[int | str, dict[str, Any]] = {
    429: {"model": ErrorBody, "description": "The queue is full; the Retry-After header says when to retry."},
    503: {"model": ErrorBody, "description": "A model or the index is missing or unreachable."},
}


def _one_line(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors():
        if error.get("type") == "json_invalid":  # loc is ("body", character offset)
            at = error.get("loc", ("body", 0))[-1]
            reason = error.get("ctx", {}).get("error", "invalid")
            parts.append(f"the request body is not valid JSON: {reason} (character {at})")
            continue
        where = field_path(error.get("loc", ()), skip=("body", "query"))
        parts.append(f"{where or 'request'}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)


def host_name(header: str) -> str:
    """The name in a Host header: `[::1]:8000` -> `::1`, `localhost:8000` -> `localhost`."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class AllowedHosts:
    """Refuse a request whose Host header is not an allowed name (DNS rebinding when no token is set)."""

    def __init__(self, app: Any, allowed: set[str]) -> None:
        self.app, self.allowed = app, allowed

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            name = host_name(headers.get(b"host", b"").decode("latin-1"))
            if name not in self.allowed:
                detail = f"Host {name[:100]!r} is not served (server.allowed_hosts)"
                await JSONResponse({"detail": detail}, status_code=400)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(settings: Settings, *, agent: Any | None = None) -> FastAPI:
    """The API and web page for these settings. `agent=None`: an Agent with chat memory, made on first use
    (at startup when `server.preload`)."""
    service = Service(settings, agent)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if settings.server.preload:
            await anyio.to_thread.run_sync(service.preload)
        yield
        service.shutdown()

    app = FastAPI(
        title="biocite",
        version=_version(),
        summary="Biomedical answers from PubMed abstracts; every sentence cites checkable evidence.",
        lifespan=lifespan,
        max_body_size=MAX_BODY_BYTES,  # 413 beyond; an Answer with evidence is tens of KB
    )
    app.state.service = service
    if settings.server.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=settings.server.cors_origins, allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )  # fmt: skip

    allowed = {h.lower().strip("[]") for h in settings.server.allowed_hosts}
    if "*" not in allowed:
        app.add_middleware(AllowedHosts, allowed=allowed)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": _one_line(exc)}, status_code=422)

    @app.exception_handler(QueueFull)
    async def busy(_: Request, exc: QueueFull) -> JSONResponse:
        return JSONResponse(
            {"detail": str(exc)}, status_code=429, headers={"Retry-After": str(exc.retry_after)}
        )

    @app.exception_handler(BiociteError)
    async def user_error(_: Request, exc: BiociteError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=status_for(exc))

    def require_token(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)]) -> None:
        if service.token is None:
            return
        given = credentials.credentials if credentials else ""
        if not secrets.compare_digest(given.encode(), service.token.encode()):
            raise HTTPException(
                401, "missing or wrong bearer token (send Authorization: Bearer <token>)",
                headers={"WWW-Authenticate": "Bearer"},
            )  # fmt: skip

    v1 = APIRouter(prefix="/v1", dependencies=[Depends(require_token)], responses=ERRORS)

    @app.get("/healthz", response_model=Health, tags=["service"])
    async def healthz() -> Health:
        """Liveness and the answer queue's state (no token needed)."""
        return Health(queue=service.queue.state())

    @v1.post("/ask", response_model=Answer, responses=QUEUED, tags=["answers"])
    async def ask(body: AskRequest, request: Request) -> Any:
        """Answer one question: sentences citing PMIDs with the evidence spans they rest on."""
        question = service.check_question(body.question)
        ticket = service.queue.reserve()
        try:
            return await until_disconnect(request, lambda: service.answer(ticket, body, question))
        except ClientGone:
            return Response(status_code=499)  # nobody reads it; the place was freed
        except Exception as exc:
            if status_for(exc) == 500:
                log.exception("answer failed")
            raise HTTPException(status_for(exc), describe(exc)) from None

    @v1.post(
        "/ask/stream",
        status_code=200,
        response_class=EventStream,
        responses={
            **QUEUED,
            200: {
                "description": "Server-sent events `start` {node}, `step` {node, detail}, `token` {text}, then "
                "`answer` (Answer JSON) or `error` {detail}.",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            },
        },
        tags=["answers"],
    )
    async def ask_stream(body: AskRequest) -> EventStream:
        """The answer as server-sent events: progress per graph step, tokens while generating, then it."""
        question = service.check_question(body.question)
        ticket = service.queue.reserve()
        runs: list[AgentRun] = []
        events = service.sse(ticket, body, question, runs)

        async def on_close() -> None:
            await events.aclose()
            for run in runs:
                await run.close()
            ticket.release()

        return EventStream(events, on_close)

    @v1.get("/search", response_model=list[SearchHit], tags=["retrieval"])
    async def search(
        q: str = Query(min_length=1, max_length=HARD_MAX_CHARS, description="Search query."),
        k: int = Query(10, ge=1, description="Hits to return (at most server.max_k)."),
    ) -> Any:
        """Hybrid search: PMID, title, scores per stage and the best-matching sentence of each hit."""
        if not q.strip():
            raise InputError("the query is empty")
        if len(q) > settings.agent.max_question_chars:
            raise InputError(
                f"the query is {len(q)} characters long; the limit is {settings.agent.max_question_chars}"
            )
        if k > settings.server.max_k:
            raise InputError(f"k is {k}; the limit is {settings.server.max_k} (server.max_k)")
        return await service.in_search_thread(service.search, q, k)

    @v1.get("/documents", response_model=list[DocumentView], tags=["retrieval"])
    async def documents(
        pmids: str = Query(max_length=5000, description="Comma-separated PMIDs; unknown ones are left out."),
    ) -> Any:
        """Abstracts with their sentence offsets (the spans of an Answer index `abstract`)."""
        wanted = list(dict.fromkeys(p.strip() for p in pmids.split(",") if p.strip()))
        if not wanted:
            raise InputError("no PMIDs given (pmids=1,2,3)")
        if len(wanted) > settings.server.max_pmids:
            raise InputError(f"{len(wanted)} PMIDs; the limit is {settings.server.max_pmids} per request")
        checked = [check_pmid(p) for p in wanted]  # positive integers: "-5", "abc/../etc" are 422
        return await service.in_search_thread(service.documents, checked)

    @v1.post("/evaluate", response_model=QuestionResult, responses=QUEUED, tags=["answers"])
    async def evaluate(body: EvaluateRequest, request: Request) -> Any:
        """Check one answer with the evaluator: completeness, correctness and citation support."""
        question = service.check_question(body.question)
        if len(body.answer.sentences) > MAX_EVAL_SENTENCES:
            raise InputError(
                f"the answer has {len(body.answer.sentences)} sentences; the limit is {MAX_EVAL_SENTENCES}"
            )
        pairs = sum(len(s.citations) for s in body.answer.sentences)
        if pairs > settings.server.max_eval_citations:
            raise InputError(
                f"the answer cites {pairs} PMIDs over its sentences; the limit is "
                f"{settings.server.max_eval_citations} per request (server.max_eval_citations)"
            )
        ticket = service.queue.reserve()

        async def work() -> QuestionResult:
            try:
                await ticket.wait()
                return await service.in_worker(service.evaluate_sync, body, question)
            finally:
                ticket.release()

        try:
            return await until_disconnect(request, work)
        except ClientGone:
            return Response(status_code=499)
        except Exception as exc:
            if status_for(exc) == 500:
                log.exception("evaluation failed")
            raise HTTPException(status_for(exc), describe(exc)) from None

    @v1.post("/check", response_model=CheckResult, tags=["answers"])
    async def check(body: CheckRequest) -> Any:
        """Does the evidence (indexed PMIDs or given text) support the claim? Calibrated probabilities of
        supports / contradicts / neutral / not_relevant, evidence sentences and phrases with offsets."""
        return await service.in_search_thread(service.check, body)

    app.include_router(v1)
    if WEB_DIR.is_dir():
        app.mount("/", WebFiles([*app.routes, *v1.routes], WEB_DIR), name="web")  # last: /v1 and /healthz win
    return app


class WebFiles(StaticFiles):
    """The web page's files, mounted at `/` after the API. A mount at `/` matches every path, so an API path
    asked with the wrong method (GET /v1/ask) would reach it and read as 404; it is a 405 naming the method,
    and an unknown /v1/ path is a 404 whatever the method (not the files' 405)."""

    def __init__(self, api_routes: list[BaseRoute], directory: Path) -> None:
        super().__init__(directory=directory, html=True)
        self.api_routes = api_routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        for route in self.api_routes:
            methods = getattr(route, "methods", None)
            if methods and route.matches(scope)[0] is Match.PARTIAL:
                allowed = ", ".join(sorted(methods))
                response = JSONResponse(
                    {"detail": f"{scope['path']} takes {allowed}, not {scope['method']}"},
                    status_code=405, headers={"Allow": allowed},
                )  # fmt: skip
                await response(scope, receive, send)
                return
        if scope["path"].startswith("/v1/"):  # not a page: say so, whatever the method
            response = JSONResponse(
                {"detail": f"{scope['path']}: no such endpoint (the API is listed at /docs)"}, 404
            )
            await response(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def check_listen(host: str, port: int) -> None:
    """Fail now, in one line, where uvicorn would fail after loading the models (exit 3, an ERROR log):
    an unknown host name, an address this machine does not have, a port in use or not allowed."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InputError(f"--host {host}: not an address to listen on ({exc.strerror})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            raise InputError(f"--host {host} --port {port}: cannot listen there ({exc.strerror})") from None


def _version() -> str:
    try:
        return version("biocite")
    except PackageNotFoundError:
        return "0"
