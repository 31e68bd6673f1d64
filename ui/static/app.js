// allot's web UI: fills the page the Go template rendered from the
// master's JSON and keeps it current from the operator event stream
// (Mesos's SUBSCRIBE, RecordIO-framed JSON), refreshing the data on each
// event rather than reloading the page. No framework, no build step.
"use strict";

// Absolute, from location.origin: a page opened as http://user:pass@host/
// has that userinfo in its base URL, and Chromium refuses to fetch a URL
// with credentials in it, so a relative URL would fail every data fetch.
// The origin never carries userinfo; the browser keeps the credential from
// the page's own load in its auth cache and sends it with these fetches.
const api = location.origin + document.body.dataset.api;
const page = document.body.dataset.page;
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

async function getJSON(path) {
  const r = await fetch(api + path, { headers: { Accept: "application/json" } });
  if (!r.ok) throw new Error(path + ": " + r.status + " " + (await r.text()).trim());
  return r.json();
}

function showError(err) {
  const box = $("error");
  if (!err) { box.hidden = true; return; }
  box.hidden = false;
  box.textContent = err.message.startsWith("script error") ? err.message : "Cannot reach the master: " + err.message;
}

function qty(name, v) {
  v = v || 0;
  if (name === "mem" || name === "disk") return v >= 1024 ? (v / 1024).toFixed(1) + " GB" : Math.round(v) + " MB";
  if (name === "disk_bw" || name === "net_bw") return Math.round(v) + " MB/s";
  return +v.toFixed(3) + "";
}
const pct = (x) => (100 * x).toFixed(0) + "%";
const stateBadge = (s) => el("span", { class: "state " + s, text: s.replace(/^TASK_/, "").toLowerCase() });
// The short form of an id, the one the CLI prints and accepts
// (internal/shortid): its shortest suffix of at least 8 characters that no
// other id of its kind ends with (ids of up to 16 characters whole). Master-issued ids all begin with the
// master's id, so their ends tell them apart. known holds each kind's ids
// from the last /state.
const known = { framework: [], agent: [], task: [] };
function shortForm(id, all) {
  if (id.length <= 16) return id; // a name a framework chose: shown whole
  for (let n = 8; n < id.length; n++) { const s = id.slice(-n); if (!all.some((o) => o !== id && o.endsWith(s))) return s; }
  return id;
}
const shortID = (kind, id) => shortForm(id, known[kind] || []);
function learnIDs(st) {
  known.framework = (st.frameworks || []).concat(st.completed_frameworks || []).map((f) => f.id);
  known.agent = (st.slaves || []).map((a) => a.id);
  known.task = allTasks(st).map((t) => t.id);
}
// Every id is a link to its page, shown in its short form, whole in its title.
const hrefOf = {
  framework: (id) => "/framework?id=" + encodeURIComponent(id),
  agent: (id) => "/agent?id=" + encodeURIComponent(id),
  task: (id, fw) => "/task?" + new URLSearchParams(fw ? { id, framework: fw } : { id }),
};
const idLink = (kind, id, fw) => (id ? el("a", { href: hrefOf[kind](id, fw), class: "id-link", "data-id": id, title: id, text: shortID(kind, id) }) : "–");
const idCell = (kind, id, fw) => { const td = el("td", { class: "id", title: id || "", "data-sort": id || "" }); td.append(idLink(kind, id, fw)); return td; };

function fill(table, rows, emptyText) {
  const body = $(table).tBodies[0];
  body.replaceChildren();
  if (rows.length === 0) {
    const cols = $(table).tHead.rows[0].cells.length;
    body.append(el("tr", {}, el("td", { class: "empty", colspan: cols, text: emptyText })));
    return;
  }
  for (const cells of rows) body.append(el("tr", {}, ...cells.map((c) => (c instanceof Node && c.tagName === "TD") ? c : el("td", {}, c))));
  arrange($(table)); // pages.js: the table's sort and filter, kept across refreshes
}

function totals(st) {
  const total = {}, used = {};
  for (const a of st.slaves || []) {
    for (const [k, v] of Object.entries(a.resources || {})) total[k] = (total[k] || 0) + v;
    for (const [k, v] of Object.entries(a.used_resources || {})) used[k] = (used[k] || 0) + v;
  }
  return { total, used };
}

