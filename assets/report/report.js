"use strict";
// The report page: reads the report's JSON, draws the folded graphs (one layout per folding, laid
// out here so the file carries data, not a drawing of every node) and the tables. Every string from
// the report is set as text or escaped: node names come from files someone else may have written.
(function () {
  const R = JSON.parse(document.getElementById("report-data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const W = 210, H = 40, GX = 18, GY = 34;
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    for (const c of kids) if (c != null) e.append(c instanceof Node ? c : String(c));
    return e;
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }
  function cut(s, n) { s = String(s); return s.length > n ? s.slice(0, n - 1) + "…" : s; }
  function num(x, d) { return x == null ? "" : Number(x).toFixed(d == null ? 1 : d); }
  function table(headers, rows, bad) {
    const t = el("table", {}, el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", {}, h)))));
    const body = el("tbody");
    rows.forEach((r, i) => body.append(el("tr", bad && bad(i) ? { class: "bad" } : {}, ...r.map((c) => el("td", {}, c)))));
    t.append(body);
    return t;
  }
  function none(section, why) { $(section).append(el("p", { class: "muted" }, why)); }
  function jsonTree(v) {
    if (v === null || typeof v !== "object") return el("code", {}, JSON.stringify(v));
    const d = el("details", {}, el("summary", {}, Array.isArray(v) ? "[" + v.length + "]" : "{" + Object.keys(v).length + "}"));
    const ul = el("ul");
    for (const k of Object.keys(v)) ul.append(el("li", {}, Array.isArray(v) ? "" : k + ": ", jsonTree(v[k])));
    d.append(ul);
    return d;
  }

  // ---- header
  $("title").textContent = R.title;
  const torch = (R.versions.find((v) => v.name === "pytorch_version") || {}).value;
  $("meta").textContent = R.generated_by + " · " + R.format + (torch ? " · torch " + torch : "");
  for (const s of document.querySelectorAll("main > section")) {
    $("nav").append(el("a", { href: "#" + s.id }, s.querySelector("h2").textContent));
  }

  // ---- graph panes
  const children = R.graphs.map((g) => {
    const c = g.groups.map(() => []);
    g.groups.forEach((gr, i) => { if (gr.up != null) c[gr.up].push(i); });
    return c;
  });

  function layout(g, folded) {
    const n = g.nodes.length, top = new Array(g.groups.length);
    g.groups.forEach((gr, j) => {
      const t = gr.up == null ? null : top[gr.up];
      top[j] = t != null ? t : folded.has(j) ? j : null;
    });
    const items = [], itemOf = new Int32Array(n), byGroup = new Map();
    for (let j = 0; j < n; j++) {
      const gr = g.nodes[j].g, t = gr == null ? null : top[gr];
      if (t != null) {
        let it = byGroup.get(t);
        if (it == null) { it = items.length; items.push({ group: t, first: j, count: 0, preds: [] }); byGroup.set(t, it); }
        items[it].count++;
        itemOf[j] = it;
      } else {
        itemOf[j] = items.length;
        items.push({ node: j, first: j, preds: [] });
      }
    }
    const seen = new Set(), edges = [];
    for (let j = 0; j < n; j++) {
      for (const p of g.nodes[j].i) {
        const a = itemOf[p], b = itemOf[j];
        if (a === b || seen.has(a * items.length + b)) continue;
        seen.add(a * items.length + b);
        edges.push([a, b]);
        if (a < b) items[b].preds.push(a);
      }
    }
    // Longest-path layers over edges that go forward in graph order (a folded module can make a
    // cycle; its back edges are drawn, not layered), then one barycentric sweep down.
    const layers = [];
    items.forEach((it, b) => {
      it.layer = it.preds.reduce((m, a) => Math.max(m, items[a].layer + 1), 0);
      (layers[it.layer] = layers[it.layer] || []).push(b);
    });
    layers.forEach((row, l) => {
      if (l > 0) {
        const bary = (b) => { const p = items[b].preds; return p.length ? p.reduce((s, a) => s + items[a].x, 0) / p.length : items[b].first; };
        row.sort((a, b) => bary(a) - bary(b) || items[a].first - items[b].first);
      }
      row.forEach((b, k) => { items[b].x = (k - (row.length - 1) / 2) * (W + GX); items[b].y = l * (H + GY); });
    });
    return { items, itemOf, edges };
  }

  function label(g, it) {
    if (it.group != null) {
      const gr = g.groups[it.group];
      return [cut(gr.p, 32), cut(gr.c + " · " + it.count + " nodes", 34), "group"];
    }
    const nd = g.nodes[it.node];
    const op = nd.op.replace(/^aten\./, "").replace(/\.default$/, "");
    const extra = nd.t != null ? " · " + num(nd.t) + " µs" : nd.s ? " · " + nd.s : "";
    const v = nd.v ? " v-" + nd.v.replace(/[^a-z_]/g, "") : "";
    return [cut(nd.n, 32), cut(op + extra, 34), "node" + v];
  }

  function makePane(i) {
    const root = $("pane-" + i);
    const select = el("select", { "aria-label": "graph of pane " + (i + 1) });
    select.append(el("option", { value: "-1" }, "(no graph)"));
    R.graphs.forEach((g, k) => select.append(el("option", { value: String(k) }, g.label + " — " + g.nodes.length + " nodes")));
    const fit = el("button", { type: "button" }, "fit");
    const reset = el("button", { type: "button" }, "fold as first shown");
    const info = el("span", { class: "muted" });
    const crumbs = el("div", { class: "crumbs" });
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("role", "img");
    root.append(el("div", { class: "bar" }, select, fit, reset, info), crumbs, svg);
    const p = { i, root, svg, select, info, crumbs, gi: -1, folded: new Set(), lay: null, tx: 0, ty: 0, k: 1, found: null };
    select.addEventListener("change", () => setGraph(p, Number(select.value)));
    fit.addEventListener("click", () => fitView(p));
    reset.addEventListener("click", () => setGraph(p, p.gi));
    let drag = null;
    svg.addEventListener("mousedown", (e) => { drag = { x: e.clientX, y: e.clientY, tx: p.tx, ty: p.ty, moved: false }; });
    window.addEventListener("mousemove", (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      p.tx = drag.tx + dx; p.ty = drag.ty + dy; apply(p);
    });
    window.addEventListener("mouseup", (e) => {
      const d = drag; drag = null;
      if (d && !d.moved) click(p, e.target);
    });
    svg.addEventListener("wheel", (e) => {
      e.preventDefault();
      const r = svg.getBoundingClientRect(), mx = e.clientX - r.left, my = e.clientY - r.top;
      const f = Math.exp(-e.deltaY * 0.0015), k = Math.min(4, Math.max(0.01, p.k * f));
      p.tx = mx - ((mx - p.tx) * k) / p.k; p.ty = my - ((my - p.ty) * k) / p.k; p.k = k; apply(p);
    }, { passive: false });
    return p;
  }

  function setGraph(p, gi) {
    p.gi = gi; p.found = null; p.select.value = String(gi);
    p.folded = new Set(gi >= 0 ? R.graphs[gi].folded : []);
    render(p); fitView(p);
  }

  function render(p) {
    p.root.removeAttribute("data-found");
    if (p.gi < 0) { p.svg.innerHTML = ""; p.info.textContent = ""; p.lay = null; return; }
    const g = R.graphs[p.gi], lay = layout(g, p.folded);
    p.lay = lay;
    const parts = ['<g class="vp">'];
    for (const [a, b] of lay.edges) {
      const A = lay.items[a], B = lay.items[b], y1 = A.y + H / 2, y2 = B.y - H / 2, m = (y1 + y2) / 2;
      parts.push('<path class="edge" d="M' + A.x + "," + y1 + "C" + A.x + "," + m + " " + B.x + "," + m + " " + B.x + "," + y2 + '"/>');
    }
    const foundItem = p.found != null ? lay.itemOf[p.found] : -1;
    lay.items.forEach((it, k) => {
      const [l1, l2, cls] = label(g, it);
      const name = it.group != null ? g.groups[it.group].p : g.nodes[it.node].n;
      parts.push('<g class="' + cls + (k === foundItem ? " found" : "") + '" data-i="' + k + '" data-name="' + esc(name) +
        '" transform="translate(' + it.x + "," + it.y + ')"><rect x="' + -W / 2 + '" y="' + -H / 2 + '" width="' + W + '" height="' + H +
        '" rx="5"/><text x="' + (6 - W / 2) + '" y="-4">' + esc(l1) + '</text><text x="' + (6 - W / 2) + '" y="12">' + esc(l2) + "</text></g>");
    });
    parts.push("</g>");
    p.svg.innerHTML = parts.join("");
    if (foundItem >= 0) p.root.setAttribute("data-found", g.nodes[p.found].n);
    p.info.textContent = g.nodes.length + " nodes as " + lay.items.length + " boxes";
    apply(p);
  }

  function apply(p) {
    const vp = p.svg.querySelector(".vp");
    if (vp) vp.setAttribute("transform", "translate(" + p.tx + "," + p.ty + ") scale(" + p.k + ")");
  }
  function size(p) { const r = p.svg.getBoundingClientRect(); return [r.width || 600, r.height || 560]; }
  function fitView(p) {
    if (!p.lay || !p.lay.items.length) return;
    const xs = p.lay.items.map((it) => it.x), ys = p.lay.items.map((it) => it.y);
    const x0 = Math.min(...xs) - W, x1 = Math.max(...xs) + W, y0 = Math.min(...ys) - H, y1 = Math.max(...ys) + H;
    const [w, h] = size(p);
    p.k = Math.min(1.2, w / (x1 - x0), h / (y1 - y0));
    p.tx = w / 2 - ((x0 + x1) / 2) * p.k; p.ty = 10 - y0 * p.k; apply(p);
  }
  function centerOn(p, k) {
    const it = p.lay.items[k], [w, h] = size(p);
    p.k = Math.max(p.k, 0.8); p.tx = w / 2 - it.x * p.k; p.ty = h / 2 - it.y * p.k; apply(p);
  }

  function click(p, target) {
    const g = target && target.closest ? target.closest("[data-i]") : null;
    if (!g || !p.lay) return;
    const it = p.lay.items[Number(g.getAttribute("data-i"))], gr = R.graphs[p.gi];
    if (it.group != null) {
      p.folded.delete(it.group);
      for (const c of children[p.gi][it.group]) p.folded.add(c);
      render(p);
    } else {
      showNode(p, it.node);
    }
  }

  function showNode(p, j) {
    const g = R.graphs[p.gi], nd = g.nodes[j], path = [];
    for (let a = nd.g; a != null; a = g.groups[a].up) path.unshift(a);
    const lines = [nd.n + "  (" + nd.op + ")", "graph: " + g.name];
    if (nd.s) lines.push("output: " + nd.s);
    if (nd.v) lines.push("check-lite: " + nd.v);
    if (nd.t != null) lines.push("device time: " + num(nd.t, 2) + " µs");
    if (nd.kn && nd.kn.length) lines.push("kernels: " + nd.kn.join(", "));
    lines.push("inputs: " + (nd.i.map((q) => g.nodes[q].n).join(", ") || "(graph inputs only)"));
    $("details").textContent = lines.join("\n");
    p.crumbs.textContent = "";
    for (const a of path) {
      const b = el("button", { type: "button", title: "fold this module" }, "fold " + g.groups[a].p);
      b.addEventListener("click", () => { p.folded.add(a); p.found = null; render(p); });
      p.crumbs.append(b);
    }
  }

  function reveal(p, j) {
    const g = R.graphs[p.gi];
    for (let a = g.nodes[j].g; a != null; a = g.groups[a].up) {
      p.folded.delete(a);
      for (const c of children[p.gi][a]) if (c !== g.nodes[j].g) p.folded.add(c);
    }
    // The chain itself stays open; a sibling folded above may be the chain's next step.
    for (let a = g.nodes[j].g; a != null; a = g.groups[a].up) p.folded.delete(a);
    p.found = j;
    render(p); centerOn(p, p.lay.itemOf[j]); showNode(p, j);
  }

  let lastQuery = null;
  function search(q) {
    q = q.trim();
    lastQuery = q;
    const results = $("results");
    results.textContent = "";
    if (!q) { $("search-status").textContent = ""; return; }
    const lq = q.toLowerCase(), hits = [];
    let total = 0;
    for (const p of panes) {
      if (p.gi < 0) continue;
      const g = R.graphs[p.gi];
      let exact = -1, first = -1;
      g.nodes.forEach((nd, j) => {
        const hit = nd.n === q ? 2 : nd.n.toLowerCase().includes(lq) || nd.op.toLowerCase().includes(lq) ? 1 : 0;
        if (!hit) return;
        total++;
        if (hit === 2 && exact < 0) exact = j;
        if (first < 0) first = j;
        if (hits.length < 200) hits.push([p, j]);
      });
      if (exact >= 0 || first >= 0) reveal(p, exact >= 0 ? exact : first);
    }
    $("search-status").textContent = total ? total + " match(es)" : "no node matches “" + q + "”";
    for (const [p, j] of hits) {
      const g = R.graphs[p.gi], li = el("li", {}, "pane " + (p.i + 1) + ": " + g.nodes[j].n + " (" + g.nodes[j].op + ")");
      li.addEventListener("click", () => reveal(p, j));
      results.append(li);
    }
    const hash = "#q=" + encodeURIComponent(q);
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  const panes = [makePane(0), makePane(1)];
  panes.forEach((p, i) => {
    const want = R.panes[i];
    setGraph(p, want != null ? want : i === 0 && R.graphs.length ? 0 : -1);
  });
  $("search").addEventListener("keydown", (e) => { if (e.key === "Enter") search(e.target.value); });
  function fromHash() {
    const m = location.hash.match(/^#q=(.*)$/);
    if (!m) return;
    let q;
    try { q = decodeURIComponent(m[1]); } catch (_) { q = m[1]; }
    if (q === lastQuery) return;
    $("search").value = q;
    search(q);
  }
  window.addEventListener("hashchange", fromHash);
  if (!R.graphs.length) none("graph", "The file holds no graph.");

  // ---- check-lite
  const c = R.check_lite;
  if (c) {
    $("check").append(el("p", {}, el("span", { class: "status-" + c.status.replace(/[^a-z]/g, "") }, c.status), " — " + c.summary));
    const rows = c.rows.slice().sort((a, b) => b.violation - a.violation);
    $("check").append(table(["compile", "node", "target", "verdict", "detail"], rows.map((r) => [r.compile, r.node, r.target, r.class, r.detail]), (i) => rows[i].violation));
    if (c.unverified.length) $("check").append(el("h3", {}, "Not checked"), el("ul", {}, ...c.unverified.map((u) => el("li", {}, u))));
  } else none("check", "No check-lite verdicts for this file.");

  // ---- readiness
  const rd = R.readiness;
  if (rd) {
    $("readiness").append(el("p", {}, "On " + rd.backend.toUpperCase() + ", op tables of torch " + rd.torch + ": " + rd.ops.length + " op(s)."));
    $("readiness").append(table(["op", "status", "nodes", "lite mode", "default mode"], rd.ops.map((o) => [o.target, o.status, o.nodes, o.lite, o.default]), (i) => rd.ops[i].status !== "native" && rd.ops[i].status !== "composite"));
  } else none("readiness", "No readiness for this file.");

  // ---- kernels
  const ks = R.kernels;
  if (ks) {
    const k = $("kernels");
    if (ks.profile) {
      k.append(el("p", {}, "Profile " + ks.profile + ": " + num(ks.attributed_us) + " µs attributed to kernels, " + num(ks.unattributed_us) + " µs unattributed, " + num(ks.outside_us) + " µs outside compiled regions."));
    } else k.append(el("p", { class: "muted" }, "No profile given (--profile TRACE): kernels without device time."));
    const rows = ks.rows.slice();
    if (ks.profile) rows.sort((a, b) => (b.device_us || 0) - (a.device_us || 0));
    k.append(table(["compile", "kernel", "kind", "calls", "device µs", "median µs", "nodes", "source"], rows.map((r) => [
      r.compile, r.name, r.kind, r.calls == null ? "" : r.calls, num(r.device_us), num(r.median_us, 2), r.nodes.join(", "),
      r.source == null ? "" : el("details", {}, el("summary", {}, r.source.split("\n").length + " lines"), el("pre", {}, r.source)),
    ])));
    for (const n of ks.notes) k.append(el("p", { class: "muted" }, n));
    if (ks.unattributed.length) k.append(el("h3", {}, "Unattributed device time"), el("ul", {}, ...ks.unattributed.map((u) => el("li", {}, u))));
  } else none("kernels", "No Inductor output code in this file: no kernels.");

  // ---- guards
  if (R.guards.length) {
    for (const gd of R.guards) {
      const s = $("guards");
      s.append(el("h3", {}, gd.compile ? "compile " + gd.compile : "the file"));
      const list = (title, xs) => { if (xs.length) s.append(el("p", {}, title), el("pre", {}, xs.join("\n"))); };
      list("symbols and ranges", gd.symbols);
      list("guards", gd.guards);
      list("specializations", gd.specializations);
      list("guards that could not be read", gd.unread);
    }
  } else none("guards", "The file records no symbols or guards.");

  // ---- versions and config
  if (R.versions.length) $("versions").append(table(["name", "value", "from"], R.versions.map((v) => [v.name, typeof v.value === "string" ? v.value : JSON.stringify(v.value), v.scope])));
  else none("versions", "The file records no versions.");
  for (const e of R.config) $("versions").append(el("div", {}, el("strong", {}, e.name + " "), el("span", { class: "muted" }, "(" + e.scope + ") "), jsonTree(e.value)));

  // ---- diff
  if (R.diff) $("diff").append(el("p", {}, "Against " + R.diff.against), jsonTree(R.diff.value));
  else none("diff", "No graph diff in this report.");

  // ---- files
  $("files").append(el("p", {}, "Everything this report holds comes from these files; files the log named that were not read are listed with why."));
  $("files").append(table(["role", "state", "path", "bytes or why"], R.files.map((f) => [f.role, f.state, f.path, f.state === "read" ? f.bytes : f.why]), (i) => R.files[i].state !== "read"));

  // ---- warnings
  if (R.warnings.length) $("warnings").append(el("ul", {}, ...R.warnings.map((w) => el("li", {}, w))));
  else none("warnings", "None.");

  fromHash();
})();
