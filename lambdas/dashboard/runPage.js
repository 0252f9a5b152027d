/* global document, setTimeout, clearTimeout, AbortController */
// One run (`#/runs/<run_id>`, `GET /runs/{id}`): its status, trigger, version and timings, its
// parameters (secret-looking ones hidden), result, log, error and artifacts. A run still queued
// or running is followed live (its events: status and log as they happen), or, where the events
// cannot be followed, fetched again every few seconds until it ends.
import { artifactsView } from "./artifactList.js";
import { dateTime, duration, fields, fill, h, jsonText, section, statusBadge } from "./dom.js";
import { runErrorView } from "./runError.js";
import { followRunEvents } from "./runEvents.js";
import { runResultView } from "./runResult.js";
import { hideSecrets } from "./secretParams.js";
import { liveView } from "./liveView.js";
import { replayView } from "./replayView.js";

const POLL_MS = 2000;
const FINAL = ["succeeded", "failed", "timed_out", "canceled"];

export async function renderRunPage(view, api, runId, lifetime) {
  document.title = `Run ${runId} · browserfn`;
  const run = await api.run(runId);
  if (FINAL.includes(run.status)) return fill(view, ...(await endedSections(api, run, lifetime)));
  const artifacts = h("p", { class: "muted", id: "run-artifacts" }, "Shown once the run has ended.");
  fill(view, ...runSections(run, artifacts, lifetime, api, liveView(api, runId, lifetime)));
  followLive(view, api, runId, lifetime);
}

/** The page of a run that has ended: its artifacts, and the replay of its recording when it kept one. */
async function endedSections(api, run, lifetime) {
  const [artifacts, listed] = await Promise.all([artifactsView(api, run.run_id, lifetime), api.artifacts(run.run_id).catch(() => null)]);
  const items = (Array.isArray(listed?.items) ? listed.items : []).filter((item) => item && typeof item.name === "string");
  return runSections(run, artifacts, lifetime, api, null, replayView(api, run, items, lifetime));
}

/**
 * While the run goes on: its status badge and log as its events come (the log text is appended
 * as text), then the whole page again once it ended. Polls instead when the events fail.
 */
function followLive(view, api, runId, lifetime) {
  const controller = new AbortController();
  lifetime.onLeave(() => controller.abort());
  const onEvent = ({ event, data }) => {
    if (lifetime.left) return;
    if (event === "status") view.querySelector("#run-status")?.replaceWith(statusBadgeOf(data));
    if (event !== "log") return;
    const log = view.querySelector("#run-log");
    if (log?.tagName === "PRE") log.append(data.text);
    else log?.replaceWith(h("pre", { id: "run-log", class: "log" }, data.text));
  };
  followRunEvents(api, runId, { signal: controller.signal, onEvent })
    .then(async (ended) => {
      if (!ended || lifetime.left) return;
      const run = await api.run(runId);
      const sections = await endedSections(api, run, lifetime);
      if (!lifetime.left) fill(view, ...sections);
    })
    .catch(() => {
      if (!lifetime.left) followRun(view, api, runId, lifetime);
    });
}

/** Fetches the run again until it has ended, then renders the page again (with its artifacts). */
function followRun(view, api, runId, lifetime) {
  let timer = null;
  lifetime.onLeave(() => clearTimeout(timer));
  const poll = async () => {
    if (lifetime.left) return;
    try {
      const run = await api.run(runId);
      if (lifetime.left) return;
      if (FINAL.includes(run.status)) return fill(view, ...(await endedSections(api, run, lifetime)));
      view.querySelector("#run-status")?.replaceWith(statusBadgeOf(run));
    } catch {
      // A failed poll is tried again; the page keeps what it shows.
    }
    timer = setTimeout(poll, POLL_MS);
  };
  timer = setTimeout(poll, POLL_MS);
}

function statusBadgeOf(run) {
  const badge = statusBadge(run.status);
  badge.id = "run-status";
  return badge;
}

