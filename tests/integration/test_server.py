"""The HTTP API on a small real index (40 shipped abstracts, MiniLM, extractive mode: no LLM), and the queue
on a real uvicorn server with a slow fake agent: one answer at a time, 429 + Retry-After when full, a
client that disconnects frees its place (queued: never runs; running: the agent's generator is closed)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from biocite.agent.graph import Agent, make_checkpointer
from biocite.app.server import create_app
from biocite.errors import ModelError
from biocite.evaluator.judges import COMPLETENESS_LABELS, SUPPORT_LABELS
from biocite.index.build import build_index
from biocite.index.hybrid import clear_retriever_cache, open_retriever
from biocite.records import Answer, AnswerSentence, Citation
from biocite.settings import Settings, load_settings
from tests.conftest import QUESTION_PMIDS, write_question_corpus

JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, dict[str, str], Agent]:
    root = tmp_path_factory.mktemp("server")
    questions = write_question_corpus(root / "corpus.jsonl")
    settings = load_settings(
        "test",
        [
            f"home={root / 'home'}",
            f"index.dir={root / 'index'}",
            "agent.mode=extractive",
            "server.queue_size=2",
            "server.allowed_hosts=[localhost, 127.0.0.1, testserver, t]",
        ],
    )
    build_index(settings, [root / "corpus.jsonl"], progress=False)
    clear_retriever_cache()
    return (
        settings,
        questions,
        Agent(settings, retriever=open_retriever(settings), checkpointer=make_checkpointer()),
    )


@pytest.fixture(scope="module")
def client(setup) -> Iterator[TestClient]:
    settings, _, agent = setup
    with TestClient(create_app(settings, agent=agent)) as c:  # lifespan: preloads the index
        yield c


def sse_events(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith(":")]
        if lines:
            kind = next(line[7:] for line in lines if line.startswith("event: "))
            data = "\n".join(line[6:] for line in lines if line.startswith("data: "))
            events.append((kind, json.loads(data)))
    return events


# --- answers ---------------------------------------------------------------------------------------------


def test_ask_returns_an_answer_whose_spans_match_the_served_abstracts(setup, client) -> None:
    _, questions, _ = setup
    pmid = QUESTION_PMIDS[0]
    response = client.post("/v1/ask", json={"question": questions[pmid], "mode": "extractive"})
    assert response.status_code == 200, response.text
    answer = Answer.model_validate(response.json())
    assert not answer.abstained and answer.mode == "extractive" and answer.sentences
    assert pmid in answer.trace.retrieved
    docs = client.get("/v1/documents", params={"pmids": ",".join(answer.cited_pmids)}).json()
    by_pmid = {d["pmid"]: d for d in docs}
    assert set(by_pmid) == set(answer.cited_pmids)
    for sentence in answer.sentences:
        assert sentence.citations
        for citation in sentence.citations:
            abstract = by_pmid[citation.pmid]["abstract"]
            for evidence in citation.evidence:
                assert abstract[evidence.span.start : evidence.span.end] == evidence.span.text
                served = by_pmid[citation.pmid]["sentences"][evidence.sentence_index]
                assert (served["start"], served["end"]) == (evidence.span.start, evidence.span.end)


def test_stream_yields_steps_then_the_answer(setup, client) -> None:
    _, questions, _ = setup
    body = {"question": questions[QUESTION_PMIDS[1]], "mode": "extractive"}
    with client.stream("POST", "/v1/ask/stream", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response.read().decode())
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "answer" and kinds.count("answer") == 1
    assert "step" in kinds and "error" not in kinds
    nodes = [data["node"] for kind, data in events if kind == "start"]
    assert nodes[:3] == ["contextualize", "plan", "retrieve"] and nodes[-1] == "finalize"
    assert all(data["detail"] for kind, data in events if kind == "step")
    answer = Answer.model_validate(events[-1][1])
    assert answer.question == body["question"] and {t.node for t in answer.trace.timings} >= {"retrieve"}


def test_generate_mode_streams_tokens_with_a_real_small_llm(setup) -> None:
    from biocite.models import install_models

    settings, questions, agent = setup
    list(install_models(settings, ["smollm2"]))  # SmolLM2-135M: fluent nonsense, but real tokens
    # its relevance judge vetoes everything; without it the question reaches the generator
    no_judge = settings.model_copy(update={"agent": settings.agent.model_copy(update={"judge_top": 0})})
    generating = Agent(no_judge, retriever=agent.retriever, checkpointer=make_checkpointer())
    with TestClient(create_app(fake_settings((no_judge,)), agent=generating)) as c:
        body = {"question": questions[QUESTION_PMIDS[0]], "mode": "generate"}
        with c.stream("POST", "/v1/ask/stream", json=body) as response:
            events = sse_events(response.read().decode())
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "answer" and "error" not in kinds
    assert kinds.count("token") >= 5 and kinds.index("token") > kinds.index("start")
    assert "".join(data["text"] for kind, data in events if kind == "token").strip()
    answer = Answer.model_validate(events[-1][1])
    assert {"generate", "verify"} <= {t.node for t in answer.trace.timings}
    assert answer.trace.models["llm"] == "llamacpp:smollm2"
    for sentence in answer.sentences:  # whatever it wrote: unverified sentences never survive as generated
        assert sentence.citations
        if answer.mode == "generate" and sentence.kind != "bottom_line":  # the verdict's, not verified
            assert sentence.support is not None and sentence.support >= settings.agent.min_support


def test_follow_ups_use_the_conversation_and_one_shot_requests_are_forgotten(setup, client) -> None:
    _, questions, agent = setup
    first = {"question": questions[QUESTION_PMIDS[2]], "mode": "extractive", "thread_id": "conv-1"}
    assert client.post("/v1/ask", json=first).status_code == 200
    follow = client.post("/v1/ask", json={**first, "question": "What about its side effects?"}).json()
    assert "follow-up completed with the previous question" in follow["trace"]["notes"]
    fresh = client.post(
        "/v1/ask", json={**first, "question": "What about its side effects?", "thread_id": "conv-2"}
    )
    assert "follow-up completed with the previous question" not in fresh.json()["trace"]["notes"]
    kept = set(agent.checkpointer.storage)
    assert {"conv-1", "conv-2"} <= kept and not [t for t in kept if t.startswith("once-")]


def test_a_what_about_follow_up_asks_again_of_another_outcome_or_another_entity(setup, client) -> None:
    """After "Can tailored interventions increase mammography use among HMO women?", "What about patient
    satisfaction?" asks of satisfaction in HMO women (the aspect model reads an outcome; yes/no, as the question
    it asks again), and "What about peer counselors?" of peer counselors and mammography (an entity). Before,
    the words after "What about" always replaced the entity: mammography was still asked of satisfaction. Words
    as common as "telephone counseling" in this index were no concept at all, and nothing was carried."""
    settings, questions, _ = setup
    first = {"question": questions[QUESTION_PMIDS[0]], "mode": "extractive"}
    read = {}
    follow_ups = (
        "What about patient satisfaction?",
        "What about peer counselors?",
        "What about telephone counseling?",
        "What about adverse events?",
        "What about the cost?",
    )
    for follow_up in follow_ups:
        thread = {"thread_id": f"aspect-{len(read)}"}
        assert client.post("/v1/ask", json={**first, **thread}).status_code == 200
        answer = client.post("/v1/ask", json={**first, **thread, "question": follow_up}).json()
        notes = [n for n in answer["trace"]["notes"] if n.startswith("key concepts: ")]
        read[follow_up] = (notes, answer["question_type"])
    # satisfaction replaces the asked outcome (mammography): the people stay
    assert read["What about patient satisfaction?"] == (["key concepts: satisfaction; HMO women"], "yes/no")
    # peer counselors replace the entity: the asked outcome stays
    notes, _ = read["What about peer counselors?"]
    assert notes and notes[0].startswith("key concepts: peer counselors; mammography (outcome); HMO women")
    # a word of the index's abstracts, too common here for the entity's bar of a whole question: the follow-up's
    # own words are what it asks of (nothing was read, and nothing carried)
    notes, _ = read["What about telephone counseling?"]
    assert notes == ["key concepts: telephone counseling (subject); mammography (outcome); HMO women"]
    # a follow-up of harms names the outcome by asking of harms: "adverse events" is not read as the outcome "events"
    assert read["What about adverse events?"] == (["key concepts: HMO women"], "factoid")
    # what a treatment costs is its outcome: the people stay (the aspect model had read another entity, "cost",
    # and asked of mammography's cost in HMO women)
    assert read["What about the cost?"] == (["key concepts: cost; HMO women"], "yes/no")
    # trained once on first use and kept beside the agent's other models
    assert (settings.models_dir / "agent" / "aspects-minilm.json").is_file()


# --- search and documents ------------------------------------------------------------------------------


def test_search_and_documents(client) -> None:
    hits = client.get("/v1/search", params={"q": "aspirin stroke prevention", "k": 3}).json()
    assert [h["rank"] for h in hits] == [1, 2, 3]
    assert all(h["best_sentence"] and h["stage_scores"] for h in hits)
    wanted = [hits[0]["pmid"], "99999999", hits[1]["pmid"]]
    docs = client.get("/v1/documents", params={"pmids": ",".join(wanted)}).json()
    assert [d["pmid"] for d in docs] == [
        hits[0]["pmid"],
        hits[1]["pmid"],
    ]  # unknown PMIDs left out, order kept
    for doc in docs:
        assert doc["url"] == f"https://pubmed.ncbi.nlm.nih.gov/{doc['pmid']}/"
        assert doc["sentences"] and all(
            doc["abstract"][s["start"] : s["end"]] == s["text"] for s in doc["sentences"]
        )


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "message"),
    [
        ("post", "/v1/ask", {"json": {"question": "x " * 600}}, "limit is 1000"),
        ("post", "/v1/ask", {"json": {"question": "   "}}, "the question is empty"),
        ("post", "/v1/ask", {"json": {"question": "Does aspirin work?", "mode": "poetry"}}, "mode"),
        ("post", "/v1/ask/stream", {"json": {"question": ""}}, "the question is empty"),
        ("post", "/v1/ask", {"json": {"question": "ok?", "thread_id": "a b"}}, "thread_id"),
        ("post", "/v1/ask", {"json": {}}, "question: Field required"),
        ("post", "/v1/ask", {"content": b'{"question": ', "headers": JSON}, "body is not valid JSON"),
        ("get", "/v1/search", {"params": {"q": "aspirin", "k": 51}}, "limit is 50 (server.max_k)"),
        ("get", "/v1/search", {"params": {"q": "aspirin", "k": 0}}, "k:"),
        ("get", "/v1/search", {"params": {"q": "  "}}, "the query is empty"),
        ("get", "/v1/documents", {"params": {"pmids": ",".join(map(str, range(51)))}}, "limit is 50"),
        ("get", "/v1/documents", {"params": {"pmids": ","}}, "no PMIDs"),
        ("get", "/v1/documents", {"params": {"pmids": "1001,abc/../../etc"}}, "not a PMID"),
        ("get", "/v1/documents", {"params": {"pmids": "-5"}}, "not a PMID"),
    ],
)
def test_limits_answer_422_with_one_line(client, method, path, kwargs, message) -> None:
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert isinstance(detail, str) and message in detail and "\n" not in detail


@pytest.mark.parametrize(
    ("method", "path", "status", "message"),
    [
        ("get", "/v1/ask", 405, "/v1/ask takes POST, not GET"),
        ("put", "/v1/search", 405, "/v1/search takes GET, not PUT"),
        ("delete", "/healthz", 405, "/healthz takes GET, not DELETE"),
        ("post", "/v1/asks", 404, "/v1/asks: no such endpoint"),
        ("get", "/v1/", 404, "no such endpoint"),
    ],
)
def test_wrong_method_or_path_is_named_not_served_as_a_missing_page(
    client, method, path, status, message
) -> None:
    """The web page is mounted at /, which matches every path; the API's paths still answer for themselves."""
    response = client.request(method.upper(), path)
    assert response.status_code == status and message in response.json()["detail"]
    if status == 405:
        assert response.headers["allow"] in message


