/* global document */
// The account's metered usage in a month, its plan's limits and what remains of them.
import { duration, errorBox, fields, h, section, stat, table } from "./dom.js";

const number = (n) => (typeof n === "number" ? n.toLocaleString() : "—");
const megabytes = (bytes) => (typeof bytes === "number" ? `${(bytes / 1024 / 1024).toLocaleString(undefined, { maximumFractionDigits: 1 })} MB` : "—");

export async function renderUsagePage(view, api) {
  document.title = "Usage · browserfn";
  const first = await api.usage(null);
  const month = h("input", { id: "usage-month", type: "month", value: first.month });
  const body = h("div", { id: "usage" }, usageSections(first));
  month.addEventListener("change", async () => {
    if (!month.value) return;
    try {
      body.replaceChildren(...usageSections(await api.usage(month.value)));
    } catch (error) {
      body.replaceChildren(errorBox(error));
    }
  });
  view.replaceChildren(
    h("h1", {}, "Usage"),
    h("p", {}, h("label", { for: "usage-month" }, "Month "), month, h("span", { class: "muted" }, ` · account ${first.account} · plan ${first.plan}`)),
    body,
  );
}

function usageSections(usage) {
  const limits = usage.limits;
  const remaining = usage.remaining;
  return [
    section(
      `Total in ${usage.month}`,
      h(
        "div",
        { class: "stats", id: "usage-total" },
        stat("invocations", number(usage.total.invocations), "usage-invocations"),
        stat("execution", duration(usage.total.execution_ms), "usage-execution"),
        stat("GB-seconds", number(usage.total.gb_seconds), "usage-gb-seconds"),
        stat("browser sessions", duration(usage.total.browser_session_ms), "usage-browser"),
      ),
    ),
    section(
      "By function",
      usage.functions.length === 0
        ? h("p", { class: "muted", id: "usage-functions" }, "No runs this month.")
        : table(
            ["Function", "Invocations", "Execution", "GB-seconds", "Browser sessions"],
            usage.functions.map((fn) => [
              fn.name ? h("a", { href: `#/functions/${encodeURIComponent(fn.name)}` }, fn.name) : h("span", { class: "muted" }, `${fn.function_id} (deleted)`),
              number(fn.invocations),
              duration(fn.execution_ms),
              number(fn.gb_seconds),
              duration(fn.browser_session_ms),
            ]),
            { id: "usage-functions" },
          ),
    ),
    section(
      `Plan: ${usage.plan}`,
      limits
        ? fields([
            ["invocations per month", `${number(limits.invocations_per_month)}${remaining ? ` (${number(remaining.invocations)} left)` : ""}`],
            ["concurrent runs", `${number(limits.concurrency)}${remaining ? ` (${number(remaining.concurrency)} free now)` : ""}`],
            ["longest timeout", `${number(limits.max_timeout_seconds)} s`],
            ["most memory", `${number(limits.max_memory_mb)} MB`],
            ["storage", `${megabytes(usage.storage_bytes)} of ${megabytes(usage.max_storage_bytes)} held`],
          ])
        : h("p", { class: "muted" }, "This plan is not configured."),
    ),
  ];
}
