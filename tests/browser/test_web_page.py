"""The chat page end to end in headless Chromium (Debian's `chromium`, driven by Playwright; no browser
download): a real index of a small fixture corpus, the real app from `biocite.app.server.create_app` served by
uvicorn on a loopback port, extractive mode (no LLM).

Checked: a cited answer with numbered markers and a PubMed-linked reference list; hovering (and keyboard
selection of) a sentence shows the cited abstract with exactly the evidence span highlighted and its
phrases marked; a question word read as the evidence writes it is said beside the verdict; markup and script
in a corpus entry render as literal text; a follow-up keeps the thread;
an abstention shows its reason and queries; a 422 reads as a message; a token-protected server (401)
gets the token typed into the page on the next requests; a full queue (429) and an `error` event after
streamed tokens (both intercepted, the page's handling is real) read as messages. A screenshot is kept in
build/test-artifacts/web_page.png (or $BIOCITE_TEST_ARTIFACTS). Skipped when no Chromium binary is installed.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import REPO

BROWSERS = ("chromium", "chromium-browser", "chromium-headless-shell", "google-chrome")
CHROMIUM = next((path for path in map(shutil.which, BROWSERS) if path), None)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.slow,  # a real MiniLM index and a browser: ~20 s on 2 busy cores
    pytest.mark.skipif(
        CHROMIUM is None, reason="no Chromium binary installed (Debian: apt-get install chromium)"
    ),
]
playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)

XSS_PMID = "3003"
XSS_TITLE = "Zinc <b>lozenges</b> and the common cold <script>window.__xss = 1</script>"
XSS_IMG = '<img src=x onerror="window.__xss = 2">'

CORPUS = [
    {
        "pmid": "3001",
        "title": "Aspirin after ischaemic stroke: a randomised trial",
        "abstract": "We randomised 2,000 patients with a recent ischaemic stroke to aspirin or placebo. "
        "Over two years of follow-up, aspirin reduced the risk of recurrent stroke by 22%, although minor bruising was common. "
        "Major bleeding was rare and did not differ between the groups.",
        "year": 2019,
        "journal": "Stroke Trials",
    },
    {
        "pmid": "3002",
        "title": "Low-dose aspirin for secondary stroke prevention: meta-analysis",
        "abstract": "Twelve trials of aspirin after transient ischaemic attack or stroke were pooled. "
        "Low-dose aspirin lowered the risk of recurrent stroke by about one fifth, with similar effects in men and women. "
        "Gastrointestinal bleeding increased slightly with aspirin.",
        "year": 2021,
        "journal": "Cochrane Reviews in Neurology",
    },
    {
        "pmid": XSS_PMID,
        "title": XSS_TITLE,
        "abstract": "Adults with a common cold took zinc lozenges or placebo lozenges every two hours. "
        f"In this trial, zinc lozenges shortened the duration of common cold symptoms by two days {XSS_IMG}, whereas placebo lozenges did not. "
        "Nausea and a bad taste were more common with <i>zinc</i> lozenges.",
        "year": 2020,
        "journal": "Journal of <em>Respiratory</em> Infections",
    },
    {
        "pmid": "3004",
        "title": "Metformin versus insulin in gestational diabetes",
        "abstract": "Women with gestational diabetes were randomised to metformin or insulin. "
        "Metformin lowered maternal weight gain compared with insulin. "
        "Neonatal hypoglycaemia was less frequent with metformin.",
        "year": 2018,
        "journal": "Obstetric Medicine",
    },
    {
        "pmid": "3005",
        "title": "Vitamin D supplementation and fractures in older adults",
        "abstract": "Daily vitamin D did not reduce hip fractures in community-dwelling adults over 70. "
        "Falls were similar in both arms of the trial.",
        "year": 2022,
        "journal": "Bone and Ageing",
    },
    {
        "pmid": "3006",
        "title": "Arthroscopic meniscectomy versus exercise therapy for degenerative meniscal tears",
        "abstract": "Arthroscopic partial meniscectomy was compared with supervised exercise therapy. "
        "At 12 months, knee function did not differ between the groups.",
        "year": 2017,
        "journal": "Knee Surgery Reports",
    },
    {
        "pmid": "3007",
        "title": "Statins and muscle symptoms: blinded n-of-1 trials",
        "abstract": "Patients who had stopped statins because of muscle pain took atorvastatin or placebo in "
        "alternating months. Muscle symptom scores were similar during statin and placebo months.",
        "year": 2021,
        "journal": "Cardiology Practice",
    },
    {
        "pmid": "3008",
        "title": "Early mobilisation after hip fracture surgery",
        "abstract": "Patients were mobilised within 24 hours of hip fracture surgery or later. "
        "Early mobilisation shortened hospital stay and reduced delirium.",
        "year": 2016,
        "journal": "Orthogeriatrics",
    },
    {
        "pmid": "3009",
        "title": "Naloxone reverses the antihypertensive effect of clonidine",
        "abstract": "In spontaneously hypertensive rats, intravenous clonidine lowered blood pressure and heart rate. "
        "Naloxone reversed the fall in blood pressure produced by clonidine in these rats.",
        "year": 1979,
        "journal": "Hypertension Research",
    },
]

STROKE_QUESTION = "Does aspirin reduce the risk of recurrent stroke?"
FOLLOW_UP = "Does it increase bleeding?"
ZINC_QUESTION = "Do zinc lozenges shorten the duration of common cold symptoms?"
OFF_TOPIC = "What is the best rewarming treatment for frostbite of the fingers?"


# --- server and browser -------------------------------------------------------------------------------


@contextmanager
def serving(app) -> Iterator[str]:
    """The app under uvicorn in a background thread on a free loopback port; yields its base URL."""
    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    """Settings and an Agent (with chat memory) on a real index of CORPUS."""
    from biocite.agent.graph import Agent, make_checkpointer
    from biocite.index.build import build_index
    from biocite.index.hybrid import clear_retriever_cache, open_retriever
    from biocite.settings import load_settings

    root = tmp_path_factory.mktemp("web")
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(row) + "\n" for row in CORPUS))
    settings = load_settings("test", [f"home={root / 'home'}", f"index.dir={root / 'index'}"])
    build_index(settings, [corpus], progress=False)
    clear_retriever_cache()
    yield settings, Agent(settings, retriever=open_retriever(settings), checkpointer=make_checkpointer())
    clear_retriever_cache()


def make_app(settings, agent, token: str | None):
    """`create_app` with the API token variable set to `token` (or unset) while the app reads it."""
    from biocite.app.server import create_app

    name = settings.server.token_env
    saved = os.environ.pop(name, None)
    if token is not None:
        os.environ[name] = token
    try:
        return create_app(settings, agent=agent)
    finally:
        os.environ.pop(name, None)
        if saved is not None:
            os.environ[name] = saved


@pytest.fixture(scope="module")
def base_url(stack) -> Iterator[str]:
    with serving(make_app(*stack, token=None)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator:
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@contextmanager
def open_page(browser, url: str) -> Iterator:
    """A fresh browser context on the chat page, extractive mode selected; fails on any JavaScript error."""
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    context.set_default_timeout(30_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url + "/")
    page.locator("body[data-ready=true]").wait_for()
    page.select_option("#mode", "extractive")
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture
def page(browser, base_url: str) -> Iterator:
    with open_page(browser, base_url) as page:
        yield page


def sse_events(body: str) -> list[tuple[str, object]]:
    events = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        kind, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            events.append((kind, json.loads("\n".join(data))))
    return events


def ask(page, question: str) -> tuple[dict, dict]:
    """Types the question, sends it with Enter; returns (the request body, the streamed Answer JSON)."""
    turns = page.locator("article.turn").count()
    page.fill("#question", question)
    with page.expect_response(lambda r: r.url.endswith("/v1/ask/stream")) as info:
        page.press("#question", "Enter")
    response = info.value
    assert response.status == 200, response.text()
    events = sse_events(response.text())
    assert events and events[-1][0] == "answer", events[-1:]
    assert any(kind in ("start", "step") for kind, _ in events), "no progress events were streamed"
    turn = page.locator("article.turn").nth(turns)
    turn.locator(".reply:not([aria-busy])").wait_for()
    return json.loads(response.request.post_data or "{}"), events[-1][1]


def numbering(answer: dict) -> dict[str, int]:
    numbers: dict[str, int] = {}
    for sentence in answer["sentences"]:
        for citation in sentence["citations"]:
            numbers.setdefault(citation["pmid"], len(numbers) + 1)
    return numbers


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])


# --- tests --------------------------------------------------------------------------------------------


def test_answer_sentences_carry_numbered_markers_and_a_pubmed_reference_list(page) -> None:
    request, answer = ask(page, STROKE_QUESTION)
    assert request["mode"] == "extractive" and request["question"] == STROKE_QUESTION
    assert not answer["abstained"] and len(answer["sentences"]) >= 2
    numbers = numbering(answer)
    assert set(numbers) >= {"3001", "3002"}
    turn = page.locator("article.turn").last
    sentences = turn.locator(".sentence")
    assert sentences.count() == len(answer["sentences"])
    for i, sentence in enumerate(answer["sentences"]):
        shown = sentences.nth(i)
        assert shown.evaluate("node => node.firstChild.nodeValue") == sentence["text"]
        markers = shown.locator(".cite").all_inner_texts()
        assert markers == [f"[{numbers[c['pmid']]}]" for c in sentence["citations"]]
        assert shown.get_attribute("tabindex") == "0"
        if sentence["support"] is not None:
            assert shown.locator(".support").text_content() == f" support {round(sentence['support'] * 100)}%"
    items = turn.locator(".references li")
    assert items.count() == len(numbers)
    titles = {row["pmid"]: row["title"] for row in CORPUS}
    for pmid, n in numbers.items():
        item = turn.locator(f".references li[data-pmid='{pmid}']")
        assert item.locator(".ref-num").inner_text() == f"[{n}]"
        assert titles[pmid] in item.inner_text()
        link = item.locator("a")
        assert link.get_attribute("href") == f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
        assert link.inner_text() == f"PMID {pmid}"
    assert [int(t.strip("[]")) for t in items.locator(".ref-num").all_inner_texts()] == list(
        range(1, len(numbers) + 1)
    )


def test_hovering_a_sentence_shows_its_evidence_highlighted_in_the_abstract(page) -> None:
    _, answer = ask(page, STROKE_QUESTION)
    abstracts = {row["pmid"]: row["abstract"] for row in CORPUS}
    numbers = numbering(answer)
    turn = page.locator("article.turn").last
    panel = page.locator("#panel-body")
    for index in (1, 0):  # the second sentence first: not just whatever happens to be shown by default
        sentence = answer["sentences"][index]
        turn.locator(".sentence").nth(index).hover()
        panel.locator(f".selected-sentence[data-index='{index}']").wait_for()
        assert turn.locator(".sentence").nth(index).get_attribute("aria-pressed") == "true"
        docs = panel.locator("article.doc")
        assert docs.count() == len(sentence["citations"])
        for citation in sentence["citations"]:
            doc = panel.locator(f"article.doc[data-pmid='{citation['pmid']}']")
            doc.locator(".abstract").wait_for()
            assert doc.locator(".doc-num").inner_text() == f"[{numbers[citation['pmid']]}]"
            # the whole abstract is shown, as text, with exactly the evidence spans marked
            assert doc.locator(".abstract").text_content() == abstracts[citation["pmid"]]
            marks = doc.locator("mark.ev")
            spans = sorted({(e["span"]["start"], e["span"]["text"]) for e in citation["evidence"]})
            assert marks.all_text_contents() == [text for _, text in spans]
            assert [int(m.get_attribute("data-start")) for m in marks.all()] == [start for start, _ in spans]
            phrases = sorted({(p["start"], p["text"]) for e in citation["evidence"] for p in e["phrases"]})
            assert phrases, "the fixture answers are expected to carry contributory phrases"
            assert doc.locator("mark.ev .phrase").all_text_contents() == [text for _, text in phrases]
            assert (
                doc.locator(".doc-meta a").get_attribute("href")
                == f"https://pubmed.ncbi.nlm.nih.gov/{citation['pmid']}/"
            )
    # keyboard: Tab-focus the second sentence and press Enter
    turn.locator(".sentence").nth(1).focus()
    page.keyboard.press("Enter")
    panel.locator(".selected-sentence[data-index='1']").wait_for()
    page.mouse.move(5, 890)
    page.wait_for_timeout(300)  # let the highlight transitions finish before the screenshot

    artifacts = Path(os.environ.get("BIOCITE_TEST_ARTIFACTS", REPO / "build" / "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "web_page.png"
    shot.unlink(missing_ok=True)
    page.screenshot(path=str(shot))
    assert png_size(shot) == (1360, 900) and shot.stat().st_size > 30_000  # painted, not a blank page


def test_markup_and_script_in_the_corpus_render_as_literal_text(page) -> None:
    _, answer = ask(page, ZINC_QUESTION)
    cited = [
        i for i, s in enumerate(answer["sentences"]) if any(c["pmid"] == XSS_PMID for c in s["citations"])
    ]
    assert cited, "the hostile abstract must be cited for this test to mean anything"
    hostile = next(i for i in cited if XSS_IMG in answer["sentences"][i]["text"])
    turn = page.locator("article.turn").last
    turn.locator(".sentence").nth(hostile).hover()
    doc = page.locator(f"#panel-body article.doc[data-pmid='{XSS_PMID}']")
    doc.locator(".abstract").wait_for()

    assert page.evaluate("() => typeof window.__xss") == "undefined"
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == 1  # app.js only
    for tag in ("b", "i", "em"):
        created = page.locator(f"article.turn {tag}, #panel-body {tag}").count()
        assert created == 0, f"a <{tag}> element was created from corpus text"
    abstract = next(row["abstract"] for row in CORPUS if row["pmid"] == XSS_PMID)
    assert doc.locator(".doc-title").inner_text() == XSS_TITLE
    assert doc.locator(".abstract").text_content() == abstract
    assert XSS_IMG in doc.locator("mark.ev").first.inner_text()
    assert XSS_TITLE in turn.locator(f".references li[data-pmid='{XSS_PMID}']").inner_text()
    assert XSS_IMG in turn.locator(".sentence").nth(hostile).inner_text()
    assert doc.locator(".abstract").is_visible()


def test_follow_up_questions_keep_the_conversation_until_it_is_reset(page) -> None:
    first, _ = ask(page, STROKE_QUESTION)
    second, answer = ask(page, FOLLOW_UP)
    assert first["thread_id"] and second["thread_id"] == first["thread_id"]
    # the agent completed the follow-up from the conversation (the previous question is searched with it, the
    # marker's word "context" is not), and the page shows what was searched
    searched = answer["trace"]["queries"][0]
    assert (
        searched.startswith(FOLLOW_UP) and "aspirin" in searched.lower() and "context" not in searched.lower()
    )
    assert page.locator("article.turn").count() == 2
    trace = page.locator("article.turn").last.locator("details.trace")
    trace.locator("summary").click()
    assert answer["trace"]["queries"][0] in trace.inner_text()
    assert any("bleeding" in s["text"].lower() for s in answer["sentences"])

    page.click("#new-conversation")
    assert page.locator("article.turn").count() == 0 and page.locator("#empty-state").is_visible()
    third, _ = ask(page, STROKE_QUESTION)
    assert third["thread_id"] and third["thread_id"] != first["thread_id"]


def test_an_abstention_shows_its_reason_and_what_was_searched(page) -> None:
    _, answer = ask(page, OFF_TOPIC)
    assert answer["abstained"] and answer["abstain_reason"]
    turn = page.locator("article.turn").last
    box = turn.locator(".abstention")
    assert box.is_visible()
    assert answer["abstain_reason"] in box.inner_text()
    assert box.locator("ul.queries li").all_inner_texts() == answer["trace"]["queries"]
    assert turn.locator(".sentence").count() == 0 and turn.locator(".references").count() == 0


def test_a_question_word_read_otherwise_is_said_with_the_bottom_line(page) -> None:
    """No indexed abstract has "lowdose"; one writes "Low-dose": the page says how the word was read."""
    _, answer = ask(page, "Does lowdose aspirin prevent recurrent stroke?")
    assert not answer["abstained"], answer["abstain_reason"]
    assert answer["readings"] == ["read 'lowdose' as 'low dose': no indexed abstract has 'lowdose'"]
    line = page.locator("article.turn").last.locator(".verdict")
    assert line.is_visible() and answer["readings"][0] in line.inner_text()


def test_an_answer_from_animal_studies_only_says_so_with_the_bottom_line(page) -> None:
    _, answer = ask(page, "Does naloxone reverse the antihypertensive effect of clonidine?")
    assert not answer["abstained"], answer["abstain_reason"]
    assert answer["caveats"] == ["every cited study is in animals: none of them is in people"]
    line = page.locator("article.turn").last.locator(".verdict")
    assert line.is_visible() and "Caveat: every cited study is in animals" in line.inner_text()


def test_a_rejected_question_reads_as_a_message(page) -> None:
    page.locator("#question").evaluate("node => node.removeAttribute('maxlength')")
    page.fill("#question", "Does aspirin help? " * 80)  # longer than the server accepts
    with page.expect_response(lambda r: r.url.endswith("/v1/ask/stream")) as info:
        page.press("#question", "Enter")
    assert info.value.status == 422
    error = page.locator("article.turn").last.locator(".error-box")
    error.wait_for()
    assert error.inner_text().startswith("The question was not accepted:")
    assert page.locator("#ask-button").is_enabled()


def test_a_server_with_an_api_token_asks_for_it_and_the_page_then_sends_it(browser, stack) -> None:
    with serving(make_app(*stack, token="s3cret-token")) as url, open_page(browser, url) as page:
        page.fill("#question", STROKE_QUESTION)
        with page.expect_response(lambda r: r.url.endswith("/v1/ask/stream")) as info:
            page.press("#question", "Enter")
        assert info.value.status == 401
        error = page.locator("article.turn .error-box")
        error.wait_for()
        assert error.inner_text().startswith("This server needs an API token")
        error.locator("input").fill("s3cret-token")
        error.locator("button").click()
        assert page.evaluate("() => localStorage.getItem('biocite_token')") == "s3cret-token"
        request, answer = ask(page, STROKE_QUESTION)
        assert not answer["abstained"] and answer["sentences"]
        # the abstracts come from /v1/documents, which needs the token as well
        page.locator("article.turn").last.locator(".sentence").first.hover()
        page.locator("#panel-body article.doc .abstract").first.wait_for()
        assert page.locator("#panel-body mark.ev").count() >= 1


def test_a_busy_queue_and_a_failure_mid_stream_read_as_messages(page) -> None:
    """A full queue and a failure after some streamed tokens, which the fixture server does not produce on
    demand, come from Playwright's request interception; the page's parsing and rendering are real."""
    replies = [
        {"status": 429, "headers": {"Retry-After": "7"}, "body": json.dumps({"detail": "queue full"})},
        {
            "status": 200,
            "headers": {"Content-Type": "text/event-stream"},
            # CRLF line ends, a keep-alive comment and a two-line data field, as SSE allows
            "body": 'event: start\r\ndata: {"node": "generate"}\r\n\r\n: ping\r\n\r\n'
            'event: token\r\ndata: {"text": "Aspirin <b>lowers</b>"}\r\n\r\n'
            'event: token\r\ndata: {"text": " risk"}\r\n\r\n'
            'event: error\r\ndata: {"detail":\r\ndata: "the model server <went> away"}\r\n\r\n',
        },
    ]
    served: list[int] = []

    def handle(route) -> None:
        reply = replies[len(served)]
        served.append(reply["status"])
        route.fulfill(
            status=reply["status"],
            headers=reply.get("headers", {"Content-Type": "application/json"}),
            body=reply["body"],
        )

    page.route("**/v1/ask/stream", handle)
    errors = page.locator("article.turn .error-box")
    page.fill("#question", "first")
    page.press("#question", "Enter")
    errors.nth(0).wait_for()
    assert errors.nth(0).inner_text() == (
        "The server is busy with other questions (the queue is full). Please try again in 7 s."
    )
    assert page.input_value("#question") == "first"  # back in the box, ready to resend
    page.fill("#question", "second")
    page.press("#question", "Enter")
    errors.nth(1).wait_for()
    assert errors.nth(1).inner_text() == "The answer failed: the model server <went> away"
    assert page.locator("article.turn .draft").count() == 0  # the unchecked draft is gone
    assert page.locator("article.turn b").count() == 0
    assert page.locator("#ask-button").is_enabled() and served == [429, 200]