def test_openapi_schema_and_page(client) -> None:
    schema = client.get("/openapi.json").json()
    assert set(schema["paths"]) >= {
        "/v1/ask",
        "/v1/ask/stream",
        "/v1/search",
        "/v1/documents",
        "/v1/evaluate",
    }
    schemas = schema["components"]["schemas"]
    assert {"AskRequest", "SearchHit", "DocumentView", "QuestionResult"} <= set(schemas)
    # an Answer as sent (POST /v1/evaluate) and as returned: only the returned one carries the read-only
    # verdict_shown, the verdict hedged as the bottom line is
    assert "verdict_shown" not in schemas["Answer-Input"]["properties"]
    assert schemas["Answer-Output"]["properties"]["verdict_shown"]["readOnly"] is True
    assert "text/event-stream" in schema["paths"]["/v1/ask/stream"]["post"]["responses"]["200"]["content"]
    assert "429" in schema["paths"]["/v1/ask"]["post"]["responses"]
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")


def test_bearer_token(setup, monkeypatch) -> None:
    settings, _, agent = setup
    monkeypatch.setenv("BIOCITE_TEST_TOKEN", "s3cret")
    app = create_app(
        settings.model_copy(
            update={
                "server": settings.server.model_copy(
                    update={"token_env": "BIOCITE_TEST_TOKEN", "preload": False}
                )
            }
        ),
        agent=agent,
    )
    with TestClient(app) as c:
        assert c.get("/v1/search", params={"q": "aspirin"}).status_code == 401
        wrong = c.get("/v1/search", params={"q": "aspirin"}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
        assert c.post("/v1/ask", json={"question": "Does aspirin work?"}).status_code == 401
        ok = c.get("/v1/search", params={"q": "aspirin", "k": 1}, headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200 and len(ok.json()) == 1
        assert c.get("/healthz").status_code == 200 and c.get("/").status_code == 200


def test_cors_is_off_unless_origins_are_listed(setup) -> None:
    settings, _, agent = setup
    preflight = {"Origin": "https://example.org", "Access-Control-Request-Method": "POST"}
    with TestClient(create_app(fake_settings(setup), agent=agent)) as c:
        assert "access-control-allow-origin" not in c.options("/v1/ask", headers=preflight).headers
    with TestClient(create_app(fake_settings(setup, cors_origins=["https://example.org"]), agent=agent)) as c:
        allowed = c.options("/v1/ask", headers=preflight).headers
        assert allowed["access-control-allow-origin"] == "https://example.org"


# --- evaluation ------------------------------------------------------------------------------------------


def tiny_head(folder: Path, pairs: list[tuple[str, str]], labels: list[str], label_set: list[str]) -> Path:
    from biocite.heads import PairClassifier

    head = PairClassifier.train(pairs * 4, labels * 4, label_set=label_set, epochs=1, batch_size=4,
                                max_length=64, progress=False)  # fmt: skip
    head.save(folder, meta={"train_data_sha256": "t" * 64})
    return folder


def test_evaluate_one_answer_with_real_heads(setup, client, tmp_path) -> None:
    settings, questions, agent = setup
    citation = tiny_head(tmp_path / "citation", [("Aspirin reduces fever.", "Aspirin lowered fever."),
                         ("Zinc helps.", "Cats purr.")], ["Supports", "Not relevant"], SUPPORT_LABELS)  # fmt: skip
    completeness = tiny_head(tmp_path / "completeness", [("Does aspirin work?", "Aspirin lowered fever."),
                             ("Does aspirin work?", "The trial was in Oslo.")], ["Required", "Unnecessary"],
                             ["Required", "Unnecessary", "Borderline"])  # fmt: skip
    ev = settings.evaluator.model_copy(
        update={"judge": "head", "citation_head": citation, "completeness_head": completeness}
    )
    app = create_app(settings.model_copy(update={"evaluator": ev}), agent=agent)
    with TestClient(app) as c:
        question = questions[QUESTION_PMIDS[0]]
        answer = c.post("/v1/ask", json={"question": question}).json()
        answer["sentences"].append(
            AnswerSentence(text="It is also cheap.", citations=[Citation(pmid="99999999")]).model_dump()
        )
        result = c.post("/v1/evaluate", json={"question": question, "answer": answer})
        assert result.status_code == 200, result.text
        body = result.json()
        assert body["outcome"] == "answered" and len(body["sentences"]) == len(answer["sentences"])
        for sentence, given in zip(body["sentences"], answer["sentences"], strict=True):
            assert sentence["completeness"] in COMPLETENESS_LABELS + ["undetermined"]
            assert [x["pmid"] for x in sentence["citations"]] == [x["pmid"] for x in given["citations"]]
        labels = [x["label"] for s in body["sentences"][:-1] for x in s["citations"]]
        assert labels and all(label in SUPPORT_LABELS for label in labels)
        assert body["sentences"][-1]["citations"][0]["label"] == "missing"  # not in the index
        assert body["scores"]["citation_coverage"] == 1.0 and body["citations_missing"] == 1
        assert set(body["scores"]) >= {"completeness", "correctness", "support_rate"}
        abstained = Answer(question=question, abstained=True, abstain_reason="thin").model_dump(mode="json")
        assert (
            c.post("/v1/evaluate", json={"question": question, "answer": abstained}).json()["outcome"]
            == "abstained"
        )
    missing = settings.evaluator.model_copy(update={"judge": "head", "citation_head": tmp_path / "nothing"})
    with TestClient(create_app(settings.model_copy(update={"evaluator": missing}), agent=agent)) as c:
        failed = c.post(
            "/v1/evaluate", json={"question": question, "answer": answer, "metrics": ["citation"]}
        )
        assert failed.status_code == 503 and "biocite calibrate citation" in failed.json()["detail"]


# --- the queue, on a real server -----------------------------------------------------------------------


class SlowAgent:
    """Yields one `start` event every `delay` s (`steps` of them; 2 for a question containing "quick"),
    then an abstaining answer; records how many ran at once and which generators were closed early."""

    def __init__(self, steps: int = 200, delay: float = 0.02, fail: bool = False) -> None:
        self.steps, self.delay, self.fail = steps, delay, fail
        self.lock = threading.Lock()
        self.running = self.max_running = self.runs = self.closed_early = 0
        self.consumed: list[int] = []

    def stream(
        self, question: str, *, mode: str | None = None, thread_id: str | None = None
    ) -> Iterator[dict]:
        with self.lock:
            self.running += 1
            self.runs += 1
            self.max_running = max(self.max_running, self.running)
        steps = 2 if "quick" in question else self.steps
        done = False
        i = 0
        try:
            for i in range(steps):  # noqa: B007
                time.sleep(self.delay)
                yield {"event": "start", "node": f"step{i}"}
            if self.fail:
                raise ModelError("cannot reach the LLM endpoint http://nowhere/v1")
            done = True
            yield {
                "event": "answer",
                "answer": Answer(question=question, abstained=True, abstain_reason="fake"),
            }
        finally:
            with self.lock:
                self.running -= 1
                self.consumed.append(i + 1)
                self.closed_early += not done


@contextmanager
def live_server(app: Any) -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    until(lambda: server.started, "server start")
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def until(condition: Callable[[], Any], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def raw_post(port: int, path: str, body: dict) -> socket.socket:
    """A request on a raw socket, so the test can drop the connection whenever it likes."""
    data = json.dumps(body).encode()
    conn = socket.create_connection(("127.0.0.1", port))
    head = f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    conn.sendall(head.encode() + data)
    return conn


def read_until(conn: socket.socket, marker: bytes, timeout: float = 10.0) -> bytes:
    conn.settimeout(timeout)
    seen = b""
    while marker not in seen:
        chunk = conn.recv(4096)
        assert chunk, f"connection closed before {marker!r}: {seen!r}"
        seen += chunk
    return seen


def fake_settings(setup: tuple, **server: Any) -> Settings:
    settings = setup[0]
    return settings.model_copy(
        update={"server": settings.server.model_copy(update={"preload": False, **server})}
    )


def test_queue_429_and_disconnects_free_their_place(setup) -> None:
    agent = SlowAgent()
    with live_server(create_app(fake_settings(setup, queue_size=1), agent=agent)) as port:
        base = f"http://127.0.0.1:{port}"

        def queue() -> dict:
            return httpx.get(f"{base}/healthz").json()["queue"]

        running = raw_post(port, "/v1/ask/stream", {"question": "slow one"})
        read_until(running, b"event: start")
        assert queue() == {"running": 1, "waiting": 0, "capacity": 2}

        waiting = raw_post(port, "/v1/ask", {"question": "queued one"})
        until(lambda: queue()["waiting"] == 1, "a waiting request")
        for path in ("/v1/ask", "/v1/ask/stream"):
            full = httpx.post(f"{base}{path}", json={"question": "one too many"})
            assert full.status_code == 429 and "queue is full" in full.json()["detail"]
            assert int(full.headers["retry-after"]) >= 1

        waiting.close()  # a queued client leaves: its place is free again, and it never runs
        until(lambda: queue()["waiting"] == 0, "the queued request to leave")
        queued_stream = raw_post(port, "/v1/ask/stream", {"question": "queued stream"})
        assert b": queued" in read_until(queued_stream, b"\n\n")
        assert queue()["waiting"] == 1
        queued_stream.close()
        until(lambda: queue()["waiting"] == 0, "the queued stream to leave")

        running.close()  # the running client leaves: the agent's generator is closed between events
        until(lambda: queue()["running"] == 0, "the running request to stop")
        assert agent.closed_early == 1 and agent.consumed[0] < agent.steps

        done = httpx.post(f"{base}/v1/ask", json={"question": "a quick one"}, timeout=10)
        assert done.status_code == 200 and done.json()["abstain_reason"] == "fake"
        assert agent.runs == 2 and agent.max_running == 1  # the queued ones never ran; never two at once


def test_concurrent_requests_run_one_at_a_time(setup) -> None:
    agent = SlowAgent(steps=5, delay=0.02)
    app = create_app(fake_settings(setup, queue_size=4), agent=agent)
    with live_server(app) as port:
        results: list[int] = []

        def ask(i: int) -> None:
            r = httpx.post(f"http://127.0.0.1:{port}/v1/ask", json={"question": f"question {i}"}, timeout=20)
            results.append(r.status_code)

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [200] * 5 and agent.runs == 5 and agent.max_running == 1
        until(lambda: not app.state.service.runs, "finished runs to be forgotten")


def test_agent_errors_are_reported(setup) -> None:
    agent = SlowAgent(steps=2, delay=0.0, fail=True)
    with TestClient(create_app(fake_settings(setup), agent=agent)) as c:
        response = c.post("/v1/ask", json={"question": "Does aspirin work?"})
        assert response.status_code == 503 and "cannot reach the LLM endpoint" in response.json()["detail"]
        with c.stream("POST", "/v1/ask/stream", json={"question": "Does aspirin work?"}) as stream:
            events = sse_events(stream.read().decode())
        assert [k for k, _ in events] == ["start", "start", "error"]
        assert "cannot reach the LLM endpoint" in events[-1][1]["detail"]
        assert c.get("/healthz").json()["queue"]["running"] == 0


def test_stream_sends_keep_alive_comments_while_queued_and_during_long_steps(setup, monkeypatch) -> None:
    import biocite.app.server

    monkeypatch.setattr(biocite.app.server, "HEARTBEAT_S", 0.05)
    agent = SlowAgent(steps=3, delay=0.3)
    with live_server(create_app(fake_settings(setup), agent=agent)) as port:
        first = raw_post(port, "/v1/ask/stream", {"question": "first"})
        read_until(first, b"event: start")
        second = raw_post(port, "/v1/ask/stream", {"question": "second"})
        seen = read_until(second, b"event: answer")
        assert b": still queued" in seen and b": working" in seen
        assert seen.index(b": still queued") < seen.index(b"event: start") < seen.rindex(b": working")
        first.close()
        second.close()
        assert agent.max_running == 1


def test_unknown_host_header_is_refused(setup) -> None:
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends `Host: evil.example`."""
    settings = fake_settings(setup, allowed_hosts=["localhost", "127.0.0.1", "::1"])
    with TestClient(create_app(settings, agent=SlowAgent()), base_url="http://localhost:8000") as c:
        assert c.get("/healthz").status_code == 200
        assert c.get("/healthz", headers={"Host": "[::1]:8000"}).status_code == 200
        refused = c.get("/v1/search", params={"q": "aspirin"}, headers={"Host": "evil.example:8000"})
        assert refused.status_code == 400 and "evil.example" in refused.json()["detail"]
    anyone = fake_settings(setup, allowed_hosts=["*"])
    with TestClient(create_app(anyone, agent=SlowAgent()), base_url="http://evil.example") as c:
        assert c.get("/healthz").status_code == 200


def test_evaluate_work_per_request_is_capped(setup) -> None:
    """50 sentences x 20 citations held the single worker for a minute; now 422 before any work."""
    settings = fake_settings(setup, max_eval_citations=100)
    sentences = [
        AnswerSentence(text=f"Claim {i}.", citations=[Citation(pmid=str(1000 + j)) for j in range(20)])
        for i in range(50)
    ]
    body = {
        "question": "Does aspirin work?",
        "answer": Answer(question="q", sentences=sentences).model_dump(),
    }
    with TestClient(create_app(settings, agent=SlowAgent())) as c:
        response = c.post("/v1/evaluate", json=body)
    assert response.status_code == 422 and "1000" in response.json()["detail"]
    assert "server.max_eval_citations" in response.json()["detail"]
