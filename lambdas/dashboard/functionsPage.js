/* global document, IntersectionObserver */
// The account's functions, in name order, a page of 50 at a time, each with its last run.
import { dateTime, fill, h, section, statusBadge, table } from "./dom.js";

/** Last-run look-ups (`GET /functions/{ref}/logs?limit=1`) in flight at once. */
const PARALLEL = 4;

export async function renderFunctionsPage(view, api, lifetime) {
  document.title = "Functions · browserfn";
  const first = await api.listFunctions(null);
  const body = h("tbody");
  const more = h("button", { type: "button", class: "secondary" }, "More");
  const lastRuns = lastRunLoader(api, lifetime);
  let cursor = first.next_cursor;

  const addRows = (items) => {
    for (const fn of items) {
      body.append(
        h(
          "tr",
          {},
          h("td", {}, h("a", { href: `#/functions/${encodeURIComponent(fn.name)}`, class: "function-link" }, fn.name)),
          h("td", {}, statusBadge(fn.status)),
          lastRuns.cell(fn),
          h("td", { class: "num" }, fn.latest_version),
          h("td", {}, fn.schedule ? h("code", {}, fn.schedule) : "—"),
          h("td", {}, fn.shared ? "shared" : "private"),
          h("td", {}, dateTime(fn.updated_at)),
          h("td", { class: "description" }, fn.description ?? ""),
        ),
      );
    }
    more.hidden = !cursor;
  };
  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      const page = await api.listFunctions(cursor);
      cursor = page.next_cursor;
      addRows(page.items);
    } finally {
      more.disabled = false;
    }
  });

  const list = table(["Name", "Status", "Last run", "Version", "Schedule", "Sharing", "Updated", "Description"], [], { id: "functions" });
  list.querySelector("tbody").replaceWith(body);
  addRows(first.items);
  fill(
    view,
    h("h1", {}, "Functions"),
    section(
      "In name order",
      first.items.length === 0
        ? h("p", { class: "muted" }, "No functions yet. Create one with POST /functions (see docs/api.md).")
        : [list, more],
    ),
  );
}

/** A last run: its status, and its time linking to its page. */
function lastRunView(entry) {
  if (!entry) return h("span", { class: "muted" }, "no runs");
  return [statusBadge(entry.status), " ", h("a", { href: `#/runs/${encodeURIComponent(entry.run_id)}`, class: "run-link" }, dateTime(entry.timestamp))];
}

/**
 * The "last run" cells. A list item that carries `last_run` shows it; otherwise the cell asks
 * for the function's newest log entry once it scrolls into view, a few functions at a time.
 */
function lastRunLoader(api, lifetime) {
  const queue = [];
  let running = 0;
  const next = () => {
    while (running < PARALLEL && queue.length > 0 && !lifetime.left) {
      const { cell, name } = queue.shift();
      running += 1;
      api
        .logs(name, 1)
        .then((logs) => fill(cell, lastRunView(Array.isArray(logs?.items) ? logs.items[0] : null)))
        .catch((error) => fill(cell, h("span", { class: "muted", title: error.message }, "—")))
        .finally(() => {
          running -= 1;
          next();
        });
    }
  };
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      observer.unobserve(entry.target);
      queue.push({ cell: entry.target, name: entry.target.dataset.function });
    }
    next();
  });
  lifetime.onLeave(() => {
    observer.disconnect();
    queue.length = 0;
  });
  return {
    cell(fn) {
      if (fn.last_run !== undefined) return h("td", { class: "last-run" }, lastRunView(fn.last_run));
      const cell = h("td", { class: "last-run", "data-function": fn.name }, h("span", { class: "muted" }, "…"));
      observer.observe(cell);
      return cell;
    },
  };
}
