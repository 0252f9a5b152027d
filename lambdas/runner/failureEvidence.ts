import type { EvidencePage as Page } from "../../layers/runtime/drivers/driverContext";
import { pagesOfRun } from "../../layers/runtime/runContext";
import type { ArtifactSink } from "../../layers/runtime/runContext";
import { evidenceLine } from "./evidenceUrl";

/** Pages of a failed run kept as evidence at most (a screenshot and the HTML each). */
const MAX_PAGES = 5;
/** Room kept in a run's log for the evidence's lines: MAX_PAGES lines of at most ~370 bytes (a URL cut to MAX_URL_CHARS). */
export const EVIDENCE_LOG_BYTES = 2 * 1024;
/** The evidence of one run takes at most this long: it comes before the run's answer. */
export const EVIDENCE_BUDGET_MS = 2500;

/**
 * The evidence of a run that failed or timed out with pages open: for each (up to MAX_PAGES),
 * `failure-N.png` (what the viewport showed) and `failure-N.html` (the DOM as it was), kept as
 * artifacts, and a line in the run's log naming the page's URL and the two files. Bounded by
 * `budgetMs`: whatever is not saved by then is left out. Never throws (a page that died, a
 * cap reached): evidence must not change how the run ended. `redactHtml` takes the function's
 * secret values out of the HTML first (a screenshot cannot be redacted). `note` writes the
 * lines (the runner's goes into the room its console capture keeps for them, see
 * captureConsole); a URL in them is cut to MAX_URL_CHARS.
 */
export async function saveFailureEvidence(
  sink: ArtifactSink,
  budgetMs = EVIDENCE_BUDGET_MS,
  redactHtml: (html: string) => string = (html) => html,
  note: (line: string) => void = (line) => console.error(line),
): Promise<string[]> {
  const until = Date.now() + budgetMs;
  const saved: string[] = [];
  const work = (async () => {
    const pages = (await pagesOfRun()).filter((page) => !page.isClosed()).slice(0, MAX_PAGES);
    for (const [index, page] of pages.entries()) {
      if (Date.now() >= until) return;
      const n = index + 1;
      const url = safeUrl(page);
      const files: string[] = [];
      const png = await within(until, page.screenshot({ type: "png" }));
      if (png) files.push((await sink.save(`failure-${n}.png`, png, "image/png").catch(() => undefined))?.name ?? "");
      const html = await within(until, page.content());
      if (typeof html === "string") files.push((await sink.save(`failure-${n}.html`, new TextEncoder().encode(redactHtml(html)), "text/html; charset=utf-8").catch(() => undefined))?.name ?? "");
      const kept = files.filter(Boolean);
      saved.push(...kept);
      note(evidenceLine(n, url, kept));
    }
  })().catch(() => undefined);
  await within(until, work);
  return saved;
}

function safeUrl(page: Page): string {
  try {
    return page.url();
  } catch {
    return "(unknown)";
  }
}

/** The value of `promise`, or undefined when it fails or is not there by `until`. */
async function within<T>(until: number, promise: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), Math.max(0, until - Date.now()))));
  try {
    return await Promise.race([promise.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
