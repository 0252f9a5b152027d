/* global document */
// The account's functions, in name order, a page of 50 at a time.
import { dateTime, h, section, statusBadge, table } from "./dom.js";

export async function renderFunctionsPage(view, api) {
  document.title = "Functions · browserfn";
  const first = await api.listFunctions(null);
  const body = h("tbody");
  const more = h("button", { type: "button", class: "secondary" }, "More");
  let cursor = first.next_cursor;

  const addRows = (items) => {
    for (const fn of items) {
      body.append(
        h(
          "tr",
          {},
          h("td", {}, h("a", { href: `#/functions/${encodeURIComponent(fn.name)}`, class: "function-link" }, fn.name)),
          h("td", {}, statusBadge(fn.status)),
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

  const list = table(["Name", "Status", "Version", "Schedule", "Sharing", "Updated", "Description"], [], { id: "functions" });
  list.querySelector("tbody").replaceWith(body);
  addRows(first.items);
  view.replaceChildren(
    h("h1", {}, "Functions"),
    section(
      "In name order",
      first.items.length === 0
        ? h("p", { class: "muted" }, "No functions yet. Create one with POST /functions (see docs/api.md).")
        : [list, more],
    ),
  );
}
