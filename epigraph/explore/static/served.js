/* epigraph served page: search, ask and "expand" through `epigraph serve` (CONFIG.api: base URL, default
 * group, whether keys are on). Loaded after view.js, only on the served page; it adds a search form to the
 * bar and an ask box under the picture, and reads the ask route's server-sent events with fetch (an
 * EventSource cannot POST): the answer streams in, the facts its last chunk cites are drawn orange.
 */
(function () {
  "use strict";

  var API = JSON.parse(document.getElementById("epigraph-config").textContent).api;
  var ep = window.epigraph;
  var cy = ep.cy, model = ep.model, ui = ep.ui, el = ep.el;
  var merge = ep.merge, layout = ep.layout, refreshSlider = ep.refreshSlider, apply = ep.apply, shown = ep.shown;

  function groupName() { return (ui.group && ui.group.value.trim()) || API.group; }
  function groupUrl(path) { return API.base + "/groups/" + encodeURIComponent(groupName()) + path; }
  function headers(extra) {
    var h = Object.assign({}, extra || {});
    var key = ui.key && ui.key.value.trim();
    if (key) { h.Authorization = "Bearer " + key; }
    return h;
  }
  function fetchJSON(url, init) {
    return fetch(url, Object.assign({ headers: headers() }, init || {})).then(function (r) {
      if (!r.ok) { return r.json().catch(function () { return {}; }).then(function (b) {
        throw new Error(r.status + ": " + (b.detail || r.statusText)); }); }
      return r.json();
    });
  }
  function status(text) { if (ui.status) { ui.status.textContent = text; } }
  // Keys on and none entered: say so and wait for it, rather than send a request bound to answer 401.
  function keyMissing() {
    if (!API.keys || ui.key.value.trim()) { return false; }
    status("enter the API key, then press Enter");
    ui.key.focus();
    return true;
  }

  function searchForm() {
    ui.group = el("input", { type: "text", id: "ep-group", size: "10", value: API.group, title: "group" });
    ui.query = el("input", { type: "text", id: "ep-query", size: "28", placeholder: "search the graph" });
    ui.status = el("span", { cls: "ep-status", id: "ep-status" });
    var parts = [ui.group, ui.query, el("button", { type: "submit", text: "search" }), ui.status];
    if (API.keys) {
      ui.key = el("input", { type: "password", id: "ep-key", size: "10", placeholder: "API key" });
      parts.unshift(ui.key);
    }
    var form = el("form", { id: "ep-search" }, parts);
    form.addEventListener("submit", function (ev) { ev.preventDefault(); search(ui.query.value); });
    return form;
  }

  function search(query) {
    var q = (query || "").trim();
    if (!q || keyMissing()) { return Promise.resolve(); }
    status("searching…");
    ep.loading = fetchJSON(groupUrl("/explore/search") + "?q=" + encodeURIComponent(q))
      .then(function (data) { ep.load(data); status(model.edges.size + " facts"); })
      .catch(function (err) { status(String(err.message || err)); });
    return ep.loading;
  }

  function askBox() {
    ui.question = el("input", { type: "text", id: "ep-question", placeholder: "ask a question about the graph" });
    ui.answer = el("div", { id: "ep-answer" });
    ui.cites = el("div", { cls: "ep-cites", id: "ep-cites" });
    var form = el("form", { id: "ep-ask" }, [ui.question, el("button", { type: "submit", text: "ask" })]);
    form.addEventListener("submit", function (ev) { ev.preventDefault(); ask(ui.question.value); });
    return el("div", { cls: "ep-ask" }, [form, ui.answer, ui.cites]);
  }

  function onChunk(chunk) {
    if (chunk.chunk_type === "answer") { ui.answer.appendChild(document.createTextNode(chunk.content)); }
    else if (chunk.chunk_type === "action" && chunk.content) {  // the retrieval steps of either path
      ui.answer.appendChild(el("div", { cls: "ep-lookup", text: "looking up: " + chunk.content }));
    } else if (chunk.chunk_type === "thought" && chunk.content && chunk.end_of_message) {
      ui.answer.appendChild(el("div", { cls: "ep-lookup", text: chunk.content }));
    } else if (chunk.chunk_type === "error") { ui.answer.appendChild(el("div", { text: chunk.content })); }
    if (chunk.end_of_dialog) { return cite(chunk.citations || []); }
    return null;
  }

  function cite(citations) {
    var facts = citations.filter(function (c) { return c.kind === "fact"; }).map(function (c) { return c.uuid; });
    model.cited = new Set(facts);
    ui.cites.textContent = facts.length ? "cited: " + citations.filter(function (c) { return c.kind === "fact"; })
      .map(function (c) { return "[" + c.id + "] " + c.text; }).join("  ") : "";
    var missing = facts.filter(function (u) { return !model.edges.has(u); });
    var fetched = missing.length ? fetchJSON(groupUrl("/explore/facts") + "?ids=" + missing.map(encodeURIComponent).join(","))
      .then(merge) : Promise.resolve();
    return fetched.then(function () {
      facts.forEach(function (u) { var e = model.edges.get(u); if (e) { model.shownEdges.add(u);
        model.shownNodes.add(e.source); model.shownNodes.add(e.target); } });
      if (cy.nodes().length === 0) { layout(null); } else { layout(cy.nodes().first()); }
      refreshSlider(); apply();
      cy.resize(); cy.fit(shown(cy.elements()), 30);  // the answer took room: show the cited facts
    });
  }

  function ask(question) {
    var q = (question || "").trim();
    if (!q || keyMissing()) { return Promise.resolve(); }
    ui.answer.textContent = ""; ui.cites.textContent = ""; model.cited = new Set(); apply();
    var asked = { question: q, streaming: true }, moment = ep.state.moment;
    if (moment != null) {  // asked about the moment the picture shows
      asked.as_of = new Date(moment).toISOString();
      if (ep.state.systemTime) { asked.known_at = asked.as_of; }
    }
    var body = JSON.stringify(asked);
    ep.asking = fetch(groupUrl("/ask"), { method: "POST", body: body,
      headers: headers({ "Content-Type": "application/json" }) }).then(function (r) {
      if (!r.ok || !r.body) { throw new Error("ask failed: " + r.status); }
      return readEvents(r.body.getReader(), onChunk);
    }).catch(function (err) { ui.answer.appendChild(el("div", { text: String(err.message || err) })); });
    return ep.asking;
  }

  function readEvents(reader, handle) {
    var decoder = new TextDecoder(), buffer = "", pending = [];
    function pump() {
      return reader.read().then(function (step) {
        buffer += decoder.decode(step.value || new Uint8Array(), { stream: !step.done });
        var events = buffer.split("\n\n");
        buffer = events.pop();
        events.forEach(function (block) {
          block.split("\n").forEach(function (line) {
            if (line.indexOf("data: ") === 0) { pending.push(handle(JSON.parse(line.slice(6)))); }
          });
        });
        return step.done ? Promise.all(pending) : pump();
      });
    }
    return pump();
  }

  ep.hooks.more = function (id) {
    return fetchJSON(groupUrl("/explore/entity/" + encodeURIComponent(id)) + "?around=0").then(merge);
  };
  ep.hooks.emptyHint = "Search for something, or ask a question.";
  ep.search = search;
  ep.ask = ask;
  var bar = document.querySelector(".ep-bar");
  bar.insertBefore(searchForm(), bar.firstChild);
  document.getElementById("ep-app").appendChild(askBox());
  apply();
  var params = new URLSearchParams(window.location.search);
  if (params.get("q")) { ui.query.value = params.get("q"); search(params.get("q")); }  // or asks for the key
  ep.ready = true;
}());
