/* epigraph interactive view: draws the JSON of epigraph/explore/payload.py with Cytoscape.js.
 *
 * One page for a notebook cell, a saved file and `epigraph serve` (there served.js, loaded after this,
 * adds search and ask and sets hooks.more: "expand" then also fetches). Every fact carries both time
 * axes; factState() is epigraph.graph.temporal.matches() written again, and nodeState() epigraph.graph.entity_time
 * (an entity, its aliases, summary and mentions as of then), so moving the slider re-draws the graph as it stood.
 * Entities are coloured by community when the data carries communities (a switch colours them by type).
 * window.epigraph exposes the Cytoscape instance and the model (the browser tests read them).
 */
(function () {
  "use strict";

  var STARTED = performance.now();
  var DATA = JSON.parse(document.getElementById("epigraph-data").textContent);
  var CONFIG = JSON.parse(document.getElementById("epigraph-config").textContent);
  var PALETTE = ["#4e79a7", "#59a14f", "#edc948", "#b07aa1", "#76b7b2", "#ff9da7", "#9c755f", "#e15759"];
  var NOW = Date.now();

  var hooks = { more: null, emptyHint: "Nothing to draw." };
  var model = { nodes: new Map(), edges: new Map(), episodes: {}, focus: [], shownNodes: new Set(),
    shownEdges: new Set(), cited: new Set(), communities: {}, title: DATA.title || "" };
  var state = { moment: null, systemTime: false, showRetired: DATA.show_retired !== false, selected: null,
    moments: [], byCommunity: Object.keys(DATA.communities || {}).length > 0 };

  // ---------------------------------------------------------------- small helpers
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") { node.textContent = attrs[k]; } else if (k === "cls") { node.className = attrs[k]; }
      else { node.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (c) { if (c) { node.appendChild(c); } });
    return node;
  }
  function ms(text) { return text == null ? null : Date.parse(text); }
  function pad(n) { return n < 10 ? "0" + n : "" + n; }
  function fmt(value) {
    if (value == null) { return ""; }
    var d = new Date(value);
    var day = d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate());
    var midnight = d.getUTCHours() === 0 && d.getUTCMinutes() === 0 && d.getUTCSeconds() === 0;
    return midnight ? day : day + " " + pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes());
  }
  // an unknown start (no valid_at) is "?", with when it was first stated (where time travel starts it)
  function windowText(e) {
    var start = e._valid != null ? fmt(e._valid) : "?" + (e._stated != null ? " (stated " + fmt(e._stated) + ")" : "");
    return "valid " + start + " → " + (e._invalid == null ? "now" : fmt(e._invalid));
  }

  // ---------------------------------------------------------------- the model and time
  function prepare(e) {
    e._valid = ms(e.valid_at); e._invalid = ms(e.invalid_at); e._stated = ms(e.stated_at);
    e._created = ms(e.created_at); e._expired = ms(e.expired_at);
    e._prev = e.invalidated_by ? ms(e.invalidated_by.previous_invalid_at) : null;
    return e;
  }

  function merge(data) {
    (data.nodes || []).forEach(function (n) {
      if (!model.nodes.has(n.id)) { model.nodes.set(n.id, n); }
      if (n.shown) { model.shownNodes.add(n.id); }
    });
    (data.edges || []).forEach(function (e) {
      if (!model.edges.has(e.id)) { model.edges.set(e.id, prepare(e)); }
      if (e.shown) { model.shownEdges.add(e.id); }
    });
    Object.keys(data.episodes || {}).forEach(function (k) { model.episodes[k] = data.episodes[k]; });
    Object.keys(data.communities || {}).forEach(function (k) { model.communities[k] = data.communities[k]; });
    (data.focus || []).forEach(function (f) { if (model.focus.indexOf(f) < 0) { model.focus.push(f); } });
  }

  function reset() {
    model.nodes.clear(); model.edges.clear(); model.episodes = {}; model.focus = []; model.communities = {};
    model.shownNodes.clear(); model.shownEdges.clear(); model.cited.clear();
  }

  function times() {
    var asOf = state.moment == null ? NOW : state.moment;
    return { asOf: asOf, knownAt: state.systemTime ? asOf : NOW };
  }

  // epigraph.graph.temporal.matches: "current" iff the fact passes a TimeFilter(as_of, known_at).
  function factState(e, asOf, knownAt) {
    if (e._created != null && e._created > knownAt) { return "unknown"; }
    var inv = e.invalidated_by;
    if (e._expired != null && !inv && e._expired <= knownAt) { return "withdrawn"; }
    var end = inv && e._expired != null && knownAt < e._expired ? e._prev : e._invalid;
    // graph.temporal.start_of: an unknown start is when it was first stated, unless it ended by then
    var start = e._valid != null ? e._valid : (e._stated != null && !(end != null && end <= e._stated) ? e._stated : null);
    if (start != null && asOf < start) { return "later"; }
    if (end != null && asOf >= end) { return "ended"; }
    return "current";
  }
  function isRetired(s) { return s === "ended" || s === "withdrawn"; }

  // epigraph.graph.entity_time: an entity at the slider's moment (none: as it is now). It exists once a
  // mention said (and, with system time, recorded) by then exists (no mention: once made); its aliases
  // are those said by then, its mentions those by then; a summary drawn from a later mention is withheld.
  function nodeState(n, t) {
    if (!n.said || state.moment == null) { return { exists: true, mentions: n.mentions, aliases: n.aliases || [], withheld: null }; }
    return entityState(n, t.asOf, state.systemTime ? t.knownAt : null);
  }
  // entity_time.entity_as_of under TimeFilter(as_of=asOf, known_at=knownAt) (knownAt null: no bound)
  function entityState(n, asOf, knownAt) {
    var aliases = n.aliases || [], created = ms(n.created_at);
    if (knownAt != null && created != null && created > knownAt) { return { exists: false }; }
    if (!n.said.length) {
      return { exists: created == null || created <= asOf, mentions: 0, aliases: aliases, withheld: null };
    }
    var passing = n.said.map(function (m) { return ms(m[0]) <= asOf && (knownAt == null || ms(m[1]) <= knownAt); });
    if (passing.indexOf(true) < 0) { return { exists: false }; }
    var late = n.said.filter(function (m, i) { return !passing[i]; })
      .map(function (m) { return ms(m[0]) > asOf ? ms(m[0]) : ms(m[1]); });
    return {
      exists: true,
      mentions: passing.filter(Boolean).length,
      aliases: aliases.filter(function (a) { return (n.alias_said[a] || []).some(function (i) { return passing[i]; }); }),
      withheld: n.summary && late.length ? Math.max.apply(null, late) : null
    };
  }
  function summaryText(n, ns) {
    if (ns.withheld != null) { return "(summary written from what was said " + fmt(ns.withheld) + ", after this moment; not shown)"; }
    return n.summary || "(no summary)";
  }
  function mentionText(count) { return count + " mention" + (count === 1 ? "" : "s"); }

  function computeMoments() {
    var seen = {};
    model.edges.forEach(function (e) {
      var points = [e._valid == null ? e._stated : e._valid, e._invalid, e._prev];
      if (state.systemTime) { points.push(e._created, e._expired); }
      points.forEach(function (p) { if (p != null && p < NOW) { seen[p] = true; } });
    });
    state.moments = Object.keys(seen).map(Number).sort(function (a, b) { return a - b; });
  }

  // ---------------------------------------------------------------- the page around the canvas
  var ui = {};
  function buildPage() {
    var app = document.getElementById("ep-app");
    ui.slider = el("input", { type: "range", min: "0", max: "0", value: "0", step: "1", id: "ep-time",
      title: "event time (as_of): the graph as it stood then" });
    ui.when = el("span", { cls: "ep-when", id: "ep-when", text: "now" });
    ui.system = el("input", { type: "checkbox", id: "ep-system" });
    ui.retired = el("input", { type: "checkbox", id: "ep-retired" });
    ui.retired.checked = state.showRetired;
    ui.communities = el("input", { type: "checkbox", id: "ep-communities" });
    ui.communities.checked = state.byCommunity;
    ui.fit = el("button", { type: "button", id: "ep-fit", text: "fit" });
    ui.title = el("span", { cls: "ep-title", id: "ep-title", text: model.title });
    var bar = el("div", { cls: "ep-bar" }, [ui.title,
      el("label", { title: "move through event time" }, [document.createTextNode("time"), ui.slider, ui.when]),
      el("label", { title: "also as the graph knew it then (system time, known_at)" },
        [ui.system, document.createTextNode("as known then")]),
      el("label", {}, [ui.retired, document.createTextNode("retired facts")]),
      el("label", { title: "colour entities by community (else by type)" },
        [ui.communities, document.createTextNode("communities")]), ui.fit]);
    ui.cy = el("div", { id: "ep-cy" });
    ui.tip = el("div", { id: "ep-tip" });
    ui.empty = el("div", { cls: "ep-empty", id: "ep-empty" });
    ui.legend = el("div", { cls: "ep-legend", id: "ep-legend" });
    ui.panel = el("div", { cls: "ep-panel", id: "ep-panel" });
    var canvas = el("div", { cls: "ep-canvas" }, [ui.cy, ui.empty, ui.legend, ui.tip]);
    app.appendChild(bar);
    app.appendChild(el("div", { cls: "ep-main" }, [canvas, ui.panel]));
    ui.slider.addEventListener("input", function () { setMomentIndex(Number(ui.slider.value)); });
    ui.system.addEventListener("change", function () { state.systemTime = ui.system.checked; refreshSlider(); apply(); });
    ui.retired.addEventListener("change", function () { state.showRetired = ui.retired.checked; apply(); });
    ui.communities.addEventListener("change", function () { state.byCommunity = ui.communities.checked; apply(); });
    ui.fit.addEventListener("click", function () { cy.fit(shown(cy.elements()), 30); });
  }

  function refreshSlider() {
    computeMoments();
    var n = state.moments.length;
    ui.slider.max = String(n);
    var index = state.moment == null ? n : state.moments.indexOf(state.moment);
    if (index < 0) { index = state.moments.filter(function (m) { return m <= state.moment; }).length - 1; }
    if (index < 0) { index = 0; }
    ui.slider.value = String(index);
    state.moment = index >= n ? null : state.moments[index];
    ui.when.textContent = state.moment == null ? "now" : fmt(state.moment);
  }

  function setMomentIndex(index) {
    state.moment = index >= state.moments.length ? null : state.moments[index];
    ui.when.textContent = state.moment == null ? "now" : fmt(state.moment);
    apply();
  }

  function setTime(when, systemTime) {
    if (systemTime !== undefined) { state.systemTime = !!systemTime; ui.system.checked = state.systemTime; }
    state.moment = when == null ? null : (typeof when === "number" ? when : Date.parse(when));
    refreshSlider();
    if (when != null && state.moment !== (typeof when === "number" ? when : Date.parse(when))) {
      state.moment = typeof when === "number" ? when : Date.parse(when);  // between two stops: exactly then
      ui.when.textContent = fmt(state.moment);
    }
    apply();
  }

  // ---------------------------------------------------------------- drawing
  var cy = null;
  var colours = {};

  function colourOf(type) {
    if (!(type in colours)) { colours[type] = PALETTE[Object.keys(colours).length % PALETTE.length]; }
    return colours[type];
  }
  function nodeSize(n) { return Math.min(80, 22 + 9 * Math.sqrt(n.mentions || 0)); }

  // Communities get colours of their own, the largest first (the same community, the same colour).
  var NO_COMMUNITY = "#cccccc";
  function communityColours() {
    var ids = Object.keys(model.communities).sort(function (a, b) {
      var x = model.communities[a], y = model.communities[b];
      return (y.size - x.size) || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0) || (a < b ? -1 : 1);
    });
    var out = {};
    ids.forEach(function (id, i) { out[id] = PALETTE[i % PALETTE.length]; });
    return out;
  }
  function communityOf(n) { return n.community && model.communities[n.community] ? n.community : null; }
  function fill(n, byCommunity) {
    if (!state.byCommunity) { return colourOf(n.type || ""); }
    var c = communityOf(n);
    return c ? byCommunity[c] : NO_COMMUNITY;
  }

  function style() {
    return [
      // Drawn in z-index order, each label with its element: edges (and the relation on each) above the
      // nodes, so that a relation drawn where a node is stays readable on its white background.
      { selector: "node", style: { "background-color": "data(colour)", label: "data(name)", width: "data(size)",
        height: "data(size)", "font-size": 11, "text-valign": "bottom", "text-margin-y": 3,
        "text-outline-color": "#fff", "text-outline-width": 2, "border-width": 1, "border-color": "#fff",
        "z-index-compare": "manual", "z-index": 1 } },
      { selector: "node.focus", style: { "border-width": 3, "border-color": "#333", "font-weight": "bold" } },
      { selector: "node.selected", style: { "border-width": 4, "border-color": "#e15759" } },
      { selector: "node.cited", style: { "border-width": 4, "border-color": "#f28e2b" } },
      { selector: "edge", style: { "curve-style": "bezier", "control-point-step-size": 46, width: 1.6,
        "line-color": "#777", "target-arrow-color": "#777", "target-arrow-shape": "triangle",
        label: "data(relation)", "font-size": 9, "text-rotation": "autorotate", color: "#333",
        "text-background-color": "#fff", "text-background-opacity": 0.9, "text-background-padding": 2,
        "text-background-shape": "roundrectangle", "loop-direction": "-45deg", "loop-sweep": "-60deg",
        "z-index-compare": "manual", "z-index": 2 } },
      { selector: "edge.retired", style: { "line-style": "dashed", "line-color": "#bbb",
        "target-arrow-color": "#bbb", color: "#999" } },
      { selector: "edge.cited", style: { "line-color": "#f28e2b", "target-arrow-color": "#f28e2b", width: 4,
        color: "#8a4b00", "z-index": 3 } },
      { selector: "edge.hover", style: { width: 3.2, "z-index": 3 } },
      { selector: ".hidden", style: { display: "none" } }
    ];
  }

  function elementsToAdd() {
    var out = [];
    model.shownNodes.forEach(function (id) {
      if (cy.getElementById(id).length) { return; }
      var n = model.nodes.get(id);
      if (!n) { return; }
      out.push({ group: "nodes", data: { id: id, name: n.name, colour: colourOf(n.type || ""), size: nodeSize(n) } });
    });
    model.shownEdges.forEach(function (id) {
      var e = model.edges.get(id);
      if (!e || cy.getElementById(id).length) { return; }
      if (!model.shownNodes.has(e.source) || !model.shownNodes.has(e.target)) { return; }
      out.push({ group: "edges", data: { id: id, source: e.source, target: e.target, relation: e.relation } });
    });
    return out;
  }

  function layout(around) {
    var added = cy.add(elementsToAdd());
    if (!added.length) { return; }  // nothing new: positions stay, time and classes do the rest
    if (around) {
      var p = around.position();
      added.nodes().forEach(function (n, i) {
        var a = (2 * Math.PI * i) / Math.max(1, added.nodes().length);
        n.position({ x: p.x + 120 * Math.cos(a), y: p.y + 120 * Math.sin(a) });
      });
    } else {
      cy.layout({ name: "concentric", animate: false, minNodeSpacing: 40,
        concentric: function (n) { return model.focus.indexOf(n.id()) >= 0 ? 10 : n.degree(); },
        levelWidth: function () { return 1; } }).run();
    }
    cy.layout({ name: "cose", animate: false, randomize: false, nodeRepulsion: function () { return 9000; },
      idealEdgeLength: function () { return 110; }, edgeElasticity: function () { return 80; },
      numIter: Math.max(200, Math.min(1500, Math.round(60000 / Math.max(1, cy.nodes().length)))),
      fit: false }).run();  // fewer rounds for big graphs (bench/performance/view.py)
    makeRoomForLabels();
    cy.fit(cy.elements(), 30);
  }

  // Cose pulls the ends of an edge together whatever its length (its spring force is squared, so it has
  // no sign): an edge can end up shorter than the relation written on it, which then lies over a node.
  // A few rounds push the two ends of each such edge apart, and nodes (with their names) off each other.
  function makeRoomForLabels() {
    var nodes = cy.nodes(), edges = cy.edges().filter(function (e) { return !e.isLoop(); });
    var pos = {};
    nodes.forEach(function (n) { pos[n.id()] = { x: n.position("x"), y: n.position("y"), r: n.width() / 2 }; });
    function push(a, b, need) {
      var dx = b.x - a.x, dy = b.y - a.y, d = Math.sqrt(dx * dx + dy * dy) || 1;
      var gap = d - a.r - b.r;
      if (gap >= need) { return false; }
      var k = (need - gap) / (2 * d);
      a.x -= dx * k; a.y -= dy * k; b.x += dx * k; b.y += dy * k;
      return true;
    }
    var ids = Object.keys(pos), rounds = ids.length > 400 ? 0 : ids.length > 150 ? 10 : 40;  // pairs: n²
    for (var round = 0; round < rounds; round++) {
      var moved = false;
      edges.forEach(function (e) {
        var need = 6 * String(e.data("relation") || "").length + 20;
        moved = push(pos[e.source().id()], pos[e.target().id()], need) || moved;
      });
      for (var i = 0; i < ids.length; i++) {
        for (var j = i + 1; j < ids.length; j++) { moved = push(pos[ids[i]], pos[ids[j]], 40) || moved; }
      }
      if (!moved) { break; }
    }
    nodes.positions(function (n) { return { x: pos[n.id()].x, y: pos[n.id()].y }; });
  }

  // What apply() left shown: read from the page's own "hidden" class, never with Cytoscape's ':visible'.
  // ':visible' is cached per element and refreshed only when the next frame re-applies the style, so read
  // right after apply() it answers for the picture before (the empty message and the legend lagged one
  // change behind: tests/explore/test_browser.py).
  function shown(eles) { return eles.not(".hidden"); }

  function apply() {
    var t = times();
    var visibleEdges = {}, exists = {};
    var byCommunity = communityColours();
    model.nodes.forEach(function (n) { exists[n.id] = nodeState(n, t).exists; });
    cy.batch(function () {
      cy.edges().forEach(function (ce) {
        var e = model.edges.get(ce.id());
        var s = factState(e, t.asOf, t.knownAt);
        var show = (s === "current" || (isRetired(s) && state.showRetired)) && exists[e.source] !== false &&
          exists[e.target] !== false;
        ce.data("state", s);
        ce.toggleClass("retired", isRetired(s));
        ce.toggleClass("cited", model.cited.has(e.id));
        ce.toggleClass("hidden", !show);
        if (show) { visibleEdges[e.source] = true; visibleEdges[e.target] = true; }
      });
      cy.nodes().forEach(function (cn) {
        var n = model.nodes.get(cn.id());
        var focus = model.focus.indexOf(n.id) >= 0;
        var known = !state.systemTime || n.created_at == null || ms(n.created_at) <= t.knownAt;
        cn.data("colour", fill(n, byCommunity));
        cn.data("community", communityOf(n) || "");
        cn.toggleClass("focus", focus);
        cn.toggleClass("selected", state.selected === n.id);
        cn.toggleClass("cited", cn.connectedEdges(".cited").length > 0);
        cn.toggleClass("hidden", !exists[n.id] || !(visibleEdges[n.id] || (focus && known)));
      });
    });
    ui.empty.textContent = shown(cy.elements()).length ? "" : emptyText();
    legend(byCommunity);
    if (state.selected) { showPanel(state.selected); }
  }

  function emptyText() {
    if (!model.nodes.size) { return hooks.emptyHint; }
    return "Nothing held at this moment (" + (state.moment == null ? "now" : fmt(state.moment)) + ").";
  }

  function legendItem(colour, text) {
    var dot = el("span", { cls: "dot" });
    dot.style.background = colour;
    ui.legend.appendChild(dot);
    ui.legend.appendChild(el("span", { cls: "ep-legend-item", text: text }));
  }

  function legend(byCommunity) {
    ui.legend.textContent = "";
    var seen = {}, loose = false;
    shown(cy.nodes()).forEach(function (cn) {
      var n = model.nodes.get(cn.id());
      if (!state.byCommunity) { seen[n.type || "entity"] = true; return; }
      var c = communityOf(n);
      if (c) { seen[c] = true; } else { loose = true; }
    });
    if (state.byCommunity) {
      Object.keys(byCommunity).filter(function (c) { return seen[c]; }).forEach(function (c) {
        legendItem(byCommunity[c], model.communities[c].name);
      });
      if (loose) { legendItem(NO_COMMUNITY, "no community"); }
    } else {
      Object.keys(seen).sort().forEach(function (type) { legendItem(colourOf(type === "entity" ? "" : type), type); });
    }
    if (shown(cy.edges(".retired")).length) {
      ui.legend.appendChild(el("span", { cls: "dash" }));
      ui.legend.appendChild(document.createTextNode("retired"));
    }
  }

  // ---------------------------------------------------------------- hover
  function showTip(html, pos) {
    ui.tip.textContent = "";
    html.forEach(function (part) { ui.tip.appendChild(part); });
    ui.tip.style.display = "block";
    var w = ui.cy.clientWidth;
    ui.tip.style.left = Math.min(pos.x + 14, Math.max(0, w - 350)) + "px";
    ui.tip.style.top = pos.y + 14 + "px";
  }
  function nodeTip(n) {
    var c = communityOf(n), ns = nodeState(n, times());
    var meta = [n.type, ns.mentions ? mentionText(ns.mentions) : "",
      c ? "community: " + model.communities[c].name : ""].filter(Boolean).join(" · ");
    return [el("div", { cls: "ep-tip-head", text: n.name }), meta ? el("div", { cls: "ep-tip-when", text: meta }) : null,
      el("div", { text: summaryText(n, ns) })].filter(Boolean);
  }
  function edgeTip(e, s) {
    var sys = "recorded " + fmt(e._created) + (e._expired != null ? " · retired " + fmt(e._expired) : "");
    var label = { current: "holds then", ended: "ended by then", withdrawn: "withdrawn" }[s] || s;
    return [el("div", { cls: "ep-tip-head", text: e.text }),
      el("div", { cls: "ep-tip-when", text: windowText(e) + " (" + label + ")" }),
      el("div", { cls: "ep-tip-when", text: sys })];
  }

  // ---------------------------------------------------------------- the entity panel
  function factsOf(id) {
    var t = times(), current = [], ended = [];
    model.edges.forEach(function (e) {
      if (e.source !== id && e.target !== id) { return; }
      var s = factState(e, t.asOf, t.knownAt);
      if (s === "current") { current.push(e); } else if (isRetired(s)) { ended.push(e); }
    });
    return { current: current, ended: ended };
  }

  function factItem(e, cls) {
    var li = el("li", { cls: cls }, [document.createTextNode(e.text + " "),
      el("span", { cls: "ep-window", text: "(" + windowText(e).replace("valid ", "") + ")" })]);
    var by = e.invalidated_by && model.edges.get(e.invalidated_by.fact);
    if (cls === "ended" && by) { li.appendChild(el("div", { cls: "ep-window", text: "retired by: " + by.text })); }
    return li;
  }

  function showPanel(id) {
    var n = model.nodes.get(id);
    if (!n) { return; }
    var facts = factsOf(id), ns = nodeState(n, times());
    if (!ns.exists) { ns = { mentions: 0, aliases: [], withheld: n.summary ? ms(n.created_at) : null }; }
    var meta = [n.type, ns.aliases.length ? "aka " + ns.aliases.join(", ") : "",
      mentionText(ns.mentions)].filter(Boolean).join(" · ");
    var close = el("button", { cls: "ep-close", title: "close", text: "×" });
    close.addEventListener("click", function () {
      state.selected = null; ui.panel.classList.remove("open"); cy.resize(); apply();
    });
    var expand = el("button", { type: "button", id: "ep-expand", text: "expand neighbours" });
    expand.addEventListener("click", function () { expandNode(id); });
    var when = state.moment == null ? "now" : "as of " + fmt(state.moment);
    var episodes = episodesOf(facts.current.concat(facts.ended));
    var c = communityOf(n) ? model.communities[n.community] : null;
    var community = c ? el("div", { cls: "ep-community", id: "ep-community" },
      [el("b", { text: "Community: " + c.name }), document.createTextNode(" (" + c.size + " members) "),
        el("span", { text: c.summary })]) : null;
    ui.panel.textContent = "";
    [close, el("h2", { cls: "ep-name", text: n.name }), el("div", { cls: "ep-meta", text: meta }),
      el("p", { cls: "ep-summary", text: summaryText(n, ns) }), community, expand,
      el("h3", { text: "Facts (" + when + ")" }),
      el("ul", {}, facts.current.length ? facts.current.map(function (e) { return factItem(e, "current"); })
        : [el("li", { text: "(none)" })]),
      el("h3", { text: "History (retired by then)" }),
      el("ul", {}, facts.ended.length ? facts.ended.map(function (e) { return factItem(e, "ended"); })
        : [el("li", { text: "(none)" })]),
      el("h3", { text: "Episodes" })].concat(episodes).forEach(function (part) {
      if (part) { ui.panel.appendChild(part); }
    });
    if (!ui.panel.classList.contains("open")) {
      ui.panel.classList.add("open");
      cy.resize();  // the canvas is narrower now: keep the picture inside it
      cy.fit(shown(cy.elements()), 30);
    }
  }

  function episodesOf(facts) {
    var ids = {};
    facts.forEach(function (e) { (e.episodes || []).forEach(function (u) { ids[u] = true; }); });
    var asOf = times().asOf;  // the episodes said by the slider's moment
    var found = Object.keys(ids).map(function (u) { return model.episodes[u]; })
      .filter(function (ep) { return ep && (state.moment == null || ms(ep.when) <= asOf); });
    found.sort(function (a, b) { return ms(a.when) - ms(b.when); });
    if (!found.length) { return [el("div", { cls: "ep-window", text: "(none embedded)" })]; }
    return found.map(function (ep) {
      return el("div", { cls: "ep-episode" }, [el("div", { cls: "ep-window", text: fmt(ms(ep.when)) + " " + (ep.source || "") }),
        document.createTextNode(ep.content)]);
    });
  }

  // ---------------------------------------------------------------- expanding
  function revealAround(id) {
    model.edges.forEach(function (e) {
      if (e.source === id || e.target === id) {
        model.shownEdges.add(e.id); model.shownNodes.add(e.source); model.shownNodes.add(e.target);
      }
    });
  }

  function expandNode(id) {
    var more = hooks.more ? hooks.more(id) : null;  // the served page fetches the neighbourhood too
    return Promise.resolve(more).then(function () {
      revealAround(id);
      layout(cy.getElementById(id));
      refreshSlider();
      apply();
    });
  }

  function load(data, title) {
    reset(); merge(data); model.title = title || data.title || "";
    ui.title.textContent = model.title;
    state.byCommunity = Object.keys(model.communities).length > 0;  // a new picture: its own default
    ui.communities.checked = state.byCommunity;
    state.selected = null; ui.panel.classList.remove("open");
    cy.elements().remove(); layout(null); refreshSlider(); apply();
  }

  // ---------------------------------------------------------------- start
  merge(DATA);
  buildPage();
  cy = cytoscape({ container: ui.cy, style: style(), elements: [], minZoom: 0.2, maxZoom: 4 });
  cy.on("mouseover", "node", function (ev) { showTip(nodeTip(model.nodes.get(ev.target.id())), ev.renderedPosition); });
  cy.on("mouseover", "edge", function (ev) {
    ev.target.addClass("hover");
    showTip(edgeTip(model.edges.get(ev.target.id()), ev.target.data("state")), ev.renderedPosition);
  });
  cy.on("mouseout", "node, edge", function (ev) { ev.target.removeClass("hover"); ui.tip.style.display = "none"; });
  cy.on("tap", "node", function (ev) { state.selected = ev.target.id(); apply(); });
  if (window.ResizeObserver) {  // the panel or the answer changed the canvas's size
    new ResizeObserver(function () { cy.resize(); }).observe(ui.cy);
  }
  layout(null);
  refreshSlider();
  apply();
  if (DATA.as_of) { setTime(DATA.as_of); }  // a view asked for as it stood then (`entity --as-of --html`)
  window.epigraph = { cy: cy, model: model, state: state, setTime: setTime,
    factState: function (e, asOf, knownAt) { return factState(prepare(Object.assign({}, e)), asOf, knownAt); },
    nodeState: function (id) { return nodeState(model.nodes.get(id), times()); }, entityState: entityState,
    expand: expandNode, select: function (id) { state.selected = id; apply(); },
    // for served.js
    ui: ui, hooks: hooks, el: el, merge: merge, load: load, layout: layout, refreshSlider: refreshSlider,
    apply: apply, shown: shown };
  window.epigraph.readyMs = performance.now();  // bench/performance/view.py reads them
  window.epigraph.scriptMs = window.epigraph.readyMs - STARTED;
  window.epigraph.ready = !CONFIG.api;  // served.js says when the served page is ready
}());
