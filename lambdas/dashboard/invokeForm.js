/* global setTimeout */
// The invoke form, built from the function's parameters (`variables`, in order) and their JSON
// Schema (`input_schema`: see schemaFields.js), and the result of a call.
import { duration, errorBox, h, jsonText, runLink, statusBadge } from "./dom.js";
import { hint, schemaField } from "./schemaFields.js";

const POLL_MS = 1000;
const FINAL = ["succeeded", "failed", "timed_out", "canceled"];

/**
 * The invoke section's content. `onRunEnded` is called after every call that ran (to refresh the
 * logs and metrics).
 */
export function invokeForm(api, record, onRunEnded) {
  const variables = record.variables ?? [];
  const properties = record.input_schema?.properties ?? {};
  const fields = variables.map((variable, i) =>
    schemaField(Object.hasOwn(properties, variable.name) ? properties[variable.name] : {}, { id: `param-${i}`, required: variable.required }),
  );
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
    fields.forEach((field, i) => {
      const value = field.read();
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
    // novalidate: the API checks every value against the schema and names each bad one (a
    // browser would silently refuse to submit, e.g. 1.5 in an integer's number input).
    { id: "invoke-form", novalidate: true, on: { submit } },
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
        h(
          "div",
          { class: "param-field" },
          fields[i].element,
          hint(Object.hasOwn(properties, variable.name) ? properties[variable.name].description : undefined),
          variable.schema_note ? hint(`Not fully checked: ${variable.schema_note}`) : null,
        ),
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