function dominantShare(fw, total) {
  let s = 0;
  for (const [k, v] of Object.entries(fw.used_resources || {})) if (total[k] > 0 && ["cpus", "mem", "disk", "gpus"].includes(k)) s = Math.max(s, v / total[k]);
  return s;
}

function allTasks(st) {
  const out = [];
  for (const f of st.frameworks || []) out.push(...(f.tasks || []), ...(f.unreachable_tasks || []));
  for (const f of (st.frameworks || []).concat(st.completed_frameworks || [])) out.push(...(f.completed_tasks || []));
  return out;
}

const render = {
  async overview(st) {
    $("leader").textContent = (st.leader || "").replace(/^master@/, "");
    const p = st.allocator || {};
    $("policy").textContent = `${p.sorter} · ${p.agent_selection} · ${p.mode}`;
    const active = (st.slaves || []).filter((a) => a.active).length;
    $("agent-count").textContent = `${(st.slaves || []).length} (${active} active)`;
    $("framework-count").textContent = (st.frameworks || []).length;
    $("task-count").textContent = (st.frameworks || []).reduce((n, f) => n + (f.tasks || []).length, 0);
    const { total, used } = totals(st);
    const order = ["cpus", "mem", "disk", "gpus"];
    const names = Object.keys(total).sort((a, b) => ((order.indexOf(a) + 99) % 99) - ((order.indexOf(b) + 99) % 99) || a.localeCompare(b));
    fill("resources", names.map((k) => {
      const f = total[k] ? (used[k] || 0) / total[k] : 0;
      return [k, qty(k, used[k]), qty(k, total[k]), el("td", { class: "use" }, el("div", { class: "bar", title: pct(f) }, el("span", { style: `width:${(100 * f).toFixed(1)}%` })), " " + pct(f))];
    }), "no agents yet");
    renderWaiting(st); // placement.js
    try {
      const peers = await getJSON("/api/v1/allot/raft");
      fill("peers", peers.map((x) => [el("td", { class: "id", title: x.id, text: x.id }), x.address, x.suffrage.toLowerCase(), x.leader ? stateBadge("leader") : "follower"]), "no raft peers");
    } catch (e) { fill("peers", [], "raft peers unavailable: " + e.message); }
  },

  agents(st) {
    const tasks = {};
    for (const t of allTasks(st)) if (t.state === "TASK_RUNNING" || t.state === "TASK_STAGING") tasks[t.slave_id] = (tasks[t.slave_id] || 0) + 1;
    const of = (a, k) => a.resources[k] ? `${qty(k, (a.used_resources || {})[k])} / ${qty(k, a.resources[k])}` : "–";
    fill("agents", (st.slaves || []).map((a) => {
      const r = a.usage_rates && a.usage_rates.cpu_measured ? a.usage_rates : null;
      return [idCell("agent", a.id), a.pid.replace(/^slave\(1\)@/, ""), stateBadge(a.state || (a.active ? "active" : "disconnected")), of(a, "cpus"), of(a, "mem"), of(a, "disk") + (a.resources.gpus ? ` · gpus ${of(a, "gpus")}` : ""),
        r ? pct(r.cpu) : "–", r ? pct(r.iowait) : "–", String(tasks[a.id] || 0), agentAction(a)];
    }), "no agents registered");
  },

  frameworks(st) {
    const { total } = totals(st);
    const now = Date.now() / 1000;
    const filters = (f) => (f.filters || []).length ? el("td", { title: f.filters.map((x) => `agent ${x.agent_id} until ${new Date(x.until * 1000).toLocaleTimeString()}`).join("\n") },
      `${f.filters.length} (next ends in ${Math.max(0, Math.min(...f.filters.map((x) => x.until)) - now).toFixed(0)} s)`) : "none";
    fill("frameworks", (st.frameworks || []).map((f) => [idCell("framework", f.id), f.name, f.role,
      stateBadge(!f.connected ? "disconnected" : f.active ? "active" : "suppressed"), pct(f.dominant_share ?? dominantShare(f, total)), String(f.offers),
      filters(f), String((f.tasks || []).length), String((f.completed_tasks || []).length), f.job_type || "–"]), "no frameworks subscribed");
  },

  async roles() {
    const doc = await getJSON("/roles");
    const list = (m) => Object.keys(m || {}).sort().map((k) => `${k} ${qty(k, m[k])}`).join(", ") || "–";
    fill("roles", (doc.roles || []).map((r) => [r.name, String(r.weight), list(r.quota && r.quota.guarantee), list(r.quota && r.quota.limit),
      list(r.allocated), list(r.reserved), String((r.frameworks || []).length)]), "no roles: none has a weight, quota, reservation or framework");
  },

  tasks(st) {
    const want = $("state-filter").value;
    const fw = new URLSearchParams(location.search).get("framework");
    const rows = allTasks(st).filter((t) => (!want || t.state === want) && (!fw || t.framework_id === fw));
    fill("tasks", rows.map((t) => [idCell("task", t.id, t.framework_id), t.name,
      idCell("framework", t.framework_id), idCell("agent", t.slave_id), stateBadge(t.state), qty("cpus", t.resources.cpus), qty("mem", t.resources.mem)]), "no tasks");
  },

  task(st) { taskPage.update(st); },

  allocator(st) { allocatorPage.update(st); },
};

