// allot's web UI, part two (loaded after app.js, whose helpers it uses):
// tables that sort and filter, charts drawn from the master's samples,
// the agent and framework pages, and search by id or name.
"use strict";

// ---- Tables: click a heading to sort (again to reverse); type in the box
// above a table to keep the rows that contain the text (full ids included).
// The choice is kept on the table and applied again after every refresh.

function cellKey(td) {
  const raw = td.dataset.sort ?? td.textContent.trim();
  const n = parseFloat(raw);
  return /^-?[0-9.]+/.test(raw) && !isNaN(n) ? n : raw.toLowerCase();
}

function arrange(table) {
  if (!table || !table.classList.contains("grid")) return;
  const body = table.tBodies[0];
  const rows = [...body.rows].filter((r) => !r.querySelector("td.empty"));
  const col = table.dataset.sortCol;
  if (col !== undefined && rows.length) {
    const dir = table.dataset.sortDir === "desc" ? -1 : 1;
    rows.sort((a, b) => {
      const x = cellKey(a.cells[col]), y = cellKey(b.cells[col]);
      return dir * (typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : typeof x === "number" ? -1 : 1);
    });
    body.append(...rows);
  }
  const q = (table.dataset.filter || "").toLowerCase();
  let shown = 0;
  for (const r of rows) {
    const text = (r.textContent + " " + [...r.querySelectorAll("[title]")].map((e) => e.title).join(" ")).toLowerCase();
    r.hidden = q !== "" && !text.includes(q);
    if (!r.hidden) shown++;
  }
  const note = table.filterNote;
  if (note) note.textContent = q && rows.length ? `${shown} of ${rows.length}` : "";
}

function makeSortable(table) {
  [...table.tHead.rows[0].cells].forEach((th, i) => {
    th.classList.add("sortable");
    th.tabIndex = 0;
    const sort = () => {
      const same = table.dataset.sortCol === String(i);
      table.dataset.sortDir = same && table.dataset.sortDir === "asc" ? "desc" : "asc";
      table.dataset.sortCol = String(i);
      for (const h of table.tHead.rows[0].cells) h.removeAttribute("aria-sort");
      th.setAttribute("aria-sort", table.dataset.sortDir === "asc" ? "ascending" : "descending");
      arrange(table);
    };
    th.addEventListener("click", sort);
    th.addEventListener("keydown", (e) => { if (e.key === "Enter") sort(); });
  });
}

function makeFilterable(table) {
  const box = el("input", { type: "search", class: "table-filter", placeholder: "filter rows…", "aria-label": "filter the rows of this table", "data-for": table.id });
  box.addEventListener("input", () => { table.dataset.filter = box.value; arrange(table); });
  table.filterNote = el("span", { class: "filter-note" });
  table.parentElement.before(el("div", { class: "filter-bar" }, box, table.filterNote));
}

for (const t of document.querySelectorAll("table.grid")) {
  // Every table scrolls sideways within its own box on a narrow screen.
  if (!t.parentElement.classList.contains("scroll")) { const w = el("div", { class: "scroll" }); t.before(w); w.append(t); }
  if (t.classList.contains("sortable")) makeSortable(t);
  if (t.classList.contains("filterable")) makeFilterable(t);
}

// ---- Charts: series of [ms, value] over the last span, as inline SVG,
// with a legend under it whose long names are cut short (the full name in
// the title).
const palette = ["#2f6fdf", "#e07b39", "#1f8a4c", "#c53030", "#7c3aed", "#0e9aa7", "#b7791f", "#db2777"];

