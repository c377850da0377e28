// Sluice's audit viewer: pages drawn from the JSON API with the key the reader gives (kept in
// this tab only). Every value from the API goes into the page as text, never as markup.
"use strict";

const KEY = "sluice-api-key";
const main = document.getElementById("main");

// Every navigation is numbered. An answer that arrives after a later navigation is dropped,
// so a slow page never covers a newer one; <main data-shown> names the page once it is drawn.
let navigation = 0;
class Superseded extends Error {}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === "onclick") node.addEventListener("click", value);
    else if (value !== undefined && value !== null) node.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function api(method, path) {
  const asked = navigation;
  const headers = {};
  const key = sessionStorage.getItem(KEY);
  if (key) headers["x-api-key"] = key;
  let response, body;
  try {
    response = await fetch(path, { method, headers });
    const type = response.headers.get("content-type") || "";
    // JSON lines (an export) are text; only a JSON document is parsed.
    body = type.startsWith("application/json") ? await response.json() : await response.text();
  } catch (error) {
    if (asked !== navigation) throw new Superseded();
    throw error;
  }
  if (asked !== navigation) throw new Superseded();
  if (!response.ok) {
    const message = body && body.error ? `${body.error.message} (${body.error.code || body.error.type})` : String(body);
    throw new Error(`${response.status}: ${message}`);
  }
  return body;
}

const time = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").replace("Z", "") : "");
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const statusCell = (text) => el("span", { class: `status-${text}` }, text);
const link = (href, text) => el("a", { href }, text);
const fact = (label, value) => el("div", { class: "fact" }, el("b", {}, label), value);

function show(...nodes) {
  main.replaceChildren(...nodes.filter((node) => node !== null && node !== undefined));
}

function failure(error) {
  show(el("p", { class: "error", id: "error" }, error.message));
}

