"use strict";
// Why a framework is offered nothing: the allocator's own account, /state's
// per-framework `unplaced` (master/placement.go), present once a framework
// went a few allocation cycles without an offer. The framework page shows
// it whatever it is; the overview lists the frameworks it leaves waiting,
// leaving out those that asked for nothing (suppressed, demand met).

// unplacedDetail is the reason's kind, resource and age, after its message
// (which says itself when no agent could ever run the task: the box turns red).
// The master keeps a waiting framework's reason across an offer it could
// not use, so the age is of its last offer, whatever it was.
function unplacedDetail(u) {
  const bits = [u.reason.replace(/_/g, " ") + (u.dimension ? ` (${u.dimension})` : "")];
  bits.push(`last offer ${u.idle_cycles} allocation cycle${u.idle_cycles === 1 ? "" : "s"} ago`);
  return bits.join("; ");
}

// ownChoice are the reasons that are the framework's own doing, not the
// cluster's: a running framework that suppressed offers is not in trouble.
const ownChoice = (u) => u.reason === "suppressed" || u.reason === "demand_met";

// showUnplaced fills box with framework f's reason, or hides it: a warning
// for a reason of the cluster's (red where no agent could ever run its
// task), a plain note for the framework's own choice.
function showUnplaced(box, f) {
  const u = f && f.unplaced;
  box.hidden = !u;
  if (!u) return box.replaceChildren();
  const own = ownChoice(u);
  box.className = "unplaced" + (u.never ? " never" : "") + (own ? " own" : "");
  box.replaceChildren(el("strong", { text: own ? "No offers wanted: " : "Offered nothing: " }), u.message, el("span", { class: "hint", text: ` (${unplacedDetail(u)})` }));
}

// renderWaiting fills the overview's list of frameworks the allocator
// leaves waiting, hidden while there are none.
function renderWaiting(st) {
  const asked = (u) => u && !ownChoice(u);
  const fws = (st.frameworks || []).filter((f) => asked(f.unplaced));
  $("waiting").hidden = !fws.length;
  fill("unplaced", fws.map((f) => [idCell("framework", f.id), f.name || "–", f.unplaced.message,
    el("td", { class: "hint", text: unplacedDetail(f.unplaced) })]), "every framework that wants offers gets them");
}
