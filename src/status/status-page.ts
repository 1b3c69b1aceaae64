import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/**
 * `GET /`: what the exporter sees, for a person with a browser. The page is a fixed shell; its script renders
 * `/api/v1/status` and does so again every few seconds without reloading. Everything is inline and allowed by
 * hash in a strict Content-Security-Policy: nothing is fetched from another origin, nothing else may run.
 */

const STYLE = `
:root { color-scheme: light dark; --bad: #c62828; --bad-bg: #fdecea; --ok: #2e7d32; --ok-bg: #e8f5e9; --warn: #a86400; --warn-bg: #fff4e0; --muted: #666; --line: #ddd; }
@media (prefers-color-scheme: dark) { :root { --bad-bg: #3b1a1a; --ok-bg: #16301a; --warn-bg: #3a2a10; --muted: #aaa; --line: #444; } }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; padding: 0 12px 24px; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 6px 16px; padding: 12px 0; border-bottom: 1px solid var(--line); }
header h1 { font-size: 20px; margin: 0; }
nav a { margin-right: 12px; }
h2 { font-size: 17px; margin: 20px 0 8px; }
.muted { color: var(--muted); }
.pill { white-space: nowrap; display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600; font-size: 12px; }
.pill.ok { background: var(--ok-bg); color: var(--ok); }
.pill.bad { background: var(--bad-bg); color: var(--bad); }
.pill.pending { background: var(--warn-bg); color: var(--warn); }
.card { border: 1px solid var(--line); border-left: 5px solid var(--ok); border-radius: 6px; padding: 10px 12px; margin: 10px 0; }
.card.bad { border-left-color: var(--bad); }
.card.pending { border-left-color: var(--warn); }
.card h3 { font-size: 16px; margin: 0 0 4px; word-break: break-all; }
.facts { display: flex; flex-wrap: wrap; gap: 2px 18px; margin: 4px 0 8px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); }
tr.bad td { background: var(--bad-bg); }
td.num { white-space: nowrap; }
.scroll + .scroll { margin-top: 14px; }
span.err { color: var(--bad); font-weight: 600; }
td.err { color: var(--bad); word-break: break-word; }
#banner { display: none; margin: 10px 0; padding: 8px 12px; border-radius: 6px; background: var(--bad-bg); color: var(--bad); }
#banner.show { display: block; }
@media (max-width: 640px) { th.wide, td.wide, .wide-inline { display: none; } body { padding: 0 8px 16px; } }
`;

