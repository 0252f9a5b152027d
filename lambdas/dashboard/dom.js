/* global document, Node */
// DOM building for the dashboard. Every value from the API goes into the page as a text node
// or an attribute value set through the DOM, never as HTML.

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * An element: `h("a", { href: "#/usage", class: "x", on: { click } }, "text", child)`.
 * Children are nodes or strings (strings become text nodes); null and false are skipped.
 */
export function h(tag, attributes = {}, ...children) {
  return build(document.createElement(tag), attributes, children);
}

/** An SVG element, built like `h`. */
export function svg(tag, attributes = {}, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attributes, children);
}

/**
 * Replaces what `element` holds with `children`, built as `h` builds them (null and false are
 * skipped: `replaceChildren(null)` would write the text "null").
 */
export function fill(element, ...children) {
  element.replaceChildren();
  return build(element, {}, children);
}

function build(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "on") {
      for (const [event, listener] of Object.entries(value)) element.addEventListener(event, listener);
    } else if (value === true) {
      element.setAttribute(name, "");
    } else if (value !== false && value !== null && value !== undefined) {
      element.setAttribute(name, String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** A section with a heading. */
export function section(title, ...children) {
  return h("section", { class: "card" }, h("h2", {}, title), ...children);
}

/**
 * A table in a box that scrolls sideways when the table is wider than the page (a phone):
 * `columns` are header texts, `rows` arrays of cells (strings or nodes); `attributes` go on the table.
 */
export function table(columns, rows, attributes = {}) {
  return h(
    "div",
    { class: "table-scroll" },
    h(
      "table",
      attributes,
      h("thead", {}, h("tr", {}, columns.map((column) => h("th", {}, column)))),
      // Each cell names its column (data-label): narrow screens show a row as a stack of labelled cells (app.css, table.stack).
      h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((cell, i) => h("td", { "data-label": columns[i] ?? "" }, cell))))),
    ),
  );
}

/** A definition list of [term, value] pairs. */
export function fields(pairs) {
  return h("dl", { class: "fields" }, pairs.map(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]));
}

/** A figure with its label; `id` names the figure's element. */
export function stat(label, value, id) {
  return h("div", { class: "stat" }, h("span", { class: "stat-value", id }, value), h("span", { class: "stat-label" }, label));
}

/** A value as indented JSON text. */
export function jsonText(value) {
  if (value === undefined) return "(no body)";
  return JSON.stringify(value, null, 2);
}

/** An ISO date-time in the reader's locale, with the ISO text as its tooltip. */
export function dateTime(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return h("time", { datetime: iso, title: iso }, date.toLocaleString());
}

/** Milliseconds as "850 ms" or "2.35 s". */
export function duration(ms) {
  if (ms === null || ms === undefined) return "—";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/** A byte count as "512 B", "3.4 KB" or "1.2 MB". */
export function bytes(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "—";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** A link to a run's page, showing its id. */
export function runLink(runId) {
  return h("a", { href: `#/runs/${encodeURIComponent(runId)}`, class: "run-link" }, h("code", { class: "run-id" }, String(runId)));
}

/** A run or function status as a coloured label. */
export function statusBadge(status) {
  return h("span", { class: `badge status-${String(status).replace(/[^a-z_]/g, "")}` }, String(status));
}

/**
 * An API error, readable: status and code, message, details, request id. `error` is an
 * ApiError from api.js (or any Error).
 */
export function errorBox(error) {
  const code = error.code ?? "error";
  const details = error.details && Object.keys(error.details).length > 0 ? error.details : null;
  return h(
    "div",
    { class: "error", role: "alert" },
    h("strong", { class: "error-code" }, error.status ? `${error.status} ${code}` : code),
    h("p", { class: "error-message" }, error.message),
    details && detailsView(details),
    error.requestId && h("p", { class: "muted small" }, `request id ${error.requestId}`),
  );
}

/** `invalid_parameters` details list the bad parameters; other details are shown as JSON. */
function detailsView(details) {
  if (Array.isArray(details.parameters)) {
    return h(
      "ul",
      { class: "error-details" },
      details.parameters.map((p) => h("li", {}, typeof p === "object" && p !== null ? [h("code", {}, String(p.name ?? "")), " ", String(p.problem ?? p.message ?? JSON.stringify(p))] : String(p))),
    );
  }
  return h("pre", { class: "error-details" }, jsonText(details));
}
