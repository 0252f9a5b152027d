/* global document */
// One function: its record, schedule, secrets, invoke form, metrics and duration chart, logs,
// and the code of each version.
import { durationChart } from "./durationChart.js";
import { dateTime, duration, errorBox, fields, fill, h, jsonText, runLink, section, stat, statusBadge, table } from "./dom.js";
import { invokeForm } from "./invokeForm.js";
import { secretsView } from "./secretList.js";
import { hideSecrets } from "./secretParams.js";

const LOG_LIMIT = 50;

export async function renderFunctionPage(view, api, name) {
  document.title = `${name} · browserfn`;
  const [record, versions, secrets] = await Promise.all([api.info(name), api.versions(name), secretsView(api, name)]);
  const activity = h("div", { id: "activity" });
  const refresh = async () => {
    try {
      activity.replaceChildren(...(await activitySections(api, name)));
    } catch (error) {
      activity.replaceChildren(errorBox(error));
    }
  };
  await refresh();
  fill(
    view,
    h("p", { class: "crumbs" }, h("a", { href: "#/functions" }, "Functions"), " / "),
    h("h1", { id: "function-name" }, record.name, " ", statusBadge(record.status)),
    record.description ? h("p", { id: "function-description", class: "lead" }, record.description) : null,
    warningsBox(record),
    h(
      "div",
      { class: "columns" },
      section("Record", recordFields(record)),
      section("Schedule", scheduleFields(record)),
    ),
    section("Secrets", secrets),
    section("Invoke", invokeForm(api, record, refresh)),
    activity,
    section("Code", versionsView(api, name, record, versions.items)),
  );
}

/** The latest version's code warnings (it deploys, but probably fails when it runs); nothing when there are none. */
function warningsBox(record) {
  const warnings = record.warnings ?? [];
  if (warnings.length === 0) return null;
  return h(
    "div",
    { id: "code-warnings", class: "warnings", role: "note" },
    h("strong", {}, `Version ${record.latest_version} will probably fail when it runs:`),
    h(
      "ul",
      {},
      warnings.map((warning) => h("li", { class: "code-warning", "data-line": String(warning.line) }, h("code", {}, warning.code), " ", warning.message)),
    ),
  );
}

function recordFields(record) {
  return fields([
    ["function_id", h("code", {}, record.function_id)],
    ["url", h("code", {}, record.url)],
    ["status", [statusBadge(record.status), record.status_reason ? ` ${record.status_reason}` : ""]],
    ["latest version", record.latest_version],
    ["versions", record.versions.join(", ")],
    ["timeout", `${record.timeout_seconds} s`],
    ["memory", `${record.memory_mb} MB`],
    ["shared", record.shared ? "yes: every account can read and fork it" : "no"],
    ["forked from", record.reference_workflow_id ? h("code", {}, record.reference_workflow_id) : "—"],
    ["created", dateTime(record.created_at)],
    ["updated", dateTime(record.updated_at)],
  ]);
}

function scheduleFields(record) {
  if (!record.schedule) return h("p", { id: "schedule", class: "muted" }, "No schedule: it runs when called.");
  return h(
    "div",
    { id: "schedule" },
    fields([
      ["schedule", h("code", {}, record.schedule)],
      ["time zone", record.schedule_timezone],
      ["next run", dateTime(record.next_run_at)],
      ["parameters", record.schedule_params ? h("pre", {}, jsonText(hideSecrets(record.schedule_params))) : "the automation's defaults"],
    ]),
  );
}

/** Metrics, the chart and the logs table: fetched again after each invocation. */
async function activitySections(api, name) {
  const [metrics, logs] = await Promise.all([api.metrics(name), api.logs(name, LOG_LIMIT)]);
  return [
    section(
      "Metrics",
      h(
        "div",
        { class: "stats", id: "metrics" },
        stat("calls", String(metrics.total_calls), "total-calls"),
        stat("success rate", `${metrics.success_rate}%`, "success-rate"),
        stat("mean duration", duration(metrics.avg_duration), "avg-duration"),
        stat("p50", duration(metrics.p50_duration), "p50-duration"),
        stat("p95", duration(metrics.p95_duration), "p95-duration"),
        stat("failed / timed out", `${metrics.failed_calls ?? 0} / ${metrics.timed_out_calls ?? 0}`, "failures"),
        stat("last called", dateTime(metrics.last_called_at), "last-called"),
      ),
      h("h3", {}, `Durations of the last ${LOG_LIMIT} runs`),
      durationChart(logs.items),
    ),
    section(
      "Logs",
      logs.items.length === 0
        ? h("p", { class: "muted", id: "logs" }, "No runs yet.")
        : table(
            ["Time", "Status", "Duration", "Version", "Trigger", "Run", "Error"],
            logs.items.map((entry) => [
              dateTime(entry.timestamp),
              statusBadge(entry.status),
              duration(entry.duration),
              entry.version,
              entry.trigger,
              runLink(entry.run_id),
              entry.error ? `${entry.error.code}: ${entry.error.message}` : "",
            ]),
            { id: "logs", class: "stack" },
          ),
    ),
  ];
}

/** The versions, and the code of the one chosen (the latest first). */
function versionsView(api, name, record, versions) {
  const code = h("pre", { id: "code", class: "code" }, h("code", {}, "Loading…"));
  const meta = h("p", { class: "muted small", id: "code-meta" });
  const buttons = new Map();
  async function show(version) {
    for (const [v, button] of buttons) button.setAttribute("aria-pressed", String(v === version));
    try {
      const found = await api.version(name, version);
      meta.replaceChildren(`version ${found.version} · ${found.variables.length} parameter(s) · sha256 ${found.code_sha256.slice(0, 12)}… · `, dateTime(found.created_at));
      code.replaceChildren(h("code", {}, found.code));
    } catch (error) {
      code.replaceChildren(errorBox(error));
    }
  }
  const list = h(
    "div",
    { class: "versions", role: "group", "aria-label": "Versions" },
    [...versions].reverse().map((info) => {
      const button = h("button", { type: "button", class: "version", "data-version": info.version, on: { click: () => show(info.version) } }, `v${info.version}`);
      buttons.set(info.version, button);
      return button;
    }),
  );
  show(record.latest_version);
  return [list, meta, code];
}