const SCRIPT = `
"use strict";
const REFRESH_MS = 5000;
const ICON = (fill) => "data:image/svg+xml," + '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="' + fill + '"/></svg>';
const esc = (v) => String(v ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const utc = (iso) => iso ? iso.replace("T", " ").replace(/\\.\\d+Z$/, "Z").replace(/Z$/, " UTC") : "";
function ago(iso) {
  if (!iso) return "never";
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  const abs = Math.abs(s);
  const text = abs < 90 ? abs + " s" : abs < 5400 ? Math.round(abs / 60) + " min" : abs < 172800 ? Math.round(abs / 3600) + " h" : Math.round(abs / 86400) + " d";
  return s >= 0 ? text + " ago" : "in " + text;
}
const when = (iso) => iso ? '<span title="' + esc(utc(iso)) + '">' + esc(ago(iso)) + '</span> <span class="muted wide-inline">' + esc(utc(iso)) + "</span>" : '<span class="muted">never</span>';
const num = (n) => n === null || n === undefined ? "-" : Number(n).toLocaleString("en-US");
const pill = (state, text) => '<span class="pill ' + state + '">' + esc(text) + "</span>";

function collectorRow(c) {
  const partly = c.success && c.objects && c.objects.failed > 0;
  const state = c.success === null ? "pending" : partly ? "partial" : c.success ? "ok" : "bad";
  const status = c.success === null ? pill("pending", "not polled yet")
    : partly ? pill("bad", c.objects.failed + " of " + c.objects.total + " objects failed: " + (c.objects.last_reason || "error"))
    : c.success ? pill("ok", "ok") : pill("bad", "FAILING: " + (c.reason || "error"));
  return '<tr class="' + (state === "bad" ? "bad" : "") + '" data-collector="' + esc(c.name) + '" data-state="' + state + '">' +
    "<td>" + esc(c.name) + "</td><td>" + status + "</td><td>" + when(c.last_poll) + "</td>" +
    '<td class="wide num">' + (c.duration_seconds === null ? "-" : c.duration_seconds.toFixed(2) + " s") + '</td><td class="wide">' + num(c.series) + "</td>" +
    '<td class="err">' + esc(c.error || (partly ? c.objects.last_error : "") || "") + (c.interval_reason ? '<div class="muted">every ' + esc(String(c.interval_seconds)) + " s: " + esc(c.interval_reason) + "</div>" : "") + "</td></tr>";
}

function serverCard(s) {
  const failing = s.collectors.filter((c) => c.success === false);
  const state = s.up === null ? "pending" : !s.up || failing.length ? "bad" : "ok";
  const upText = s.up === null ? pill("pending", "not polled yet") : s.up ? pill("ok", "UP") : pill("bad", "DOWN");
  const labels = Object.entries(s.labels).map(([k, v]) => esc(k) + "=" + esc(v)).join(", ");
  return '<section class="card ' + state + '" data-server="' + esc(s.name) + '" data-up="' + s.up + '">' +
    "<h3>" + esc(s.name) + " " + upText + (failing.length ? " " + pill("bad", failing.length + " collector" + (failing.length > 1 ? "s" : "") + " failing") : "") + "</h3>" +
    (s.down_reason ? '<div class="err" data-down-reason>' + esc(s.down_reason) + (s.down_fix ? '<div class="muted">fix: ' + esc(s.down_fix) + "</div>" : "") + "</div>" : "") +
    '<div class="facts"><span class="muted">' + esc(s.url) + "</span>" +
    (s.version ? "<span>Wowza " + esc(s.version) + (s.build ? " (build " + esc(s.build) + ")" : "") + "</span>" : "") +
    (s.license_type ? "<span>licence " + esc(s.license_type) + (s.license_expires ? ", expires " + esc(s.license_expires) : "") + "</span>" : "") +
    (s.streams !== null ? "<span>" + num(s.streams) + " streams exported" + (s.streams_dropped ? ", " + num(s.streams_dropped) + " dropped by the cap" : "") + "</span>" : "") +
    "<span>viewers from " + (s.viewers_from.source === "connectioncounts" ? "connectioncounts" + (s.viewers_from.detected ? " (found at the default address)" : "") : "REST, one request per stream") + "</span>" +
    (labels ? "<span>" + labels + "</span>" : "") + "</div>" +
    '<div class="scroll"><table><thead><tr><th>collector</th><th>state</th><th>last poll</th><th class="wide">took</th><th class="wide">series</th><th>error</th></tr></thead><tbody>' +
    s.collectors.map(collectorRow).join("") + "</tbody></table></div>" + recordersTable(s.recorders) + targetsTable(s.stream_targets) + "</section>";
}

function recordersTable(list) {
  if (!list || list.length === 0) return "";
  const rows = list.map((r) => {
    const bad = !r.recording || r.error;
    return '<tr class="' + (bad ? "bad" : "") + '" data-recorder="' + esc(r.application + "/" + r.recorder) + '"><td>' + esc(r.application) + "</td><td>" + esc(r.recorder) + "</td><td>" +
      (r.recording ? pill("ok", r.state) : pill("bad", r.state)) + '</td><td class="num">' + (r.duration_seconds === null ? "-" : Math.round(r.duration_seconds) + " s") +
      '</td><td class="num wide">' + (r.size_bytes === null ? "-" : num(r.size_bytes)) + '</td><td class="err">' + esc(r.error || "") + "</td></tr>";
  }).join("");
  return '<div class="scroll"><table class="recorders"><thead><tr><th>application</th><th>recorder</th><th>state</th><th>duration</th><th class="wide">size (bytes)</th><th>error</th></tr></thead><tbody>' + rows + "</tbody></table></div>";
}

function targetsTable(list) {
  if (!list || list.length === 0) return "";
  const rows = list.map((t) => {
    const bad = t.enabled && !t.active;
    return '<tr class="' + (bad ? "bad" : "") + '" data-target="' + esc(t.application + "/" + t.entry) + '"><td>' + esc(t.application) + "</td><td>" + esc(t.entry) + "</td><td>" + esc(t.source_stream) +
      "</td><td>" + esc(t.profile) + " " + esc(t.host) + "</td><td>" + (t.active ? pill("ok", t.status) : t.enabled ? pill("bad", t.status) : pill("pending", "disabled")) + "</td></tr>";
  }).join("");
  return '<div class="scroll"><table class="targets"><thead><tr><th>application</th><th>stream target</th><th>source</th><th>destination</th><th>status</th></tr></thead><tbody>' + rows + "</tbody></table></div>";
}

/** As the WowzaLogDeliveryStalled alert: lines read this long ago and not yet delivered everywhere. */
const STALL_SECONDS = 120;

function logsSection(logs) {
  if (!logs) return "";
  const followers = logs.followers.map((f) => '<tr class="' + (f.failing ? "bad" : "") + '" data-follower="' + esc(f.server + "/" + f.log_type) + '">' +
    "<td>" + esc(f.server) + "</td><td>" + esc(f.log_type) + "</td><td>" + num(f.offset_bytes) + "</td><td>" + (f.lag_seconds === null ? "-" : Math.round(f.lag_seconds) + " s") + "</td>" +
    "<td>" + (f.backlog_bytes === null ? "-" : f.backlog_bytes === 0 ? "caught up" : "~" + num(f.backlog_lines) + " lines (" + num(f.backlog_bytes) + " bytes), ~" + Math.round(f.catch_up_seconds || 0) + " s") + "</td>" +
    '<td class="' + (f.oldest_unacked_seconds > STALL_SECONDS ? "err" : "") + '">' + Math.round(f.oldest_unacked_seconds) + " s</td>" +
    '<td class="wide">' + num(f.rotations) + (f.rotation_gaps ? ' <span class="pill bad">' + num(f.rotation_gaps) + " lost</span>" : "") + "</td>" +
    '<td class="err">' + (f.last_error ? (f.failing ? "FAILING: " : "recovered, last error ") + esc(f.last_error) + " (" + esc(ago(f.last_error_at)) + ")" : "") + "</td></tr>").join("");
  const sinks = logs.sinks.map((k) => '<tr class="' + (k.dead_lettered_lines ? "bad" : "") + '" data-sink="' + esc(k.name) + '"><td>' + esc(k.name) + "</td><td>" + num(k.queue_lines) + "</td><td>" + num(k.forwarded_lines) + "</td><td>" + num(k.failures) + "</td><td>" + num(k.dead_lettered_lines) + "</td></tr>").join("");
  return '<h2>Log shipping</h2><div class="scroll"><table id="followers"><thead><tr><th>server</th><th>log</th><th>offset (bytes)</th><th>lag</th><th title="log not read yet, and the time to read it at the recent pace (bounded by the request budget of the server)">backlog</th><th title="age of the oldest line read and not yet acknowledged by every sink">oldest unsent</th><th class="wide">rotations</th><th>last read error</th></tr></thead><tbody>' + (followers || '<tr><td colspan="8" class="muted">no followers</td></tr>') + "</tbody></table></div>" +
    '<div class="scroll"><table id="sinks"><thead><tr><th>sink</th><th>queued</th><th>forwarded</th><th>failed attempts</th><th>dead-lettered</th></tr></thead><tbody>' + sinks + "</tbody></table></div>";
}

function webhooksSection(w) {
  if (!w) return "";
  const rejected = Object.entries(w.rejected).filter(([, n]) => n > 0).map(([r, n]) => esc(r) + ": " + num(n)).join(", ");
  const events = w.events.map((e) => "<tr><td>" + esc(e.server) + "</td><td>" + esc(e.event) + "</td><td>" + num(e.count) + "</td></tr>").join("");
  return '<h2>Webhooks</h2><div class="facts" id="webhooks">' +
    (w.auth === "none" ? '<span class="err">UNAUTHENTICATED: anyone who reaches this port can post events (webhooks.insecure_allow_unauthenticated)</span>' : '<span class="muted">auth: ' + esc(w.auth) + "</span>") +
    "<span>last event: " + (w.last_event ? esc(w.last_event.name) + " from " + esc(w.last_event.server) + ", " + when(w.last_event.at) : '<span class="muted">none yet</span>') + "</span>" +
    '<span class="' + (rejected ? "err" : "muted") + '">rejected: ' + (rejected || "none") + "</span></div>" +
    (events ? '<div class="scroll"><table><thead><tr><th>server</th><th>event</th><th>count</th></tr></thead><tbody>' + events + "</tbody></table></div>" : "");
}

function videoSection(v) {
  if (!v) return "";
  const rows = v.schedules.map((s) => "<tr><td>" + esc(s.name || s.id) + "</td><td>" + (s.enabled ? pill("ok", s.state) : pill("pending", s.state)) + "</td><td>" + when(s.next_start) + "</td><td>" + when(s.next_stop) + "</td></tr>").join("");
  return '<h2>Wowza Video schedules</h2><div id="video"><div class="facts"><span>last poll ' + when(v.last_poll) + "</span>" + (v.success === false ? '<span class="err">FAILING: ' + esc(v.reason) + ": " + esc(v.error) + "</span>" : "") + "</div>" +
    '<div class="scroll"><table><thead><tr><th>schedule</th><th>state</th><th>next start</th><th>next stop</th></tr></thead><tbody>' + (rows || '<tr><td colspan="4" class="muted">no schedules</td></tr>') + "</tbody></table></div></div>";
}

let last;
function render() {
  if (!last) return;
  const e = last.exporter;
  document.getElementById("meta").innerHTML = "v" + esc(e.version) + " · " + (e.ready ? pill("ok", "ready") : pill("pending", "first poll running")) +
    (e.shard ? " · shard " + e.shard.index + "/" + e.shard.count : "") +
    (e.config_last_reload_successful ? "" : " · " + pill("bad", "last config reload refused")) +
    ' · <span class="muted">updated ' + esc(ago(last.generated_at)) + "</span>";
  const servers = last.servers.length ? last.servers.map(serverCard).join("") : '<p class="muted">No Wowza server is polled: /probe only (or the target files list none yet).</p>';
  const html = "<h2>Servers (" + last.servers.length + ")</h2>" + servers + logsSection(last.logs) + webhooksSection(last.webhooks) + videoSection(last.video);
  const main = document.getElementById("main");
  if (main.innerHTML !== html) main.innerHTML = html;
  // The tab's icon says it too, for a tab left open among others.
  const bad = last.servers.some((s) => s.up === false || s.collectors.some((c) => c.success === false)) || (last.logs && last.logs.followers.some((f) => f.failing));
  const icon = document.getElementById("icon");
  const href = ICON(bad ? "%23c62828" : "%232e7d32");
  if (icon.getAttribute("href") !== href) icon.setAttribute("href", href);
}

async function refresh() {
  const banner = document.getElementById("banner");
  try {
    const res = await fetch("api/v1/status", { cache: "no-store", headers: { accept: "application/json" } });
    if (!res.ok) throw new Error("HTTP " + res.status);
    last = await res.json();
    banner.className = "";
  } catch (err) {
    banner.textContent = "Cannot reach the exporter (" + err.message + "): showing what it said last.";
    banner.className = "show";
  }
  render();
}
refresh();
setInterval(refresh, REFRESH_MS);
setInterval(render, 1000);
`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Only the inline script and style of this page, and requests to this origin. */
export const STATUS_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${hash(SCRIPT)}`,
  `style-src ${hash(STYLE)}`,
  "connect-src 'self'",
  // The tab icon is a data: URL the script colours (without one the browser asks for /favicon.ico).
  "img-src data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function page(links: ReadonlyArray<{ path: string; text: string }>): string {
  const nav = links.map((l) => `<a href="${l.path}">${l.text}</a>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Wowza Exporter</title><link id="icon" rel="icon" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Ccircle cx='8' cy='8' r='7' fill='%23999'/%3E%3C/svg%3E"><style>${STYLE}</style></head>
<body><header><h1>Wowza Exporter</h1><span id="meta" class="muted">loading…</span><nav>${nav}</nav></header>
<div id="banner" role="alert"></div>
<main id="main"><noscript>This page needs JavaScript; <a href="api/v1/status">api/v1/status</a> has the same state as JSON.</noscript></main>
<script>${SCRIPT}</script></body></html>
`;
}

const FAVICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#999"/></svg>';

/**
 * `/favicon.ico`: browsers ask for it whatever the page declares (headless Chromium does on the first load), and a
 * 404 there is an error in every console. The neutral icon; the page colours its own.
 */
export function sendFavicon(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'image/svg+xml', 'content-length': Buffer.byteLength(FAVICON), 'cache-control': 'max-age=86400' });
  res.end(FAVICON);
}

/** Sends the status page with its security headers. */
export function sendStatusPage(res: ServerResponse, links: ReadonlyArray<{ path: string; text: string }>): void {
  const body = page(links);
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'content-security-policy': STATUS_PAGE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  });
  res.end(body);
}
