/* global AbortController, TextDecoder, URL, Blob, atob, setTimeout */
// The live view of a run that goes on (`GET /runs/{id}/live`): each `frame` event (a JPEG of the
// page being driven, base64) is shown as it comes, through a blob: URL (the CSP allows no data:
// images), with the page's URL and size; the stream ends with `end`. The run's browser
// screencasts only while this page watches: leaving the page closes the stream. A body that ends
// before `end` (on AWS every long-poll answer does) is followed by another request, resuming
// after the last frame (Last-Event-ID).
import { h } from "./dom.js";
import { createSseParser } from "./runEvents.js";

const MAX_FAILURES = 5;
const RECONNECT_MS = 1000;
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The live section's content; it follows the run until its end, or until the page is left. */
export function liveView(api, runId, lifetime) {
  const image = h("img", { id: "live-frame", class: "live-frame", alt: "The page the run drives, live" });
  const caption = h("p", { class: "muted small", id: "live-caption" }, "Waiting for the first frame… (a frame comes when the page changes)");
  const controller = new AbortController();
  lifetime.onLeave(() => controller.abort());
  let shown = null;
  const show = (frame) => {
    const bytes = Uint8Array.from(atob(String(frame.data)), (c) => c.charCodeAt(0));
    const url = URL.createObjectURL(new Blob([bytes], { type: "image/jpeg" }));
    image.src = url;
    if (shown) URL.revokeObjectURL(shown);
    shown = url;
    caption.textContent = `${String(frame.url)} · ${Number(frame.width)}×${Number(frame.height)}`;
  };
  lifetime.onLeave(() => shown && URL.revokeObjectURL(shown));
  (async () => {
    let lastEventId = null;
    let failures = 0;
    while (!controller.signal.aborted) {
      let response;
      try {
        response = await api.live(runId, lastEventId, controller.signal);
      } catch (error) {
        if (controller.signal.aborted || (error.status !== 0 && error.status !== 429 && error.status < 500) || ++failures > MAX_FAILURES) throw error;
        await pause(RECONNECT_MS);
        continue;
      }
      const parser = createSseParser();
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const read = await reader.read();
        if (read.done) break;
        for (const event of parser.push(decoder.decode(read.value, { stream: true }))) {
          failures = 0;
          if (event.id) lastEventId = event.id;
          if (event.event === "frame") show(JSON.parse(event.data));
          if (event.event === "end") {
            caption.textContent = "The run has ended.";
            return;
          }
        }
      }
      await pause(parser.state.retryMs ?? RECONNECT_MS);
    }
  })().catch((error) => {
    if (!controller.signal.aborted) caption.textContent = `The live view stopped: ${error.message ?? error}`;
  });
  return h("div", { class: "live" }, image, caption);
}
