// biocite chat page. Plain JS, no build step, no external resources.
// Safety rule: every piece of server text (question, answer, titles, abstracts, details) is inserted as a
// text node; nothing here assigns innerHTML, so markup in a corpus entry renders as literal text.
"use strict";

(() => {
  const STEP_LABELS = {
    contextualize: "Reading the conversation",
    plan: "Planning the search",
    retrieve: "Searching the abstracts",
    attribute: "Selecting evidence sentences",
    conclude: "Weighing the bottom line",
    generate: "Writing the answer",
    verify: "Checking each sentence against its citations",
    polish: "Checking numbers and quotations",
    extractive: "Quoting the evidence",
    abstain: "Deciding not to answer",
    finalize: "Finishing",
  };
  const MAX_PMIDS_PER_REQUEST = 50;
  const HOVER_DELAY_MS = 120;

  const $ = (id) => document.getElementById(id);
  const ui = {
    conversation: $("conversation"),
    emptyState: $("empty-state"),
    form: $("ask-form"),
    question: $("question"),
    ask: $("ask-button"),
    stop: $("stop-button"),
    mode: $("mode"),
    reset: $("new-conversation"),
    panelBody: $("panel-body"),
  };

  const state = {
    threadId: newThreadId(),
    controller: null,
    turns: [], // {id, answer, numbers: Map pmid -> n, sentenceEls: []}
    docs: new Map(), // pmid -> DocumentView | {error: string}
    selected: null, // {turn, index}
    hoverTimer: null,
  };

  // --- small DOM helpers (text only) ---------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    append(node, ...children);
    return node;
  }

  function append(node, ...children) {
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function newThreadId() {
    if (window.crypto && typeof crypto.randomUUID === "function") return crypto.randomUUID();
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function authHeaders() {
    let token = null;
    try {
      token = localStorage.getItem("biocite_token");
    } catch (_) {
      token = null; // storage disabled
    }
    return token ? { Authorization: `Bearer ${token}` } : {};
  }

  function pubmedUrl(pmid) {
    return `https://pubmed.ncbi.nlm.nih.gov/${encodeURIComponent(pmid)}/`;
  }

  function scrollConversation() {
    const box = ui.conversation;
    box.scrollTop = box.scrollHeight;
  }

  // --- server-sent events over fetch -----------------------------------------------------------------

  // Yields {event, data} for each event block of a text/event-stream body (LF or CRLF line ends).
  async function* sseEvents(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // a trailing CR may be the first half of a CRLF split across chunks: keep it for the next round
      const keep = !done && buffer.endsWith("\r") ? "\r" : "";
      let text = (keep ? buffer.slice(0, -1) : buffer).replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = text.indexOf("\n\n")) >= 0) {
        const event = parseEventBlock(text.slice(0, cut));
        text = text.slice(cut + 2);
        if (event) yield event;
      }
      buffer = text + keep;
      if (done) break;
    }
    const last = parseEventBlock(buffer.replace(/\r\n?/g, "\n"));
    if (last) yield last;
  }

  function parseEventBlock(block) {
    let kind = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue; // blank or comment (keep-alive ping)
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") kind = value;
      else if (field === "data") data.push(value);
    }
    if (!data.length) return null;
    const raw = data.join("\n");
    try {
      return { event: kind, data: JSON.parse(raw) };
    } catch (_) {
      return { event: kind, data: raw };
    }
  }

  async function errorDetail(response) {
    let text = "";
    try {
      text = await response.text();
      const body = JSON.parse(text);
      const detail = body && body.detail !== undefined ? body.detail : body;
      if (typeof detail === "string") return detail;
      if (Array.isArray(detail)) {
        // FastAPI validation errors: [{loc: [...], msg: "..."}]
        return detail.map((d) => (d && d.msg ? `${(d.loc || []).slice(1).join(".") || "request"}: ${d.msg}` : String(d))).join("; ");
      }
      return JSON.stringify(detail);
    } catch (_) {
      return text.trim().slice(0, 300) || response.statusText || "no details";
    }
  }

  function httpErrorMessage(status, detail, response) {
    if (status === 429) {
      const wait = response.headers.get("Retry-After");
      const when = wait ? ` Please try again in ${wait} s.` : " Please try again shortly.";
      return `The server is busy with other questions (the queue is full).${when}`;
    }
    if (status === 401 || status === 403) return `This server needs an API token (${detail}).`;
    if (status === 422) return `The question was not accepted: ${detail}`;
    if (status >= 500) return `The server failed (HTTP ${status}): ${detail}`;
    return `The request failed (HTTP ${status}): ${detail}`;
  }

  // --- asking ----------------------------------------------------------------------------------------

  async function ask(question) {
    const mode = ui.mode.value;
    const turn = createTurn(question, mode);
    const controller = new AbortController();
    state.controller = controller;
    setBusy(true);
    const started = performance.now();
    let finished = false;
    try {
      const response = await fetch("v1/ask/stream", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...authHeaders() },
        body: JSON.stringify({ question, mode, thread_id: state.threadId }),
        signal: controller.signal,
      });
      if (!response.ok) {
        const detail = await errorDetail(response);
        showError(turn, httpErrorMessage(response.status, detail, response), response.status === 401);
        offerAgain(question);
        return;
      }
      if (!response.body) throw new Error("this browser cannot read streamed responses");
      for await (const { event, data } of sseEvents(response.body)) {
        if (event === "start") addStep(turn, data.node);
        else if (event === "step") addDetail(turn, data.detail);
        else if (event === "token") addToken(turn, data.text);
        else if (event === "answer") {
          finished = true;
          renderAnswer(turn, data, (performance.now() - started) / 1000);
        } else if (event === "error") {
          finished = true;
          showError(turn, `The answer failed: ${data && data.detail ? data.detail : String(data)}`);
        }
      }
      if (!finished) showError(turn, "The connection closed before the answer arrived.");
    } catch (err) {
      if (err && err.name === "AbortError") showError(turn, "Stopped.");
      else showError(turn, `Could not reach the server: ${err && err.message ? err.message : err}`);
      offerAgain(question);
    } finally {
      if (state.controller === controller) {
        state.controller = null;
        setBusy(false);
      }
    }
  }

  // A request that never reached the agent: the question goes back into the box, ready to resend.
  function offerAgain(question) {
    if (!ui.question.value.trim()) ui.question.value = question;
  }

  function setBusy(busy) {
    ui.ask.disabled = busy;
    ui.stop.hidden = !busy;
    ui.ask.textContent = busy ? "Working…" : "Ask";
  }

  function createTurn(question, mode) {
    ui.emptyState.hidden = true;
    const id = state.turns.length + 1;
    const progressList = el("ol");
    const progress = el("div", { class: "progress", role: "status" },
      el("span", { class: "spinner", "aria-hidden": "true" }), "Working on it", progressList);
    const reply = el("div", { class: "reply", "aria-busy": "true" },
      el("div", { class: "reply-meta" }, el("span", { class: "mode-badge" }, mode)),
      progress);
    const root = el("article", { class: "turn", id: `turn-${id}`, "data-turn": id },
      el("div", { class: "question" }, question), reply);
    ui.conversation.appendChild(root);
    const turn = { id, root, reply, progress, progressList, draft: null, steps: [], answer: null,
      numbers: new Map(), sentenceEls: [] };
    state.turns.push(turn);
    scrollConversation();
    return turn;
  }

  function addStep(turn, node) {
    const current = turn.progressList.querySelector(".current");
    if (current) current.classList.remove("current");
    const item = el("li", { class: "current", "data-node": node }, STEP_LABELS[node] || node);
    turn.progressList.appendChild(item);
    turn.steps.push({ node, details: [] });
    scrollConversation();
  }

  function addDetail(turn, detail) {
    if (!detail) return;
    const items = turn.progressList.children;
    const parent = items.length ? items[items.length - 1] : turn.progressList;
    let sub = parent.querySelector("ul");
    if (!sub) {
      sub = el("ul");
      parent.appendChild(sub);
    }
    sub.appendChild(el("li", null, detail));
    scrollConversation();
  }

  function addToken(turn, text) {
    if (!turn.draft) {
      turn.draft = el("span");
      turn.reply.appendChild(el("div", { class: "draft" },
        el("span", { class: "draft-label" }, "Draft, not yet checked against the evidence"), turn.draft));
    }
    turn.draft.appendChild(document.createTextNode(text));
    scrollConversation();
  }

  function finishProgress(turn) {
    turn.reply.removeAttribute("aria-busy");
    turn.progress.remove();
    if (turn.draft) {
      turn.draft.parentNode.remove();
      turn.draft = null;
    }
  }

  function showError(turn, message, offerToken) {
    finishProgress(turn);
    const box = el("div", { class: "error-box", role: "alert" }, el("p", null, message));
    if (offerToken) box.appendChild(tokenForm());
    turn.reply.appendChild(box);
    scrollConversation();
  }

  function tokenForm() {
    const input = el("input", { type: "password", "aria-label": "API token", placeholder: "API token" });
    const save = el("button", { type: "submit", class: "secondary" }, "Save token");
    const form = el("form", { class: "token-form" }, input, save);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      try {
        localStorage.setItem("biocite_token", input.value.trim());
        form.replaceWith(el("p", { class: "muted" }, "Token saved in this browser. Ask again."));
      } catch (_) {
        form.replaceWith(el("p", null, "This browser does not allow saving the token."));
      }
    });
    return form;
  }

  // --- rendering an answer ---------------------------------------------------------------------------

  function citationNumbers(answer) {
    const numbers = new Map();
    for (const sentence of answer.sentences || []) {
      for (const citation of sentence.citations || []) {
        if (!numbers.has(citation.pmid)) numbers.set(citation.pmid, numbers.size + 1);
      }
    }
    return numbers;
  }

  function renderAnswer(turn, answer, seconds) {
    finishProgress(turn);
    turn.answer = answer;
    turn.numbers = citationNumbers(answer);
    const meta = turn.reply.querySelector(".reply-meta");
    clear(meta);
    append(meta, el("span", { class: "mode-badge" }, answer.mode || "answer"),
      seconds < 0.1 ? " · under 0.1 s" : ` · ${seconds.toFixed(1)} s`);
    const bottom = renderBottomLine(answer);
    if (bottom) turn.reply.appendChild(bottom);
    if (answer.abstained) turn.reply.appendChild(renderAbstention(answer));
    if ((answer.sentences || []).length) {
      turn.reply.appendChild(renderSentences(turn, answer));
      turn.reply.appendChild(renderReferences(turn, answer));
    } else if (!answer.abstained) {
      turn.reply.appendChild(el("p", { class: "muted" }, "The answer has no sentences."));
    }
    turn.reply.appendChild(renderTrace(answer));
    scrollConversation();
    loadDocuments([...turn.numbers.keys()]);
  }

  // Issue 12: the verdict of a yes/no question, the key concepts no evidence mentions, and caveats about the
  // cited evidence as a whole (only animal studies).
  // A question word no indexed abstract has, read as the evidence writes it, is said beside them.
  function renderBottomLine(answer) {
    const notCovered = answer.not_covered || [];
    const readings = answer.readings || [];
    const caveats = answer.caveats || [];
    if (!answer.verdict && !notCovered.length && !readings.length && !caveats.length) return null;
    const p = typeof answer.verdict_probability === "number"
      ? ` (probability ${answer.verdict_probability.toFixed(2)})` : "";
    return el("p", { class: "verdict", role: "note" },
      answer.verdict ? el("strong", null, `Verdict: ${answer.verdict_shown || answer.verdict}${p}`) : null,
      notCovered.length ? ` Not covered by the evidence: ${notCovered.join(", ")}.` : null,
      readings.length ? ` Note: ${readings.join("; ")}.` : null,
      caveats.length ? ` Caveat: ${caveats.join("; ")}.` : null);
  }

  function renderAbstention(answer) {
    const queries = (answer.trace && answer.trace.queries) || [];
    const retrieved = (answer.trace && answer.trace.retrieved) || [];
    return el("div", { class: "abstention", role: "note" },
      el("h3", null, "No answer: the abstracts found do not support one"),
      el("p", null, answer.abstain_reason || "The evidence was not sufficient."),
      queries.length ? el("p", null, el("strong", null, "What was searched:")) : null,
      queries.length ? el("ul", { class: "queries" }, queries.map((q) => el("li", null, q))) : null,
      el("p", { class: "muted" }, `${retrieved.length} abstract${retrieved.length === 1 ? "" : "s"} retrieved and checked.`));
  }

  function supportText(support) {
    return `${Math.round(support * 100)}%`;
  }

  function renderSentences(turn, answer) {
    const para = el("p", { class: "answer-text" });
    answer.sentences.forEach((sentence, index) => {
      const markers = (sentence.citations || []).map((c) =>
        el("sup", { class: "cite", "data-pmid": c.pmid, title: `PMID ${c.pmid}` }, `[${turn.numbers.get(c.pmid)}]`));
      const hasSupport = typeof sentence.support === "number";
      const span = el("span", {
        class: "sentence" + (hasSupport && sentence.support < 0.7 ? " low-support" : ""),
        tabindex: "0",
        role: "button",
        "aria-pressed": "false",
        "aria-controls": "evidence-panel",
        "data-index": index,
        "data-support": hasSupport ? sentence.support : null,
        title: hasSupport ? `Verified support probability ${sentence.support.toFixed(2)}` : null,
      }, sentence.text,
      // U+2060 WORD JOINER: the markers never wrap onto a line of their own
      el("span", { class: "cites" }, "\u2060", markers,
        hasSupport ? el("span", { class: "support" }, el("span", { class: "visually-hidden" }, " support "),
          supportText(sentence.support)) : null));
      span.addEventListener("click", () => select(turn, index));
      span.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          select(turn, index);
        }
      });
      span.addEventListener("mouseenter", () => {
        clearTimeout(state.hoverTimer);
        state.hoverTimer = setTimeout(() => select(turn, index), HOVER_DELAY_MS);
      });
      span.addEventListener("mouseleave", () => clearTimeout(state.hoverTimer));
      turn.sentenceEls.push(span);
      if (index) para.appendChild(document.createTextNode(" "));
      para.appendChild(span);
    });
    return para;
  }

  function renderReferences(turn, answer) {
    const byPmid = new Map((answer.references || []).map((r) => [r.pmid, r]));
    const list = el("ol");
    for (const [pmid, n] of turn.numbers) {
      const ref = byPmid.get(pmid) || { pmid, title: "" };
      const source = [ref.journal, ref.year].filter(Boolean).join(", ");
      list.appendChild(el("li", { id: `ref-${turn.id}-${n}`, "data-pmid": pmid },
        el("span", { class: "ref-num" }, `[${n}]`),
        el("span", null,
          el("button", { type: "button", class: "ref-title linklike", "aria-controls": "evidence-panel",
            title: "Show this abstract and all the evidence the answer takes from it" },
          ref.title || "(no title in the corpus)"),
          source ? el("span", { class: "ref-source" }, ` ${source}.`) : null,
          " ",
          el("a", { href: pubmedUrl(pmid), target: "_blank", rel: "noopener noreferrer" }, `PMID ${pmid}`))));
    }
    list.addEventListener("click", (event) => {
      const button = event.target.closest("button.ref-title");
      if (button) selectReference(turn, button.closest("li").dataset.pmid);
    });
    return el("section", { class: "references", "aria-label": "References" },
      el("h3", null, "References"), list);
  }

  function renderTrace(answer) {
    const trace = answer.trace || {};
    const rows = [];
    const add = (term, value) => {
      if (value !== null && value !== undefined && value !== "") rows.push(el("dt", null, term), el("dd", null, value));
    };
    if ((trace.queries || []).length) add("Searched", el("ul", null, trace.queries.map((q) => el("li", null, q))));
    add("Rounds", trace.rounds ? String(trace.rounds) : null);
    add("Retrieved", `${(trace.retrieved || []).length} abstracts`);
    const timings = trace.timings || [];
    if (timings.length) {
      const total = timings.reduce((sum, t) => sum + t.seconds, 0);
      add("Time", `${total.toFixed(1)} s (${timings.map((t) => `${t.node} ${t.seconds.toFixed(1)}`).join(", ")})`);
    }
    const models = Object.entries(trace.models || {});
    if (models.length) add("Models", models.map(([k, v]) => `${k}: ${v}`).join("; "));
    if ((trace.notes || []).length) add("Notes", el("ul", null, trace.notes.map((n) => el("li", null, n))));
    return el("details", { class: "trace" }, el("summary", null, "How this answer was made"), el("dl", null, rows));
  }

  // --- documents and the evidence panel --------------------------------------------------------------

  async function loadDocuments(pmids) {
    const missing = pmids.filter((p) => !state.docs.has(p) || state.docs.get(p).error);
    for (let i = 0; i < missing.length; i += MAX_PMIDS_PER_REQUEST) {
      const chunk = missing.slice(i, i + MAX_PMIDS_PER_REQUEST);
      try {
        const response = await fetch(`v1/documents?pmids=${chunk.map(encodeURIComponent).join(",")}`,
          { headers: { Accept: "application/json", ...authHeaders() } });
        if (!response.ok) {
          const detail = await errorDetail(response);
          const message = httpErrorMessage(response.status, detail, response);
          chunk.forEach((p) => state.docs.set(p, { error: message }));
        } else {
          const docs = await response.json();
          for (const doc of docs) state.docs.set(String(doc.pmid), doc);
          chunk.forEach((p) => state.docs.has(p) || state.docs.set(p, { error: "not in the index" }));
        }
      } catch (err) {
        chunk.forEach((p) => state.docs.set(p, { error: `could not load (${err && err.message ? err.message : err})` }));
      }
    }
    if (state.selected) renderPanel();
  }

  function unmark() {
    for (const node of document.querySelectorAll(".sentence.selected, .references li.active")) {
      node.classList.remove("selected", "active");
      if (node.hasAttribute("aria-pressed")) node.setAttribute("aria-pressed", "false");
    }
  }

  function select(turn, index) {
    clearTimeout(state.hoverTimer);
    const now = state.selected;
    if (now && now.turn === turn && now.index === index) return;
    unmark();
    const span = turn.sentenceEls[index];
    span.classList.add("selected");
    span.setAttribute("aria-pressed", "true");
    state.selected = { turn, index };
    renderPanel();
    const pmids = (turn.answer.sentences[index].citations || []).map((c) => c.pmid);
    if (pmids.some((p) => !state.docs.has(p))) loadDocuments(pmids);
  }

  // A reference: its abstract with the evidence of every answer sentence citing it.
  function selectReference(turn, pmid) {
    clearTimeout(state.hoverTimer);
    unmark();
    const citing = [];
    turn.answer.sentences.forEach((sentence, index) => {
      if ((sentence.citations || []).some((c) => c.pmid === pmid)) citing.push(index);
    });
    citing.forEach((index) => turn.sentenceEls[index].classList.add("selected"));
    const item = turn.reply.querySelector(`.references li[data-pmid="${CSS.escape(pmid)}"]`);
    if (item) item.classList.add("active");
    state.selected = { turn, pmid, citing };
    renderPanel();
    if (!state.docs.has(pmid)) loadDocuments([pmid]);
  }

  function renderPanel() {
    const body = ui.panelBody;
    clear(body);
    if (!state.selected) {
      body.appendChild(el("p", { class: "muted panel-placeholder" }, "Select an answer sentence to see the abstracts it cites."));
      return;
    }
    if (state.selected.pmid) {
      renderReferencePanel(body, state.selected);
      return;
    }
    const { turn, index } = state.selected;
    const sentence = turn.answer.sentences[index];
    const support = typeof sentence.support === "number"
      ? ` · support ${sentence.support.toFixed(2)}` : "";
    body.appendChild(el("blockquote", { class: "selected-sentence", "data-turn": turn.id, "data-index": index },
      el("span", { class: "label" }, `Answer ${turn.id}, sentence ${index + 1}${support}`),
      sentence.text));
    const citations = sentence.citations || [];
    if (!citations.length) body.appendChild(el("p", { class: "muted" }, "This sentence cites no abstract."));
    for (const citation of citations) body.appendChild(renderDocument(turn, citation));
    revealFirstMark(body);
  }

  // Scrolls the panel (not the page) so that the first highlighted evidence is in view.
  function revealFirstMark(body) {
    const first = body.querySelector("mark.ev");
    if (!first) return;
    const offset = first.getBoundingClientRect().top - body.getBoundingClientRect().top;
    if (offset > body.clientHeight - 60) body.scrollTop += offset - 80;
  }

  function renderReferencePanel(body, { turn, pmid, citing }) {
    const numbers = citing.map((i) => i + 1).join(", ");
    body.appendChild(el("blockquote", { class: "selected-sentence", "data-turn": turn.id, "data-pmid": pmid },
      el("span", { class: "label" }, `Answer ${turn.id}, reference [${turn.numbers.get(pmid)}]`),
      `Cited by sentence${citing.length === 1 ? "" : "s"} ${numbers}`));
    const evidence = [];
    for (const index of citing) {
      for (const citation of turn.answer.sentences[index].citations || []) {
        if (citation.pmid !== pmid) continue;
        for (const e of citation.evidence || []) {
          if (!evidence.some((x) => x.span.start === e.span.start && x.span.end === e.span.end)) evidence.push(e);
        }
      }
    }
    body.appendChild(renderDocument(turn, { pmid, evidence }));
    revealFirstMark(body);
  }

  function renderDocument(turn, citation) {
    const pmid = citation.pmid;
    const n = turn.numbers.get(pmid);
    const doc = state.docs.get(pmid);
    const ref = (turn.answer.references || []).find((r) => r.pmid === pmid) || {};
    const title = (doc && !doc.error && doc.title) || ref.title || "(no title in the corpus)";
    const year = (doc && doc.year) || ref.year;
    const journal = (doc && doc.journal) || ref.journal;
    const card = el("article", { class: "doc", "data-pmid": pmid },
      el("div", { class: "doc-head" }, el("span", { class: "doc-num" }, `[${n}]`), el("h3", { class: "doc-title" }, title)),
      el("p", { class: "doc-meta" }, [journal, year].filter(Boolean).join(", "),
        journal || year ? " · " : "",
        el("a", { href: pubmedUrl(pmid), target: "_blank", rel: "noopener noreferrer" }, `PMID ${pmid}`)));
    const evidence = citation.evidence || [];
    if (!doc) {
      card.appendChild(el("p", { class: "muted" }, "Loading the abstract…"));
    } else if (doc.error) {
      card.appendChild(el("p", { class: "muted" }, `Abstract ${doc.error}. Cited evidence:`));
      for (const e of evidence) card.appendChild(el("p", { class: "abstract" }, el("mark", { class: "ev" }, e.span.text)));
    } else {
      card.appendChild(renderAbstract(doc.abstract || "", evidence));
    }
    if (evidence.length) {
      const scores = evidence.map((e) => e.relevance.toFixed(2)).join(", ");
      card.appendChild(el("p", { class: "ev-score" },
        `${evidence.length} evidence sentence${evidence.length === 1 ? "" : "s"} · relevance to the question ${scores}`));
    }
    return card;
  }

  // Locates a span in the abstract: by its offsets, or by its text if the offsets do not match.
  function locate(text, span) {
    if (text.slice(span.start, span.end) === span.text) return { start: span.start, end: span.end };
    const at = span.text ? text.indexOf(span.text) : -1;
    return at >= 0 ? { start: at, end: at + span.text.length } : null;
  }

  function renderAbstract(text, evidence) {
    const spans = [];
    const unplaced = [];
    for (const e of evidence) {
      const where = locate(text, e.span);
      if (!where) {
        unplaced.push(e);
        continue;
      }
      const phrases = (e.phrases || []).map((p) => locate(text, p))
        .filter((p) => p && p.start >= where.start && p.end <= where.end);
      const same = spans.find((s) => s.start === where.start && s.end === where.end);
      if (same) same.phrases.push(...phrases);
      else spans.push({ ...where, phrases, relevance: e.relevance });
    }
    spans.sort((a, b) => a.start - b.start);
    const para = el("p", { class: "abstract" });
    let pos = 0;
    for (const span of spans) {
      if (span.start < pos) continue; // overlapping evidence: the earlier span already marks it
      append(para, text.slice(pos, span.start));
      const mark = el("mark", { class: "ev", "data-start": span.start, "data-end": span.end,
        title: `Evidence sentence (relevance ${span.relevance.toFixed(2)})` });
      appendPhrases(mark, text, span);
      para.appendChild(mark);
      pos = span.end;
    }
    append(para, text.slice(pos));
    if (!text) para.appendChild(el("span", { class: "muted" }, "(no abstract text)"));
    const frag = document.createDocumentFragment();
    frag.appendChild(para);
    for (const e of unplaced) {
      frag.appendChild(el("p", { class: "muted" }, "Evidence not found in the stored abstract: ",
        el("mark", { class: "ev" }, e.span.text)));
    }
    return frag;
  }

  function appendPhrases(mark, text, span) {
    const phrases = span.phrases.slice().sort((a, b) => a.start - b.start);
    let pos = span.start;
    for (const p of phrases) {
      if (p.start < pos || p.end <= p.start) continue;
      append(mark, text.slice(pos, p.start), el("span", { class: "phrase" }, text.slice(p.start, p.end)));
      pos = p.end;
    }
    append(mark, text.slice(pos, span.end));
  }

  // --- conversation controls --------------------------------------------------------------------------

  function newConversation() {
    if (state.controller) state.controller.abort();
    state.threadId = newThreadId();
    state.turns = [];
    state.selected = null;
    for (const node of [...ui.conversation.children]) if (node !== ui.emptyState) node.remove();
    ui.emptyState.hidden = false;
    renderPanel();
    ui.question.value = "";
    ui.question.focus();
  }

  function submit() {
    const question = ui.question.value.trim();
    if (!question || state.controller) return;
    ui.question.value = "";
    ask(question);
  }

  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });
  ui.question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  });
  ui.stop.addEventListener("click", () => state.controller && state.controller.abort());
  ui.reset.addEventListener("click", newConversation);
  try {
    const saved = localStorage.getItem("biocite_mode");
    if (saved && [...ui.mode.options].some((o) => o.value === saved)) ui.mode.value = saved;
    ui.mode.addEventListener("change", () => localStorage.setItem("biocite_mode", ui.mode.value));
  } catch (_) {
    // storage disabled: the default mode stays
  }
  document.body.dataset.ready = "true";
})();
