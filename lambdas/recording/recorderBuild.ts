/**
 * Builds the recorder that runs in each recorded page: rrweb's `record` (patched, see
 * recorderPatches) and a few lines that start it and keep its events in the page's isolated
 * world. The runner bundles replace this module with its output (bundleRunner's inlineRecorder),
 * so no bundle carries esbuild, and no worker reads a file for it at run time.
 *
 * What the recorder costs a run that succeeds is kept small (issue #25, docs/benchmarks.md):
 * - it starts after the document's first frame (the page's own layout done, its loading not
 *   delayed by a snapshot that would force one), at the renderer's first idle moment then (at
 *   most START_IDLE_MS later), or at once when its events are asked for;
 * - an initial empty `about:blank` is not recorded until something is written into it;
 * - rrweb's code is not in the script each document runs: the runner evaluates it in the
 *   recorder's world when recording begins there (see buildRecorderSource);
 * - its events stay in the isolated world, as JSON text packed every PACK_MS, and leave the page
 *   only when the runner takes them (`__browserfnTake`, for a run whose recording is kept) or
 *   when the document goes (`beforeunload`, `pagehide`: sent over the binding, whose calls the
 *   runner counts against the run's cap);
 * - past MAX_PAGE_BYTES of events a document stops recording, and says so over the binding once.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { buildSync } from "esbuild";
import { RECORDER_BINDING, RECORDER_CAPPED, RECORDER_LOAD, RECORDER_LOADED, RECORDER_RRWEB, RECORDER_TAKE } from "./recorderNames";
import { patchRrweb } from "./recorderPatches";
import { MAX_RECORDING_BYTES_PER_RUN } from "./recordingMode";

/** Events wait at most this long as objects before they are packed as JSON text. */
const PACK_MS = 500;
/** After the document's first frame, the recorder waits at most this long for an idle moment. */
const START_IDLE_MS = 200;
/** The recorder starts at most this long after its document is parsed, whether or not a frame came. */
const START_LATEST_MS = 1000;
/** Bytes of events (JSON text) one document holds at most: the run's cap. */
const MAX_PAGE_BYTES = MAX_RECORDING_BYTES_PER_RUN;

/** The recorder's script: it calls rrweb's `record`, which the runner evaluates in its world when it begins (see RecorderSource). */
const START = `
(() => {
  // Same-origin frames are recorded by their top document's recorder; the rest are not recorded.
  if (window !== window.top || globalThis.__browserfnRecording) return;
  globalThis.__browserfnRecording = true;
  // Looked up when sending: the binding may reach a new document's world just after this script.
  const send = (text) => { try { globalThis[${JSON.stringify(RECORDER_BINDING)}](text); } catch {} };
  let state = "waiting";
  let stop;
  let pending = [];
  let packed = [];
  let bytes = 0;
  let timer = 0;
  const halt = () => {
    state = "stopped";
    pending = [];
    if (stop) stop();
    send(${JSON.stringify(RECORDER_CAPPED)});
  };
  const pack = () => {
    if (timer) clearTimeout(timer);
    timer = 0;
    if (pending.length === 0) return;
    const text = JSON.stringify(pending).slice(1, -1);
    pending = [];
    if (bytes + text.length > ${MAX_PAGE_BYTES}) return halt();
    bytes += text.length + 1;
    packed.push(text);
  };
  // rrweb's code is in this world: recording starts (its full snapshot first).
  const start = () => {
    if (state !== "loading") return;
    state = "recording";
    // Listened to once recording: a beforeunload listener makes each navigation ask the page first.
    addEventListener("beforeunload", hand);
    addEventListener("pagehide", hand);
    stop = globalThis.${RECORDER_RRWEB}({
      emit(event) {
        if (state !== "recording") return;
        pending.push(event);
        if (!timer) timer = setTimeout(pack, ${PACK_MS});
      },
      maskAllInputs: true,
      maskInputOptions: { password: true },
      slimDOMOptions: "all",
      recordCanvas: false,
      collectFonts: false,
      inlineImages: false,
      sampling: { mousemove: 50, scroll: 150, input: "last" },
    });
  };
  globalThis.${RECORDER_LOADED} = start;
  // rrweb's code is asked for once, when recording begins: until then a document holds only this script.
  const begin = () => {
    if (state !== "waiting") return;
    state = "loading";
    if (typeof globalThis.${RECORDER_RRWEB} === "function") start();
    else send(${JSON.stringify(RECORDER_LOAD)});
  };
  // The events held so far, as the JSON text of one array ("" when there are none); the page keeps none of them.
  const drain = () => {
    pack();
    const text = packed.join(",");
    packed = [];
    return text === "" ? "" : "[" + text + "]";
  };
  const hand = () => {
    const text = drain();
    if (text) send(text);
  };
  const blank = () => location.href === "about:blank" && !(document.body && document.body.firstChild) && !(document.head && document.head.firstChild);
  globalThis[${JSON.stringify(RECORDER_TAKE)}] = () => {
    // The runner evaluates rrweb's code here first (see RecorderSource.take): recording starts now if it had not.
    if (state === "waiting" && document.documentElement && !blank()) begin();
    else if (state === "loading") start();
    return drain();
  };
  // After the document's first frame (its layout done by the page's own rendering), at the
  // renderer's first idle moment then: what the run asks of the page meanwhile goes first.
  const soon = () => {
    requestAnimationFrame(() => requestIdleCallback(begin, { timeout: ${START_IDLE_MS} }));
    setTimeout(begin, ${START_LATEST_MS});
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", soon, { once: true });
  else if (!blank()) soon();
  else {
    // An empty about:blank (a new page, a popup before its first document): recorded once something is written into it.
    const watch = new MutationObserver(() => {
      watch.disconnect();
      soon();
    });
    watch.observe(document, { childList: true, subtree: true });
  }
})();
`;