// The x axis reaches back to the oldest sample, in steps of twenty
// minutes (round ticks) up to span, so that a young cluster's few samples
// are not a spike at "now"; the drawing is as wide as its box, so that
// its text keeps its size on a phone.
function drawChart(svg, legendEl, series, maxSpan, fmt) {
  const now = Date.now(), oldest = Math.min(now, ...series.flatMap((s) => s.pts.map(([t]) => t)));
  const span = Math.min(maxSpan, Math.max(1200000, Math.ceil((now - oldest) / 1200000) * 1200000));
  const W = Math.max(320, Math.round(svg.clientWidth || 1000)), H = W < 600 ? 180 : 240, L = 48, B = 24;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const x = (t) => L + (W - L - 8) * (1 - (now - t) / span), y = (v) => 8 + (H - B - 8) * (1 - Math.min(1, Math.max(0, v)));
  const ns = "http://www.w3.org/2000/svg", mk = (tag, a) => { const e = document.createElementNS(ns, tag); for (const [k, v] of Object.entries(a)) e.setAttribute(k, v); return e; };
  svg.replaceChildren();
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    svg.append(mk("line", { x1: L, x2: W - 8, y1: y(v), y2: y(v), class: "grid-line" }));
    const t = mk("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" }); t.textContent = fmt(v); svg.append(t);
  }
  const mins = span / 60000;
  for (const m of W < 600 ? [mins, mins / 2, 0] : [mins, (mins * 3) / 4, mins / 2, mins / 4, 0]) {
    const t = mk("text", { x: x(now - m * 60000), y: H - 6, "text-anchor": m === mins ? "start" : m ? "middle" : "end", class: "axis" });
    t.textContent = m ? `-${Math.round(m)} min` : "now"; svg.append(t);
  }
  const legend = [];
  series.forEach((s, i) => {
    const c = palette[i % palette.length];
    const pts = s.pts.filter(([t]) => now - t <= span);
    if (pts.length) {
      svg.append(mk("polyline", { points: pts.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" "), fill: "none", stroke: c, "stroke-width": 2 }));
      const [lt, lv] = pts[pts.length - 1];
      svg.append(mk("circle", { cx: x(lt).toFixed(1), cy: y(lv).toFixed(1), r: 3.5, fill: c }));
    }
    const last = (s.tag ? s.tag + " " : "") + (pts.length ? fmt(pts[pts.length - 1][1]) : "–");
    const name = s.href ? el("a", { href: s.href, class: "name", text: s.label }) : el("span", { class: "name", text: s.label });
    legend.push(el("li", { title: `${s.label} ${last}` }, el("i", { style: "background:" + c }), name, el("span", { class: "val", text: last })));
  });
  if (!series.length) { const t = mk("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "axis" }); t.textContent = "no samples yet"; svg.append(t); }
  if (legendEl) legendEl.replaceChildren(...legend);
}

// samples fetches the master's ring and turns it into series, pick
// choosing from each sample the {key: value} to plot.
async function samples(pick) {
  const doc = await getJSON("/api/v1/allot/samples");
  const series = {};
  for (const smp of doc.samples || []) for (const [k, v] of Object.entries(pick(smp) || {})) (series[k] = series[k] || { label: k, pts: [] }).pts.push([smp.at * 1000, v]);
  return { series: Object.values(series), span: (doc.span_seconds || 3600) * 1000 };
}

const facts = (id, rows) => $(id).replaceChildren(...rows.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", {}, v)]));
const resList = (m) => Object.keys(m || {}).sort().map((k) => `${k} ${qty(k, m[k])}`).join(", ") || "–";
const taskRows = (ts) => ts.map((t) => [idCell("task", t.id, t.framework_id), t.name, idCell("framework", t.framework_id), idCell("agent", t.slave_id), stateBadge(t.state),
  qty("cpus", t.resources.cpus), qty("mem", t.resources.mem)]);
const notKnown = (kind, id) => facts(kind + "-info", [[kind === "agent" ? "Agent" : "Framework", `${id} is not known to the master (removed, or a typo)`]]);

// ---- The agent page: what it has and what of it is allocated, its
// reservations and volumes, its state, its tasks, its use over the hour.
render.agent = async (st) => {
  const id = new URLSearchParams(location.search).get("id");
  const a = (st.slaves || []).find((x) => x.id === id);
  if (!a) return notKnown("agent", id);
  $("title").textContent = "Agent " + shortID("agent", a.id);
  const state = a.state || (a.active ? "active" : "disconnected");
  facts("agent-info", [["Id", a.id], ["Address", a.pid.replace(/^slave\(1\)@/, "")], ["Hostname", a.hostname], ["State", stateBadge(state)],
    ["Drain", a.drain_info ? `${a.drain_info.state}${a.drain_info.config && a.drain_info.config.mark_gone ? " (mark gone)" : ""}` : "–"], ["Isolation", a.isolation || "–"]]);
  if (!$("agent-actions").childElementCount) { const b = agentAction(a); if (b instanceof Node) $("agent-actions").append(b); }
  fill("agent-resources", Object.keys(a.resources || {}).sort().map((k) => {
    const f = a.resources[k] ? ((a.used_resources || {})[k] || 0) / a.resources[k] : 0;
    return [k, qty(k, (a.used_resources || {})[k]), qty(k, a.resources[k]), el("td", { class: "use", "data-sort": f }, el("div", { class: "bar" }, el("span", { style: `width:${(100 * f).toFixed(1)}%` })), " " + pct(f))];
  }), "no resources");
  const resv = [];
  for (const [role, rs] of Object.entries(a.reserved_resources_full || {})) for (const r of rs) {
    const last = (r.reservations || []).slice(-1)[0] || {};
    const vol = r.disk && r.disk.persistence ? `${r.disk.persistence.id}${r.disk.volume ? " at " + r.disk.volume.container_path : ""}` : "–";
    resv.push([role, r.name, r.scalar ? qty(r.name, r.scalar.value) : JSON.stringify(r.ranges || r.set || ""), (last.type || "").toLowerCase() || "–", last.principal || "–", vol]);
  }
  fill("agent-reservations", resv, "nothing reserved on this agent");
  fill("agent-tasks", taskRows(allTasks(st).filter((t) => t.slave_id === id)), "no tasks on this agent");
  const { series, span } = await samples((s) => { const u = s.agents[id]; return u && { cpus: u.cpus / (a.resources.cpus || 1), mem: u.mem / (a.resources.mem || 1) }; });
  drawChart($("agent-chart"), $("agent-legend"), series.map((s) => ({ ...s, label: s.label + " allocated" })), span, pct);
};

// ---- The framework page: role, state, share, its tasks, its allocation
// and dominant share over the hour, its outstanding offers and filters.
render.framework = async (st) => {
  const id = new URLSearchParams(location.search).get("id");
  const f = (st.frameworks || []).find((x) => x.id === id) || (st.completed_frameworks || []).find((x) => x.id === id);
  if (!f) return notKnown("framework", id);
  const done = !(st.frameworks || []).includes(f);
  $("title").textContent = `Framework ${f.name || ""} ${shortID("framework", f.id)}`.replace("  ", " ");
  const state = done ? "completed" : !f.connected ? "disconnected" : f.active ? "active" : "suppressed";
  showUnplaced($("framework-unplaced"), done ? null : f); // placement.js
  facts("framework-info", [["Id", f.id], ["Name", f.name || "–"], ["Role(s)", (f.roles || [f.role]).filter(Boolean).join(", ") || "–"], ["State", stateBadge(state)],
    ["Dominant share", pct(f.dominant_share || 0)], ["Allocated", resList(f.used_resources)], ["Outstanding offers", String(f.offers || 0)],
    ["Failover timeout", f.failover_timeout ? f.failover_timeout + " s" : "–"], ["Job type", f.job_type || "–"]]);
  fill("framework-tasks", taskRows((f.tasks || []).concat(f.completed_tasks || [])), "no tasks");
  const now = Date.now() / 1000;
  fill("framework-filters", (f.filters || []).map((x) => [idCell("agent", x.agent_id), new Date(x.until * 1000).toLocaleTimeString(),
    el("td", { "data-sort": x.until - now, text: `${Math.max(0, x.until - now).toFixed(0)} s` }), resList(x.resources)]), "no decline filters in force");
  const { total } = totals(st);
  const { series, span } = await samples((s) => {
    const x = s.frameworks[id];
    if (!x) return null;
    const out = { "dominant share": x.dominant_share };
    for (const k of ["cpus", "mem"]) if (total[k]) out[k] = ((x.allocated || {})[k] || 0) / total[k];
    return out;
  });
  drawChart($("framework-chart"), $("framework-legend"), series.map((s) => ({ ...s, label: s.label === "dominant share" ? s.label : s.label + " of the cluster" })), span, pct);
};

// ---- Search: an id (whole, its short form, any unique end or beginning)
// or a name; one match opens its page, several are listed.
render.search = (st) => {
  const q = (new URLSearchParams(location.search).get("q") || "").trim();
  $("search-q").value = q;
  $("title").textContent = q ? `Search: ${q}` : "Search";
  if (!q) return fill("search-results", [], "type an id (its short form will do) or a name in the box above");
  const lq = q.toLowerCase(), hits = [];
  const match = (id, ...names) => id === q || id.endsWith(q) || id.startsWith(q) || names.some((n) => n && n.toLowerCase().includes(lq));
  for (const a of st.slaves || []) if (match(a.id, a.hostname, a.pid)) hits.push(["agent", a.id, null, a.pid.replace(/^slave\(1\)@/, "")]);
  for (const f of (st.frameworks || []).concat(st.completed_frameworks || [])) if (match(f.id, f.name)) hits.push(["framework", f.id, null, f.name || ""]);
  for (const t of allTasks(st)) if (match(t.id, t.name)) hits.push(["task", t.id, t.framework_id, t.name || ""]);
  const exact = hits.filter((h) => h[1] === q);
  if (hits.length === 1 || exact.length === 1) { const h = exact[0] || hits[0]; location.replace(hrefOf[h[0]](h[1], h[2])); return; }
  fill("search-results", hits.map(([kind, id, fw, name]) => [kind, idCell(kind, id, fw), name]), `nothing matches ${q}`);
};

if (page === "agent") {
  $("agent-actions").addEventListener("click", (e) => {
    const b = e.target.closest("button.agent-action");
    if (b) agentCall(b.dataset.call, b.dataset.agent).then(() => $("agent-actions").replaceChildren());
  });
}

// ---- Acting: kill a task (POST /api/v1/allot/kill) and tear a framework
// down (the operator API's TEARDOWN). Each button asks first, in place;
// the master authorizes the call (kill_tasks, teardown_frameworks) and its
// refusal is shown as it came. JSON bodies, as the drain button's: a
// cross-site form cannot send that content type.
function confirmButton(box, label, question, act) {
  const b = el("button", { class: "danger", text: label, id: box.id + "-go" });
  b.addEventListener("click", () => {
    const yes = el("button", { class: "danger", text: "Yes, " + label.toLowerCase(), id: box.id + "-yes" });
    const no = el("button", { class: "plain", text: "Cancel", id: box.id + "-no" });
    no.addEventListener("click", () => box.replaceChildren(b));
    yes.addEventListener("click", async () => {
      yes.disabled = no.disabled = true;
      const r = await act();
      const text = (await r.text()).trim();
      box.replaceChildren(el("span", { class: r.ok ? "note" : "error-text", id: box.id + "-result", text: r.ok ? `${label}: sent (${r.status})` : `${label} refused: ${r.status} ${text}` }));
      refreshSoon();
    });
    box.replaceChildren(el("span", { class: "confirm", text: question + " " }), yes, " ", no);
  });
  box.replaceChildren(b);
}
const postJSON = (path, body) => fetch(api + path, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body: JSON.stringify(body) });
const live = (state) => ["TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING", "TASK_UNREACHABLE"].includes(state);

// actions puts the page's button in place once, for a task that still
// runs or a framework still subscribed; it goes when that is over.
function actions(st) {
  const q = new URLSearchParams(location.search), box = $("actions");
  if (!box) return;
  if (page === "task") {
    const t = allTasks(st).find((x) => x.id === q.get("id") && (!q.get("framework") || x.framework_id === q.get("framework")));
    if (!t || !live(t.state)) { if (box.querySelector("#actions-go")) box.replaceChildren(); return; }
    if (!box.childElementCount) confirmButton(box, "Kill", `Kill task ${t.id}? The agent kills it with its kill policy.`, () => postJSON("/api/v1/allot/kill", { framework_id: t.framework_id, task_id: t.id }));
  }
  if (page === "framework") {
    const f = (st.frameworks || []).find((x) => x.id === q.get("id"));
    if (!f) { if (box.querySelector("#actions-go")) box.replaceChildren(); return; }
    if (!box.childElementCount) confirmButton(box, "Tear down", `Tear down ${f.name || f.id}? Every task of it is killed and it is removed.`, () => postJSON("/api/v1", { type: "TEARDOWN", teardown: { framework_id: { value: f.id } } }));
  }
}
for (const p of ["task", "framework"]) { const r = render[p]; render[p] = async (st) => { await r(st); actions(st); }; }
