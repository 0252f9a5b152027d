/* global setTimeout */
// The invoke form, built from the function's parameters (`variables`), and the result of a call.
import { duration, errorBox, h, jsonText, runLink, statusBadge } from "./dom.js";

const POLL_MS = 1000;
const FINAL = ["succeeded", "failed", "timed_out"];

/** One input per parameter: text for `string`, a number for `number`, a choice for `boolean`, JSON text for the rest. */
function parameterInput(variable, id) {
  const common = { id, name: variable.name, "data-type": variable.type };
  if (variable.type === "boolean") {
    const options = variable.required ? [] : [h("option", { value: "" }, variable.default === undefined ? "(not set)" : `(default: ${variable.default})`)];
    return h("select", common, options, h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
  }
  const placeholder = variable.default !== undefined ? `default: ${variable.default}` : variable.required ? "required" : "";
  if (variable.type === "number") return h("input", { ...common, type: "number", step: "any", placeholder });
  if (variable.type === "string") return h("input", { ...common, type: "text", placeholder, spellcheck: "false" });
  return h("textarea", { ...common, rows: 2, placeholder: placeholder || "JSON", spellcheck: "false" });
}

/**
 * The value a field sends, or undefined to leave the parameter out (its default applies, or the
 * API says it is required). Numbers and JSON that do not parse are sent as typed, as text: the
 * API checks every value against the declared type and answers `invalid_parameters`.
 */
function fieldValue(input) {
  const raw = input.value;
  if (raw === "") return undefined;
  const type = input.dataset.type;
  if (type === "string") return raw;
  if (type === "number") return Number.isFinite(Number(raw)) ? Number(raw) : raw;
  if (type === "boolean") return raw === "true";
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * The invoke section's content. `onRunEnded` is called after every call that ran (to refresh the
 * logs and metrics).
 */
export function invokeForm(api, record, onRunEnded) {
  const variables = record.variables ?? [];
  const inputs = variables.map((variable, i) => parameterInput(variable, `param-${i}`));
  const versionSelect = h(
    "select",
    { id: "invoke-version", name: "version" },
    [...record.versions].reverse().map((version) => h("option", { value: version }, version === record.latest_version ? `${version} (latest)` : version)),
  );
  const respondAsync = h("input", { type: "checkbox", id: "invoke-async" });
  const button = h("button", { type: "submit", id: "invoke-button" }, "Invoke");
  const output = h("div", { id: "invoke-result", "aria-live": "polite" });

  async function submit(event) {
    event.preventDefault();
    const params = {};
    inputs.forEach((input, i) => {
      const value = fieldValue(input);
      if (value !== undefined) params[variables[i].name] = value;
    });
    const version = versionSelect.value === record.latest_version ? null : versionSelect.value;
    button.disabled = true;
    output.replaceChildren(h("p", { class: "muted" }, "Running…"));
    try {
      const response = await api.invoke(record.name, variables.length === 0 ? null : params, { version, async: respondAsync.checked });
      if (response.status === 202) {
        const waiting = h("p", { class: "muted", id: "invoke-waiting" }, `202: run ${response.body.run_id} is ${response.body.status}…`);
        output.replaceChildren(waiting);
        const run = await waitForRun(api, response.body.run_id, (status) => {
          waiting.textContent = `202: run ${response.body.run_id} is ${status}…`;
        });
        output.replaceChildren(runView(run));
      } else {
        output.replaceChildren(resultView(response));
      }
    } catch (error) {
      output.replaceChildren(errorBox(error));
    } finally {
      button.disabled = false;
    }
    await onRunEnded();
  }

  return h(
    "form",
    { id: "invoke-form", on: { submit } },
    variables.length === 0 ? h("p", { class: "muted" }, "This function takes no parameters.") : null,
    h(
      "div",
      { class: "params" },
      variables.map((variable, i) => [
        h(
          "label",
          { for: `param-${i}` },
          h("code", {}, variable.name),
          " ",
          h("span", { class: "type" }, variable.type),
          variable.required ? h("span", { class: "required" }, " required") : null,
        ),
        inputs[i],
      ]),
      h("label", { for: "invoke-version" }, "Version"),
      versionSelect,
    ),
    h("label", { class: "check" }, respondAsync, " Answer at once and follow the run (Prefer: respond-async), for long runs"),
    button,
    output,
  );
}

function resultView(response) {
  const header = (name) => response.headers.get(name);
  return h(
    "div",
    { class: "result ok" },
    h(
      "p",
      {},
      statusBadge("succeeded"),
      ` ${response.status} · run `,
      header("x-run-id") ? runLink(header("x-run-id")) : h("code", { class: "run-id" }, "?"),
      ` · version ${header("x-function-version") ?? "?"} · ${duration(Number(header("x-duration-ms")))}`,
    ),
    h("pre", { class: "result-body" }, jsonText(response.body)),
  );
}

/** A run from `GET /runs/{id}` that ended (the 202 path). */
function runView(run) {
  if (run.status !== "succeeded") {
    return errorBox({ code: run.error?.code ?? run.status, message: run.error?.message ?? `The run ended ${run.status}`, details: { run_id: run.run_id } });
  }
  return h(
    "div",
    { class: "result ok" },
    h("p", {}, statusBadge(run.status), " followed after 202 · run ", runLink(run.run_id), ` · version ${run.version} · ${duration(run.duration_ms)}`),
    h("pre", { class: "result-body" }, jsonText(run.result)),
  );
}

/** Polls `GET /runs/{id}` until the run has ended, telling `onStatus` what it is meanwhile. */
async function waitForRun(api, runId, onStatus) {
  for (;;) {
    const run = await api.run(runId);
    if (FINAL.includes(run.status)) return run;
    onStatus(run.status);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
