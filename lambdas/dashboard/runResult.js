// A run's result: its JSON, indented, and, when it is an image (a data URL or base64 string,
// or such a string in one of its top-level fields), the image itself.
import { h, jsonText } from "./dom.js";
import { imageBlobOf } from "./imageStrings.js";

/** At most this many images are shown from one result. */
const MAX_IMAGES = 12;

/** The result section's content for `run` (from `GET /runs/{id}`); `lifetime` owns the images' object URLs. */
export function runResultView(run, lifetime) {
  if (run.status !== "succeeded") {
    const why = run.status === "queued" || run.status === "running" ? `the run is ${run.status}` : `the run ${run.status === "timed_out" ? "timed out" : "failed"}`;
    return [h("p", { class: "muted", id: "run-result" }, `No result: ${why}.`)];
  }
  const images = imagesIn(run.result).map(({ label, blob }) =>
    h(
      "figure",
      { class: "result-image" },
      h("img", { src: lifetime.objectUrl(blob), alt: `Image in ${label}` }),
      h("figcaption", { class: "muted small" }, `${label} · ${blob.type} · ${blob.size} bytes`),
    ),
  );
  return [
    images.length > 0 ? h("div", { id: "run-result-images" }, images) : null,
    h("pre", { id: "run-result", class: "result-body" }, jsonText(run.result)),
  ];
}

/** The images the result holds: the result itself, or the values of its top-level fields or items. */
function imagesIn(result) {
  const whole = imageBlobOf(result);
  if (whole) return [{ label: "the result", blob: whole }];
  if (result === null || typeof result !== "object") return [];
  const entries = Array.isArray(result) ? result.map((item, i) => [`[${i}]`, item]) : Object.entries(result).map(([key, item]) => [`.${key}`, item]);
  const found = [];
  for (const [path, item] of entries) {
    if (found.length === MAX_IMAGES) break;
    const blob = imageBlobOf(item);
    if (blob) found.push({ label: `result${path}`, blob });
  }
  return found;
}
