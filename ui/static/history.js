"use strict";
// A task's state history as the master keeps it (/state's `statuses`: each
// state the agent reported, with its time, reason and message, kept for
// completed tasks too and across failovers), and the facts drawn from it:
// when it started and ended, and why it ended.

const isTerminal = (s) => ["TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_ERROR", "TASK_LOST", "TASK_DROPPED", "TASK_GONE", "TASK_GONE_BY_OPERATOR"].includes(s);
const statusTime = (s) => (s && s.timestamp ? new Date(s.timestamp * 1000).toLocaleString() : "–");
// statusWhy is a status's reason and message: "COMMAND_EXECUTOR_FAILED: Command exited with status 3".
const statusWhy = (s) => (s ? [(s.reason || "").replace(/^REASON_/, ""), s.message].filter(Boolean).join(": ") : "");

// taskHistoryFacts are the Started, Ended and Reason rows of task t's facts.
function taskHistoryFacts(t) {
  const ss = t.statuses || [];
  const last = ss[ss.length - 1];
  const started = ss.find((s) => s.state === "TASK_RUNNING");
  const ended = isTerminal(t.state) ? last : null;
  return [["Started", statusTime(started)], ["Ended", ended ? statusTime(ended) : "–"], ["Reason", statusWhy(last) || "–"]];
}

// renderTaskHistory lists t's statuses in list, oldest first; false when
// the master sent none (the page then notes what it sees itself).
function renderTaskHistory(list, t) {
  const ss = t.statuses || [];
  if (!ss.length) return false;
  list.replaceChildren(...ss.map((s) => {
    const why = statusWhy(s);
    return el("li", {}, stateBadge(s.state), ` ${statusTime(s)}`, why ? el("span", { class: "hint", text: ` ${why}` }) : "");
  }));
  return true;
}