function runSections(run, artifacts, lifetime, api, live = null, replay = null) {
  const fn = String(run.function_name ?? "");
  return [
    h("p", { class: "crumbs" }, h("a", { href: "#/functions" }, "Functions"), " / ", fn ? h("a", { href: `#/functions/${encodeURIComponent(fn)}`, id: "run-function" }, fn) : "?", " / run"),
    h("h1", { id: "run-title" }, "Run ", h("code", { class: "run-id" }, String(run.run_id)), " ", statusBadgeOf(run), " ", cancelButton(run, api)),
    live ? h("section", { class: "card", id: "run-live" }, h("h2", {}, "Live view"), live) : null,
    h("div", { class: "columns" }, section("Run", runFields(run)), section("Timings", timingFields(run))),
    run.error ? section("Error", runErrorView(run.error)) : null,
    replay ? h("section", { class: "card", id: "run-replay" }, h("h2", {}, "Replay"), replay) : null,
    section("Parameters", h("pre", { id: "run-params" }, jsonText(hideSecrets(run.params ?? {})))),
    section("Result", ...runResultView(run, lifetime)),
    section("Log", typeof run.logs === "string" && run.logs !== "" ? h("pre", { id: "run-log", class: "log" }, run.logs) : h("p", { class: "muted", id: "run-log" }, logAbsence(run))),
    section("Artifacts", artifacts),
  ];
}

/** While the run goes on: Cancel (POST /runs/{id}/cancel), then the page as the run ended. */
function cancelButton(run, api) {
  if (FINAL.includes(run.status)) return null;
  const button = h("button", { type: "button", id: "run-cancel", class: "danger" }, "Cancel run");
  button.addEventListener("click", async () => {
    button.disabled = true;
    button.textContent = "Canceling…";
    try {
      await api.cancelRun(run.run_id);
    } catch (error) {
      button.replaceWith(h("span", { class: "error", role: "alert", id: "run-cancel-error" }, `${error.code ?? "error"}: ${error.message}`));
      return;
    }
    // The live view (or the poll) renders the ended run; this is for a page that follows neither.
    button.textContent = "Canceled";
  });
  return button;
}

function logAbsence(run) {
  if (run.logs === undefined) return "This API does not return the run's log.";
  return "Nothing was logged.";
}

function runFields(run) {
  return fields([
    ["status", statusBadge(run.status)],
    ["function", h("code", {}, String(run.function_name ?? run.function_id ?? "?"))],
    ["version", String(run.version ?? "—")],
    ["trigger", String(run.trigger ?? "—")],
    ...attemptFields(run),
    ["run_id", h("code", {}, String(run.run_id))],
  ]);
}

/** A run that may be retried: which attempt it is, how each one before ended, and when the next starts. */
function attemptFields(run) {
  if (!(Number(run.max_attempts) > 1)) return [];
  const ended = Array.isArray(run.attempts) ? run.attempts.map((a) => `${a.attempt}: ${a.status}${a.error ? ` (${a.error.code})` : ""}`) : [];
  const next = run.status === "queued" && run.retry_at ? [`; attempt ${run.attempt} starts `, dateTime(run.retry_at)] : [];
  return [["attempt", [`${run.attempt} of ${run.max_attempts}`, ended.length > 0 ? ` — ${ended.join(", ")}` : "", ...next]]];
}

function timingFields(run) {
  const waited = run.queued_at && run.started_at ? Date.parse(run.started_at) - Date.parse(run.queued_at) : null;
  return h(
    "div",
    { id: "run-timings" },
    fields([
      ["queued", dateTime(run.queued_at)],
      ["started", [dateTime(run.started_at), waited !== null && Number.isFinite(waited) ? ` (after ${duration(waited)})` : ""]],
      ["finished", dateTime(run.finished_at)],
      ["duration", duration(run.duration_ms)],
      ["browser time", typeof run.browser_ms === "number" ? duration(run.browser_ms) : "—"],
      ["peak memory", typeof run.peak_memory_mb === "number" ? `${run.peak_memory_mb} MB` : "—"],
    ]),
  );
}