// The task page: facts, the state history the master keeps (or, where it
// sends none, the states seen on the event stream), and a
// live tail of the sandbox's stdout/stderr through the master's /files/read.
const taskPage = {
  task: null, file: "stdout", offset: 0, timer: null, seen: [],
  init() {
    for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => {
      document.querySelectorAll(".tab").forEach((x) => x.classList.remove("current"));
      b.classList.add("current");
      this.file = b.dataset.file; this.offset = 0; $("log").textContent = "";
      this.tail();
    });
    this.timer = setInterval(() => this.tail(), 1000);
  },
  update(st) {
    const q = new URLSearchParams(location.search);
    const t = allTasks(st).find((x) => x.id === q.get("id") && (!q.get("framework") || x.framework_id === q.get("framework")));
    if (!t) { $("task-info").replaceChildren(el("dt", { text: "Task" }), el("dd", { text: `${q.get("id")} is not known to the master (finished long ago, or a typo)` })); return; }
    const first = !this.task;
    this.task = t;
    $("title").textContent = "Task " + t.id;
    const facts = [["Name", t.name], ["State", t.state], ["Framework", idLink("framework", t.framework_id)], ["Executor", t.executor_id || t.id], ["Agent", idLink("agent", t.slave_id)],
      ["Resources", Object.entries(t.resources).map(([k, v]) => `${k} ${qty(k, v)}`).join(", ")], ...containerFacts(t), ...taskHistoryFacts(t)]; // containers.js, history.js
    $("task-info").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", {}, v)]));
    this.kept = renderTaskHistory($("history"), t); // history.js
    if (!this.kept) this.note(t.state, "current state");
    if (first) { this.tail(); this.browse(); }
  },
  note(state, how) {
    if (this.seen.length && this.seen[this.seen.length - 1].state === state) return;
    this.seen.push({ state, at: new Date() });
    $("history").append(el("li", {}, stateBadge(state), ` ${this.seen[this.seen.length - 1].at.toLocaleTimeString()} (${how})`));
  },
  sandbox() { const t = this.task; return `/frameworks/${t.framework_id}/executors/${t.executor_id || t.id}/runs/latest`; },
  async tail() {
    if (!this.task || (!$("follow").checked && this.offset > 0)) return;
    for (;;) {
      const q = new URLSearchParams({ agent_id: this.task.slave_id, path: this.sandbox() + "/" + this.file, offset: this.offset });
      let chunk;
      try { chunk = await getJSON("/files/read?" + q); } catch (e) { if (this.offset === 0) $("log").textContent = "(" + e.message + ")"; return; }
      if (!chunk.data) return;
      const log = $("log");
      const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
      if (this.offset === 0) log.textContent = "";
      log.append(chunk.data);
      this.offset = chunk.offset + chunk.data.length;
      if (atEnd) log.scrollTop = log.scrollHeight;
    }
  },
  // browse lists a sandbox directory: a directory opens in place (the
  // agent answers a download of one with 400), a file downloads.
  async browse(dir) {
    const root = this.sandbox();
    dir = dir || root;
    const agent = this.task.slave_id;
    try {
      const files = await getJSON("/files/browse?" + new URLSearchParams({ agent_id: agent, path: dir }));
      files.sort((a, b) => (b.mode[0] === "d") - (a.mode[0] === "d") || a.path.localeCompare(b.path));
      const open = (path, text) => { const a = el("a", { href: "#", class: "dir", "data-path": path, text }); a.addEventListener("click", (e) => { e.preventDefault(); this.browse(path); }); return a; };
      const items = files.map((f) => el("li", { class: f.mode[0] === "d" ? "is-dir" : "is-file" }, f.mode[0] === "d" ? open(f.path, f.path.split("/").pop() + "/") :
        el("a", { href: api + "/files/download?" + new URLSearchParams({ agent_id: agent, path: f.path }), text: f.path.split("/").pop() }), f.mode[0] === "d" ? "" : ` ${f.size} bytes`));
      if (dir !== root) items.unshift(el("li", { class: "is-dir" }, open(dir.slice(0, dir.lastIndexOf("/")), "../")));
      $("sandbox-path").textContent = "sandbox" + dir.slice(root.length) + "/";
      $("sandbox").replaceChildren(...(items.length ? items : [el("li", { class: "empty", text: "empty directory" })]));
    } catch (e) { $("sandbox").replaceChildren(el("li", { text: "sandbox unavailable: " + e.message })); }
  },
  event(ev) {
    const u = ev.task_updated;
    if (!this.kept && u && this.task && u.status && u.status.task_id && u.status.task_id.value === this.task.id) this.note(u.state || u.status.state, "event");
  },
};

