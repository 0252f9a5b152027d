// A run's result: its JSON, indented, and, when it is an image or a PDF (a data URL or base64
// string, or such a string in one of its top-level fields), the image or PDF itself.
import { h, jsonText } from "./dom.js";
import { imageBlobOf, pdfBlobOf } from "./imageStrings.js";

/** At most this many images and PDFs are shown from one result. */
const MAX_IMAGES = 12;

/** The result section's content for `run` (from `GET /runs/{id}`); `lifetime` owns the images' object URLs. */
export function runResultView(run, lifetime) {
  if (run.status !== "succeeded") {
    const why = run.status === "queued" || run.status === "running" ? `the run is ${run.status}` : `the run ${run.status === "timed_out" ? "timed out" : "failed"}`;
    return [h("p", { class: "muted", id: "run-result" }, `No result: ${why}.`)];
  }
  const images = filesIn(run.result).map(({ label, blob }) => {
    const url = lifetime.objectUrl(blob);
    const caption = h("figcaption", { class: "muted small" }, `${label} · ${blob.type} · ${blob.size} bytes`);
    if (blob.type !== "application/pdf") return h("figure", { class: "result-image" }, h("img", { src: url, alt: `Image in ${label}` }), caption);
    // An <object> of a blob: URL (the policy's object-src); the Blob is typed application/pdf
    // by decodeFile, so it is shown as a PDF or not at all. The link saves the same bytes.
    return h(
      "figure",
      { class: "result-pdf" },
      h("object", { class: "result-pdf-object", type: "application/pdf", data: url, "aria-label": `PDF in ${label}` }, h("p", { class: "muted small" }, "This browser shows no PDF inline: download it.")),
      caption,
      h("a", { class: "result-pdf-download", href: url, download: `${label.replace(/[^A-Za-z0-9._-]+/g, "_")}.pdf` }, "Download the PDF"),
    );
  });
  return [
    images.length > 0 ? h("div", { id: "run-result-images" }, images) : null,
    h("pre", { id: "run-result", class: "result-body" }, jsonText(run.result)),
  ];
}

/** An image or a PDF in `value`, as a Blob of its type, or null. */
function decodeFile(value) {
  return imageBlobOf(value) ?? pdfBlobOf(value);
}

/** The images and PDFs the result holds: the result itself, or the values of its top-level fields or items. */
function filesIn(result) {
  const whole = decodeFile(result);
  if (whole) return [{ label: "the result", blob: whole }];
  if (result === null || typeof result !== "object") return [];
  const entries = Array.isArray(result) ? result.map((item, i) => [`[${i}]`, item]) : Object.entries(result).map(([key, item]) => [`.${key}`, item]);
  const found = [];
  for (const [path, item] of entries) {
    if (found.length === MAX_IMAGES) break;
    const blob = decodeFile(item);
    if (blob) found.push({ label: `result${path}`, blob });
  }
  return found;
}
