/* global window, URL, Blob */
// The replay of a run's recording (`recording-<n>.json`, rrweb events kept by the function's
// `recording` setting), played with rrweb-player, which the service serves itself
// (rrwebPlayer.js, built from the pinned package) in a frame of its own (replay.html, under REPLAY_CSP): nothing is
// loaded from elsewhere (the recorded page's own images and fonts are not fetched). Beside the
// player: the failing moment (the player starts a moment before the end), the error, the line of
// the user's source it names, and the failure screenshot.
import { h } from "./dom.js";

const RECORDING = /^recording-(\d{1,3})\.json$/;
/** The player starts this long before the recording's end: the moments that led to the failure. */
const LEAD_MS = 3000;

/** The first position in the user's own source that a stack names (as runError.js marks it), or null. */
export function userSourceLine(stack) {
  if (typeof stack !== "string") return null;
  const match = /(?:automation\.[cm]?[jt]s|\/automation\/index\.js):\d+(?::\d+)?|(?<![\w:/.-])(?:[\w.-]+\/)*[\w.-]+\.[cm]?[jt]sx?:\d+(?::\d+)?/.exec(stack);
  if (!match) return null;
  const line = stack.split("\n").find((text) => text.includes(match[0]));
  return line ? line.trim() : match[0];
}

/**
 * The replay section's content for the run's artifacts `items` (null when the run kept no
 * recording): a page picker when it recorded more than one page, the player, and the failure beside it.
 */
export function replayView(api, run, items, lifetime) {
  const recordings = items.filter((item) => RECORDING.test(item.name)).sort((a, b) => Number(RECORDING.exec(a.name)[1]) - Number(RECORDING.exec(b.name)[1]));
  if (recordings.length === 0) return null;
  const stage = h("div", { class: "replay-stage", id: "replay-player" }, h("p", { class: "muted" }, "Loading the recording…"));
  const picker =
    recordings.length > 1
      ? h("div", { class: "versions", id: "replay-pages" }, recordings.map((item, i) => h("button", { type: "button", class: "version", "aria-pressed": i === 0 ? "true" : "false", on: { click: (event) => pick(event.currentTarget, item) } }, `page ${i + 1}`)))
      : null;
  const pick = (button, item) => {
    for (const other of picker?.querySelectorAll("button") ?? []) other.setAttribute("aria-pressed", other === button ? "true" : "false");
    void play(api, run, item, stage, lifetime);
  };
  void play(api, run, recordings[0], stage, lifetime);
  return h("div", { class: "replay" }, h("div", { class: "replay-main" }, picker, stage), failureAside(api, run, items, lifetime));
}

async function play(api, run, item, stage, lifetime) {
  let events;
  try {
    events = JSON.parse(await (await api.artifact(run.run_id, item.name)).text());
  } catch (error) {
    stage.replaceChildren(h("p", { class: "error", role: "alert" }, `The recording could not be loaded: ${error.message ?? error}`));
    return;
  }
  if (lifetime.left) return;
  if (!Array.isArray(events) || events.length < 2) {
    stage.replaceChildren(h("p", { class: "muted" }, "The recording holds too little to play."));
    return;
  }
  const total = events[events.length - 1].timestamp - events[0].timestamp;
  // The failing moment: a few seconds before the end, never before the last page's first snapshot (type 2).
  const lastSnapshot = events.reduce((at, event) => (event.type === 2 ? event.timestamp - events[0].timestamp : at), 0);
  // (just past it: the player applies the events before the moment it goes to).
  const failing = Math.min(total, Math.max(lastSnapshot + 50, total - LEAD_MS));
  // The player runs in a frame of its own, under a policy of its own (replay.html, REPLAY_CSP:
  // the recorded page's inline styles apply there, never its scripts or its images' URLs).
  const frame = h("iframe", { class: "replay-iframe", id: "replay-frame", title: "Replay of the run's page", src: new URL("./replay.html", import.meta.url).href });
  const onMessage = (event) => {
    if (event.source !== frame.contentWindow || event.data?.type !== "replay-ready") return;
    // A failed run: shown at the moment before it failed; a run that succeeded: from its start.
    frame.contentWindow.postMessage({ type: "play", events, at: run.status === "succeeded" ? 0 : failing }, "*");
  };
  window.addEventListener("message", onMessage);
  lifetime.onLeave(() => window.removeEventListener("message", onMessage));
  const jump = h("button", { type: "button", class: "secondary", id: "replay-failing-moment", on: { click: () => frame.contentWindow?.postMessage({ type: "goto", at: failing, play: true }, "*") } }, "Play the last seconds");
  stage.replaceChildren(frame, h("p", { class: "muted small" }, `${events.length} events over ${(total / 1000).toFixed(1)} s. Inputs are masked; the recorded page's images and fonts are not loaded. `, jump));
}

/** The failure beside the player: its error, the user's source line, and the failure screenshot. */
function failureAside(api, run, items, lifetime) {
  if (!run.error) return h("aside", { class: "replay-aside muted" }, "The run succeeded: the recording plays from its start.");
  const source = userSourceLine(run.error.stack);
  const shot = items.find((item) => item.name === "failure-1.png");
  const image = h("div", { id: "replay-screenshot" });
  if (shot) {
    api.artifact(run.run_id, shot.name).then(
      (blob) => {
        if (lifetime.left) return;
        const url = URL.createObjectURL(blob instanceof Blob ? blob : new Blob([blob], { type: "image/png" }));
        lifetime.onLeave(() => URL.revokeObjectURL(url));
        image.replaceChildren(h("img", { src: url, alt: "The page when the run failed (failure-1.png)", class: "artifact-image" }));
      },
      () => image.replaceChildren(h("p", { class: "muted small" }, "The failure screenshot could not be loaded.")),
    );
  }
  return h(
    "aside",
    { class: "replay-aside", id: "replay-failure" },
    h("h3", {}, "Where it failed"),
    h("p", { class: "error-code" }, h("strong", {}, String(run.error.code ?? "error")), " ", String(run.error.message ?? "")),
    source ? h("pre", { class: "stack", id: "replay-source-line" }, h("mark", { class: "user-frame" }, source)) : h("p", { class: "muted small" }, "No line of your source in the stack."),
    shot ? [h("h3", {}, "The page at that moment"), image] : null,
  );
}