// The allocator page: each framework's dominant share over the last hour,
// the policy switch and the allocator's "why".
const allocatorPage = {
  init() {
    $("sorter-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const body = JSON.stringify({ sorter: $("sorter").value, agent_selection: $("agent_selection").value, mode: $("mode").value });
      const r = await fetch(api + "/api/v1/allot/sorter", { method: "POST", headers: { "Content-Type": "application/json" }, body });
      const text = await r.text();
      $("sorter-result").textContent = r.ok ? "In force from the next cycle: " + Object.values(JSON.parse(text)).filter((x) => typeof x === "string").join(" · ") : "Refused: " + text.trim();
      delete $("sorter-form").dataset.synced;
      refreshSoon();
    });
    $("explain-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const q = new URLSearchParams({ framework_id: $("explain-fw").value, agent_id: $("explain-agent").value });
      const r = await fetch(api + "/explain?" + q);
      $("explain-result").textContent = (await r.text()).trim();
    });
    this.sample();
    setInterval(() => this.sample(), 5000);
  },
  last: null,
  update(st) {
    this.last = st;
    const p = st.allocator || {};
    // The form shows the policy in force when the page loads and after an
    // apply; never on every refresh, which would undo a choice the user is
    // about to apply.
    if (!$("sorter-form").dataset.synced && p.sorter) {
      for (const k of ["sorter", "agent_selection", "mode"]) if (p[k]) $(k).value = p[k];
      $("sorter-form").dataset.synced = "1";
    }
    const keep = (sel, items) => { const v = sel.value; sel.replaceChildren(...items.map(([id, label]) => el("option", { value: id, text: label }))); if (v) sel.value = v; };
    keep($("explain-fw"), (st.frameworks || []).map((f) => [f.id, `${f.name} (${shortID("framework", f.id)})`]));
    keep($("explain-agent"), (st.slaves || []).map((a) => [a.id, `${a.pid.replace(/^slave\(1\)@/, "")} (${shortID("agent", a.id)})`]));
  },
  // The chart is the master's own samples (GET /api/v1/allot/samples):
  // the last hour, there on load and after a reload.
  async sample() {
    const doc = await getJSON("/api/v1/allot/samples");
    const series = {};
    for (const smp of doc.samples || []) for (const [id, f] of Object.entries(smp.frameworks || {})) (series[id] = series[id] || { id, name: f.name, pts: [] }).pts.push([smp.at * 1000, f.dominant_share]);
    drawChart($("share-chart"), $("legend"), Object.values(series).map((x) => ({ ...x, label: x.name || "(no name)", tag: shortID("framework", x.id), href: hrefOf.framework(x.id) })), (doc.span_seconds || 3600) * 1000, pct);
  },
};

