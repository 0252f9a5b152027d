/**
 * Builds the recorder that runs in each recorded page: rrweb's `record` and a few lines that
 * start it and hand its events, in batches, to the CDP binding of its isolated world. The
 * runner bundles replace this module with its output (bundleRunner's inlineRecorder), so no
 * bundle carries esbuild, and no worker reads a file for it at run time.
 */
import { buildSync } from "esbuild";
import { RECORDER_BINDING } from "./recorderNames";

/** Recorder events wait at most this long in the page before they are sent (a full snapshot goes at once). */
const FLUSH_MS = 100;

const ENTRY = `
import { record } from "rrweb";
(() => {
  // Same-origin frames are recorded by their top document's recorder; the rest are not recorded.
  if (window !== window.top || globalThis.__browserfnRecording) return;
  globalThis.__browserfnRecording = true;
  // Looked up when sending: the binding may reach a new document's world just after this script.
  const send = (text) => globalThis[${JSON.stringify(RECORDER_BINDING)}](text);
  let batch = [];
  let timer = 0;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = 0;
    if (batch.length === 0) return;
    const events = batch;
    batch = [];
    try { send(JSON.stringify(events)); } catch { batch = events.concat(batch); timer = setTimeout(flush, ${FLUSH_MS}); }
  };
  globalThis.__browserfnFlush = flush;
  const start = () => record({
    emit(event) {
      batch.push(event);
      if (event.type === 2) flush();
      else if (!timer) timer = setTimeout(flush, ${FLUSH_MS});
    },
    maskAllInputs: true,
    maskInputOptions: { password: true },
    slimDOMOptions: "all",
    recordCanvas: false,
    collectFonts: false,
    inlineImages: false,
    sampling: { mousemove: 50, scroll: 150, input: "last" },
  });
  if (document.documentElement) start();
  else document.addEventListener("DOMContentLoaded", start, { once: true });
  addEventListener("pagehide", flush);
})();
`;

/** The recorder's source: one script, minified, for the isolated world of each recorded page. */
export function buildRecorderSource(): string {
  const result = buildSync({
    stdin: { contents: ENTRY, resolveDir: __dirname, loader: "js" },
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