// The executions list, newest first, with the API's filters and keyset pages.
async function listPage(params) {
  const fields = ["container", "status", "outcome", "tool", "approval", "since", "until"];
  const form = el("form", { class: "filters", id: "filters" },
    fields.map((name) => el("label", {}, name, el("input", { name, value: params.get(name) || "", size: name === "container" ? 36 : 16 }))),
    el("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const name of fields) {
      const value = form.elements[name].value.trim();
      if (value) query.set(name, value);
    }
    location.hash = `#/?${query}`;
  });
  const query = new URLSearchParams(params);
  query.set("limit", query.get("limit") || "50");
  const list = await api("GET", `/v1/executions?${query}`);
  const rows = list.data.map((row) =>
    el("tr", {},
      el("td", { class: "mono" }, time(row.started_at)),
      el("td", {}, link(`#/executions/${row.id}`, row.id)),
      el("td", {}, link(`#/containers/${row.container_id}`, row.container_id.slice(0, 8)), ` #${row.number}`),
      el("td", {}, statusCell(row.status)),
      el("td", {}, row.outcome || ""),
      el("td", { class: "num" }, row.return_code ?? ""),
      el("td", {}, row.tools.join(", ")),
      el("td", { class: "num" }, row.tool_result_tokens ?? ""),
      el("td", { class: "num" }, row.returned_tokens ?? "")));
  const older = list.has_more && list.data.length
    ? el("p", {}, el("a", { href: `#/?${withParam(params, "before", list.data[list.data.length - 1].id)}`, id: "older" }, "Older executions"))
    : null;
  show(
    el("h1", {}, "Executions"),
    form,
    el("table", { id: "executions" },
      el("thead", {}, el("tr", {}, ["started (UTC)", "execution", "container", "status", "outcome", "rc", "tools", "tokens inside", "tokens returned"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows)),
    rows.length ? null : el("p", { class: "muted" }, "No executions match."),
    older);
}

function withParam(params, name, value) {
  const next = new URLSearchParams(params);
  next.set(name, value);
  return next;
}

// One execution: its code, the timeline of its tool calls, what it printed, its figures.
async function executionPage(id) {
  const execution = await api("GET", `/v1/executions/${encodeURIComponent(id)}`);
  const container = execution.container.id;
  const listed = await api("GET", `/v1/executions?container=${encodeURIComponent(container)}&limit=200`).catch((error) => {
    if (error instanceof Superseded) throw error;
    return { data: [] };
  });
  const row = listed.data.find((r) => r.id === id) || {};
  const ledger = execution.ledger || [];
  const start = row.started_at || (ledger[0] && ledger[0].requested_at) || 0;
  const calls = ledger.map((call, index) => {
    const detail = [];
    if (call.error_code) detail.push(`${call.error_code}: ${call.error_message || ""}`);
    if (call.approval) detail.push(`${call.approval.decision} by ${call.approval.by}${call.approval.reason ? ` (${call.approval.reason})` : ""}`);
    if (call.coerced) detail.push("arguments coerced");
    const took = call.finished_at ? call.finished_at - call.requested_at : null;
    return el("tr", {},
      el("td", { class: "num" }, index + 1),
      el("td", { class: "mono" }, call.tool),
      el("td", { class: "mono" }, JSON.stringify(call.input).slice(0, 160)),
      el("td", {}, statusCell(call.status)),
      el("td", { class: "num" }, start ? `+${call.requested_at - start} ms` : ""),
      el("td", { class: "num" }, took === null ? "" : `${took} ms`),
      el("td", { class: "num" }, call.attempts),
      el("td", { class: "num" }, call.result_bytes),
      el("td", {}, detail.join("; ")));
  });
  const result = execution.result || {};
  const usage = execution.usage || {};
  const counts = Object.entries(execution.counts || {});
  const replayOut = el("span", { id: "replay-result", class: "muted" });
  const replay = el("button", { id: "replay", onclick: async () => {
    replayOut.textContent = "replaying…";
    try {
      const report = await api("POST", `/v1/executions/${encodeURIComponent(id)}/replay`);
      replayOut.className = report.result === "identical" ? "ok" : "bad";
      replayOut.textContent = `${report.result}${report.divergence ? `: ${report.divergence}` : ""} (${plural(report.executions_replayed, "execution")} in ${report.elapsed_ms.toFixed(1)} ms)`;
    } catch (error) {
      replayOut.className = "bad";
      replayOut.textContent = error.message;
    }
  } }, "Replay from the audit trail");
  show(
    el("h1", {}, "Execution ", el("span", { class: "mono", id: "execution-id" }, id)),
    el("div", { class: "facts" },
      fact("status", statusCell(execution.status)),
      fact("outcome", row.outcome || (execution.error ? execution.error.type : "")),
      fact("container", link(`#/containers/${container}`, container)),
      fact("started", time(row.started_at)),
      fact("tool calls", usage.tool_calls ?? ledger.length),
      fact("run time", `${usage.time_ms ?? 0} ms`),
      fact("bytes inside / returned", `${usage.tool_result_bytes ?? 0} / ${usage.returned_bytes ?? 0}`),
      fact("tokens inside / returned", `${row.tool_result_tokens ?? "?"} / ${row.returned_tokens ?? "?"}${row.tokens_estimated ? " (estimated)" : ""}`)),
    el("p", {}, replay, " ", replayOut),
    el("h2", {}, "Code"),
    el("ol", { class: "code", id: "code" }, (execution.code || "").replace(/\n$/, "").split("\n").map((line) => el("li", {}, line || " "))),
    el("h2", {}, `Tool calls (${ledger.length})`),
    el("table", { id: "calls" },
      el("thead", {}, el("tr", {}, ["#", "tool", "input", "status", "requested", "took", "attempts", "result bytes", "detail"].map((h) => el("th", {}, h)))),
      el("tbody", {}, calls)),
    el("h2", {}, "stdout"), el("pre", { id: "stdout" }, result.stdout || ""),
    el("h2", {}, "stderr"), el("pre", { id: "stderr" }, result.stderr || ""),
    execution.error ? el("p", { class: "bad", id: "stop" }, `${execution.error.type}: ${execution.error.message}`) : null,
    counts.length ? el("h2", {}, "Counts") : null,
    counts.length ? el("table", { id: "counts" }, el("tbody", {}, counts.map(([name, n]) => el("tr", {}, el("td", {}, name), el("td", { class: "num" }, n))))) : null);
}

// A container's history as a chain, with the verdict of checking its seals and links.
async function containerPage(id) {
  const [verdict, list] = await Promise.all([
    api("GET", `/v1/containers/${encodeURIComponent(id)}/verify`),
    api("GET", `/v1/executions?container=${encodeURIComponent(id)}&limit=200`),
  ]);
  const chain = list.data.slice().sort((a, b) => a.number - b.number).map((row) =>
    el("tr", {},
      el("td", { class: "num" }, row.number),
      el("td", {}, link(`#/executions/${row.id}`, row.id)),
      el("td", { class: "mono" }, time(row.started_at)),
      el("td", {}, statusCell(row.status)),
      el("td", {}, row.outcome || ""),
      el("td", {}, row.tools.join(", "))));
  const exportLink = el("a", { href: "#", id: "export" }, "Export the audit bundle (JSON lines)");
  const exportNote = el("span", { class: "muted", id: "export-note" });
  exportLink.addEventListener("click", async (event) => {
    event.preventDefault();
    try {
      const text = await api("GET", `/v1/containers/${encodeURIComponent(id)}/export`);
      const blob = new Blob([typeof text === "string" ? text : JSON.stringify(text)], { type: "application/x-ndjson" });
      const url = URL.createObjectURL(blob);
      const save = el("a", { href: url, download: `sluice-${id}.jsonl` });
      document.body.append(save);
      save.click();
      save.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (error) {
      exportNote.className = "bad";
      exportNote.textContent = error.message;
    }
  });
  show(
    el("h1", {}, "Container ", el("span", { class: "mono" }, id)),
    el("div", { class: "verdict", id: "verdict" },
      verdict.verified
        ? el("span", { class: "ok" }, `Chain verified: ${plural(verdict.records, "record")}, every seal and link holds.`)
        : el("span", { class: "bad" }, `Chain broken: ${verdict.problem}`),
      verdict.forked_from ? el("div", { class: "muted" }, "Forked from ", link(`#/containers/${verdict.forked_from}`, verdict.forked_from)) : null),
    el("p", {}, exportLink, " ", exportNote),
    el("h2", {}, plural(chain.length, "execution")),
    el("table", { id: "chain" },
      el("thead", {}, el("tr", {}, ["#", "execution", "started (UTC)", "status", "outcome", "tools"].map((h) => el("th", {}, h)))),
      el("tbody", {}, chain)));
}

async function route() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, query] = hash.split("?");
  const mine = ++navigation;
  main.dataset.shown = "";
  try {
    const execution = path.match(/^\/executions\/([\w-]+)$/);
    const container = path.match(/^\/containers\/([\w-]+)$/);
    if (execution) await executionPage(execution[1]);
    else if (container) await containerPage(container[1]);
    else await listPage(new URLSearchParams(query || ""));
  } catch (error) {
    if (error instanceof Superseded || mine !== navigation) return;
    failure(error);
  }
  if (mine === navigation) main.dataset.shown = hash;
}

document.getElementById("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = document.getElementById("key");
  if (input.value) sessionStorage.setItem(KEY, input.value);
  else sessionStorage.removeItem(KEY);
  input.value = "";
  route();
});
window.addEventListener("hashchange", route);
route();