// A script error is shown, not swallowed: the page would otherwise just
// look empty.
window.addEventListener("error", (e) => showError(new Error("script error: " + e.message)));
window.addEventListener("unhandledrejection", (e) => showError(new Error("script error: " + (e.reason && e.reason.message || e.reason))));

let pending = null;
async function refresh() {
  pending = null;
  try {
    const st = await getJSON("/state");
    showError(null);
    learnIDs(st);
    await render[page]?.(st);
  } catch (e) { showError(e); }
}
function refreshSoon() { if (!pending) pending = setTimeout(refresh, 300); }

// subscribe reads the operator event stream: RecordIO frames, each
// "<length>\n<JSON event>". Every event refreshes the page's data; the
// stream reconnects with a growing pause when it ends.
// The stream is closed when the page is left: a browser keeps at most six
// connections per host, and streams of pages kept for "back" would starve
// the next page's requests.
const streamAbort = new AbortController();
window.addEventListener("pagehide", () => streamAbort.abort());
async function subscribe(delay = 1000) {
  const live = $("live");
  try {
    const r = await fetch(api + "/api/v1", { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body: '{"type":"SUBSCRIBE"}', signal: streamAbort.signal });
    if (!r.ok || !r.body) throw new Error("subscribe: " + r.status);
    live.textContent = "live"; live.className = "live on"; delay = 1000;
    const reader = r.body.getReader(), dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      for (;;) {
        const nl = buf.indexOf("\n");
        if (nl < 0) break;
        const n = parseInt(buf.slice(0, nl), 10);
        if (buf.length < nl + 1 + n) break; // lengths count bytes; events are ASCII JSON
        const ev = JSON.parse(buf.slice(nl + 1, nl + 1 + n));
        buf = buf.slice(nl + 1 + n);
        if (page === "task") taskPage.event(ev);
        if (ev.type !== "HEARTBEAT") refreshSoon();
      }
    }
  } catch (e) { if (streamAbort.signal.aborted) return; }
  live.textContent = "reconnecting…"; live.className = "live off";
  setTimeout(() => subscribe(Math.min(delay * 2, 15000)), delay);
}

// The agents page's drain and reactivate buttons: Mesos's DRAIN_AGENT and
// REACTIVATE_AGENT on the operator API, as the sorter switch posts JSON
// (a cross-site form cannot send that content type) with the page's
// credential; the master authorizes them (drain_agents, reactivate_agents)
// and its refusal is shown as it came.
function agentAction(a) {
  const call = a.state === "drained" || a.state === "deactivated" ? "REACTIVATE_AGENT" : a.state === "draining" || a.state === "down" ? "" : "DRAIN_AGENT";
  if (!call) return "–";
  return el("button", { class: "agent-action", "data-call": call, "data-agent": a.id, id: (call === "DRAIN_AGENT" ? "drain-" : "reactivate-") + a.id,
    text: call === "DRAIN_AGENT" ? "Drain" : "Reactivate" });
}

async function agentCall(call, agent) {
  const field = call.toLowerCase();
  const body = JSON.stringify({ type: call, [field]: { agent_id: { value: agent } } });
  const r = await fetch(api + "/api/v1", { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body });
  const text = (await r.text()).trim();
  $("agents-result").textContent = r.ok ? `${call} of ${agent}: done` : `${call} of ${agent} refused: ${r.status} ${text}`;
  refreshSoon();
}

if (page === "agents") {
  $("agents").addEventListener("click", (e) => {
    const b = e.target.closest("button.agent-action");
    if (b) agentCall(b.dataset.call, b.dataset.agent);
  });
}
// Started once every script has run: pages.js adds pages to render.
document.addEventListener("DOMContentLoaded", () => {
  if (page === "task") taskPage.init();
  if (page === "allocator") allocatorPage.init();
  if (page === "tasks") {
    const s = new URLSearchParams(location.search).get("state");
    if (s) $("state-filter").value = s;
    $("state-filter").addEventListener("change", refresh);
  }
  if (render[page]) { refresh(); subscribe(); setInterval(refreshSoon, 5000); }
});
