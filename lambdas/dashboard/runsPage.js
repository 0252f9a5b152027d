/* global document */
// The account's runs (`#/runs`, `GET /runs`): newest first, across its functions, filtered by
// function, status and trigger; "More" loads the next page (next_cursor).
import { dateTime, duration, fill, h, runLink, section, statusBadge, table } from "./dom.js";

const STATUSES = ["queued", "running", "succeeded", "failed", "timed_out", "canceled"];
const TRIGGERS = ["http", "schedule", "mcp", "batch"];

export async function renderRunsPage(view, api, lifetime) {
  document.title = "Runs · browserfn";
  const filters = { function: "", status: "", trigger: "" };
  const body = h("div", { id: "runs-list" });
  const select = (name, options, label) =>
    h(
      "label",
      {},
      `${label} `,
      h("select", { name, id: `runs-${name}` }, h("option", { value: "" }, "any"), options.map((option) => h("option", { value: option }, option))),
    );
  const form = h(
    "form",
    { id: "runs-filters", class: "filters" },
    h("label", {}, "function ", h("input", { name: "function", id: "runs-function", placeholder: "name or fn_…", autocomplete: "off" })),
    select("status", STATUSES, "status"),
    select("trigger", TRIGGERS, "trigger"),
    h("button", { type: "submit" }, "Filter"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    for (const name of Object.keys(filters)) filters[name] = form.elements[name].value.trim();
    void load(null);
  });
  fill(view, h("h1", {}, "Runs"), section("The account's runs, newest first", form, body));

  const rows = [];
  async function load(cursor) {
    if (!cursor) rows.length = 0;
    let page;
    try {
      page = await api.listRuns({ ...filters, cursor });
    } catch (error) {
      if (!lifetime.left) body.replaceChildren(h("p", { class: "error", role: "alert", id: "runs-error" }, `${error.status ?? ""} ${error.code ?? ""}: ${error.message}`));
      return;
    }
    if (lifetime.left) return;
    rows.push(...page.items.map(runRow));
    const more = page.next_cursor ? h("button", { type: "button", id: "runs-more" }, "More") : null;
    more?.addEventListener("click", () => void load(page.next_cursor));
    body.replaceChildren(
      rows.length > 0 ? table(["run", "function", "status", "started", "duration", "trigger", "error"], rows, { id: "runs-table" }) : h("p", { class: "muted", id: "runs-empty" }, "No runs."),
      ...(more ? [more] : []),
    );
  }
  await load(null);
}

function runRow(run) {
  return [
    runLink(run.run_id),
    h("a", { href: `#/functions/${encodeURIComponent(run.function_name)}` }, run.function_name),
    statusBadge(run.status),
    dateTime(run.started_at ?? run.queued_at),
    duration(run.duration_ms),
    run.trigger,
    run.error ? `${run.error.code}: ${run.error.message}` : "",
  ];
}