/** rrweb's build (the pinned package's ES module, one file that imports nothing), patched, without its exports. */
function rrwebSource(): string {
  // The package's `require` entry is dist/rrweb.cjs; its ES module sits beside it.
  const file = path.join(path.dirname(require.resolve("rrweb")), "rrweb.js");
  const exports = /^export \{[^}]*\};?$/m;
  const source = patchRrweb(readFileSync(file, "utf8"));
  if (!exports.test(source)) throw new Error(`rrweb's build has no export list where the recorder expects it (${file})`);
  // Without its exports, whatever the recorder does not call is left out of the script.
  return source.replace(exports, "");
}

/** The recorder's two scripts, as the runner uses them (see pageRecorder). */
export interface RecorderSource {
  /** Added to every document of a recorded page, in the recorder's world: a few KB, without rrweb. */
  script: string;
  /** Evaluated in a recorder's world when it begins (and asks for it): defines rrweb's `record` there, once. */
  rrweb: string;
}

/**
 * The recorder's sources, minified. rrweb's code (78 KB) is not in the script every document
 * runs before its own scripts: each new document would parse it (about 2 ms each, on the
 * page's path, twice for a page's first document), though it is used only once recording
 * begins, at an idle moment. The recorder asks for it over its binding then, and the runner
 * evaluates it in that world only (a CDP evaluation, which the page's Content-Security-Policy
 * does not stop); a run that takes a recording evaluates it first where it is missing.
 */
export function buildRecorderSource(): RecorderSource {
  // rrweb's `record` alone (what it does not call left out), as an expression of its own.
  const rrweb = build(`${rrwebSource()}\nexport { record };`, "rrweb.js", "__browserfnRrwebModule");
  // Its `var` kept inside a function; defined once per world (taking evaluates it again).
  const define = `(() => {\nif (typeof globalThis.${RECORDER_RRWEB} === "function") return;\n${rrweb}\nglobalThis.${RECORDER_RRWEB} = __browserfnRrwebModule.record;\n})();`;
  return { script: build(START, "recorder.js"), rrweb: define };
}

/** `contents` bundled and minified (as an IIFE; assigned to `globalName`, when given, as its exports). */
function build(contents: string, sourcefile: string, globalName?: string): string {
  const result = buildSync({
    stdin: { contents, resolveDir: __dirname, loader: "js", sourcefile },
    ...(globalName ? { globalName } : {}),
    bundle: true,
    format: "iife",
    minify: true,
    write: false,
    target: "chrome120",
    legalComments: "none",
    logLevel: "silent",
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error("the recorder did not build");
  return file.text;
}
