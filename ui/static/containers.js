// allot's web UI: what the task page shows of a task's container (loaded
// after app.js): the image it runs in (its own ContainerInfo's, else its
// custom executor's), its addresses on container networks (the latest
// status's container_status.network_infos) and its GPUs.
"use strict";

function imageOf(c) {
  const img = c && c.mesos && c.mesos.image;
  return img ? (img.docker || img.appc || {}).name || "" : "";
}

function addressesOf(t) {
  for (const s of [...(t.statuses || [])].reverse()) {
    const nets = (s.container_status && s.container_status.network_infos) || [];
    if (!nets.length) continue;
    return nets.flatMap((n) => (n.ip_addresses || []).map((ip) => (n.name ? n.name + "/" : "") + ip.ip_address));
  }
  return [];
}

// containerFacts are the task page's rows for t's container.
function containerFacts(t) {
  const image = imageOf(t.container) || imageOf(t.executor_container);
  const rows = [["Image", el("span", { id: "task-image", text: image || "– (the host's filesystem)" })],
    ["Addresses", el("span", { id: "task-addresses", text: addressesOf(t).join(", ") || "– (the host's network)" })]];
  if ((t.resources || {}).gpus) rows.push(["GPUs", el("span", { id: "task-gpus", text: qty("gpus", t.resources.gpus) })]);
  return rows;
}
