/* global document, Blob */
// A run's artifacts (`GET /runs/{id}/artifacts`): each with its name, type, size and a download
// button, and a preview: images inline, PDFs in an <object>, text, HTML and JSON as text. The
// bytes are fetched with the API key (an <img src> to the API would carry no key) and shown
// through object URLs, which the page's lifetime revokes when it is left.
import { bytes, dateTime, errorBox, fill, h } from "./dom.js";

const IMAGE = /^image\/(png|jpeg|gif|webp|avif|bmp|svg\+xml|x-icon|vnd\.microsoft\.icon)$/;
const TEXT = /^(text\/[a-z0-9.+-]+|application\/(json|xml|javascript|x-ndjson|[a-z0-9.-]+\+(json|xml)))$/;
/** Larger images and PDFs are not fetched for a preview (they can still be downloaded). */
const MAX_PREVIEW_BYTES = 10 * 1024 * 1024;
/** Larger text is not fetched; text is shown up to MAX_TEXT_CHARS. */
const MAX_TEXT_BYTES = 1024 * 1024;
const MAX_TEXT_CHARS = 200_000;
/** Previews fetched at the same time. */
const PARALLEL = 3;

/** The artifacts section's content: "No artifacts." when the run has none (or the API has no such route yet). */
export async function artifactsView(api, runId, lifetime) {
  let listed;
  try {
    listed = await api.artifacts(runId);
  } catch (error) {
    if (error.status === 404 && error.code === "route_not_found") return none();
    if (error.status === 401) throw error;
    return errorBox(error);
  }
  const items = (Array.isArray(listed?.items) ? listed.items : []).filter((item) => item && typeof item.name === "string");
  if (items.length === 0) return none();
  const rows = items.map((item) => artifactRow(api, runId, lifetime, item));
  loadPreviews(rows.map((row) => row.loadPreview), lifetime);
  return h("ul", { id: "run-artifacts", class: "artifacts" }, rows.map((row) => row.element));
}

function none() {
  return h("p", { class: "muted", id: "run-artifacts" }, "No artifacts.");
}

/** What a content type can be previewed as: "image", "pdf", "text" or null. */
function previewKind(type) {
  if (IMAGE.test(type)) return "image";
  if (type === "application/pdf") return "pdf";
  if (TEXT.test(type)) return "text";
  return null;
}

function artifactRow(api, runId, lifetime, item) {
  const name = item.name;
  const type = typeof item.content_type === "string" && item.content_type !== "" ? item.content_type : "application/octet-stream";
  const baseType = type.split(";")[0].trim().toLowerCase();
  const size = typeof item.bytes === "number" ? item.bytes : null;
  const kind = previewKind(baseType);
  const preview = h("div", { class: "artifact-preview" });

  let fetched = null;
  const blob = () => {
    fetched ??= api.artifact(runId, name).catch((error) => {
      fetched = null;
      throw error;
    });
    return fetched;
  };
  let downloadUrl = null;
  const button = h("button", { type: "button", class: "secondary artifact-download", "aria-label": `Download ${name}` }, "Download");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      downloadUrl ??= lifetime.objectUrl(await blob());
      const link = h("a", { href: downloadUrl, download: name, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
    } catch (error) {
      fill(preview, errorBox(error));
    } finally {
      button.disabled = false;
    }
  });

  async function loadPreview() {
    const limit = kind === "text" ? MAX_TEXT_BYTES : MAX_PREVIEW_BYTES;
    if (kind === null) return fill(preview, h("p", { class: "muted small" }, `No preview for ${baseType}: download it.`));
    if (size !== null && size > limit) return fill(preview, h("p", { class: "muted small" }, `Too large to preview (${bytes(size)}): download it.`));
    fill(preview, h("p", { class: "muted small" }, "Loading the preview…"));
    try {
      const data = await blob();
      if (lifetime.left) return;
      fill(preview, await previewOf(kind, baseType, data, name, lifetime));
    } catch (error) {
      fill(preview, errorBox(error));
    }
  }

  const element = h(
    "li",
    { class: "artifact", "data-name": name, "data-type": baseType },
    h(
      "div",
      { class: "artifact-head" },
      h("code", { class: "artifact-name" }, name),
      h("span", { class: "muted small artifact-meta" }, `${baseType} · ${bytes(size)} · `, dateTime(item.created_at)),
      button,
    ),
    preview,
  );
  return { element, loadPreview };
}

async function previewOf(kind, type, data, name, lifetime) {
  if (kind === "image") {
    const image = h("img", { class: "artifact-image", alt: name, src: lifetime.objectUrl(new Blob([data], { type })) });
    image.addEventListener("error", () => image.replaceWith(h("p", { class: "muted small" }, "This image could not be shown.")));
    return image;
  }
  if (kind === "pdf") {
    // The Blob's type is set here, whatever the bytes are: they are shown as a PDF or not at all.
    return h(
      "object",
      { class: "artifact-pdf", type: "application/pdf", data: lifetime.objectUrl(new Blob([data], { type: "application/pdf" })), "aria-label": name },
      h("p", { class: "muted small" }, "This browser shows no PDF inline: download it."),
    );
  }
  const text = await data.slice(0, MAX_TEXT_CHARS * 4).text();
  const shown = text.length > MAX_TEXT_CHARS ? text.slice(0, MAX_TEXT_CHARS) : text;
  return [
    h("pre", { class: "artifact-text" }, type === "application/json" || type.endsWith("+json") ? indented(shown) : shown),
    shown.length < text.length || data.size > MAX_TEXT_CHARS * 4 ? h("p", { class: "muted small" }, `The first ${MAX_TEXT_CHARS.toLocaleString()} characters: download it for the rest.`) : null,
  ];
}

function indented(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** Runs the preview loaders, PARALLEL at a time, until the page is left. */
function loadPreviews(loaders, lifetime) {
  const queue = [...loaders];
  const next = async () => {
    while (queue.length > 0 && !lifetime.left) await queue.shift()();
  };
  for (let i = 0; i < PARALLEL; i++) next();
}
