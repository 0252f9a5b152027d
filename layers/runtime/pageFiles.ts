/**
 * `page.screenshot({ path })` and `page.pdf({ path })` on a session's page: a run cannot write
 * files (locally its process may not; on AWS a file under /tmp would be lost with the run), so
 * the file is kept as the run's artifact named after the path's last part (`shots/a.png` →
 * `a.png`, checked as `artifacts.save` checks a name), the run's log says so, and the bytes are
 * returned as the driver returns them (puppeteer's or Playwright's page). Pages of no session (or a call without `path`) are left
 * to puppeteer.
 */
import type { RunState } from "./runContext";
import { badArtifactName, saveArtifact } from "./saveArtifact";
import { isArtifactName } from "../../lambdas/artifacts/artifacts";

/** The run of each session's browser context (set by Session): whose artifacts a page's file becomes. */
export const sessionRuns = new WeakMap<object, RunState>();

/** A page of either driver: puppeteer's knows its context by `browserContext()`, Playwright's by `context()`. */
type Page = { browserContext?: () => object; context?: () => object };
type FileCall = (this: Page, options?: Record<string, unknown>) => Promise<Uint8Array | string>;
/** Marks a page class whose screenshot and pdf keep their `path` as an artifact. */
const PATCHED = Symbol("browserfn.pageFiles");

/**
 * Makes `page`'s class keep the files of `screenshot` and `pdf` calls with a `path` as artifacts
 * (once per class: a popup or any other page of a session's context is covered too).
 */
export function keepPageFiles(page: object): void {
  const proto = Object.getPrototypeOf(page) as Record<string | symbol, unknown>;
  if (proto[PATCHED]) return;
  proto[PATCHED] = true;
  proto.screenshot = keepingPath(proto.screenshot as FileCall, "screenshot", screenshotType);
  proto.pdf = keepingPath(proto.pdf as FileCall, "pdf", () => ({}));
}

/** The image type puppeteer would take from the path's extension (it does so only when given a path). */
function screenshotType(name: string, options: Record<string, unknown>): Record<string, unknown> {
  if (options.type !== undefined) return {};
  const extension = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  const type = extension === "png" ? "png" : extension === "jpg" || extension === "jpeg" ? "jpeg" : extension === "webp" ? "webp" : undefined;
  return type ? { type } : {};
}

function keepingPath(original: FileCall, method: string, extra: (name: string, options: Record<string, unknown>) => Record<string, unknown>): FileCall {
  return async function (this: Page, options?: Record<string, unknown>) {
    // puppeteer writes no file for an empty path either.
    const run = typeof options === "object" && options !== null && options.path ? runOf(this) : undefined;
    if (!run || !options) return original.call(this, options);
    const { path, ...rest } = options;
    const name = String(path).split(/[\\/]/).pop() ?? "";
    if (!isArtifactName(name)) {
      throw new Error(`page.${method}({ path }) keeps the file as the run's artifact named after the path's last part. ${badArtifactName(name)}`);
    }
    const data = await original.call(this, { ...rest, ...extra(name, rest) });
    await saveArtifact(run, name, typeof data === "string" ? Buffer.from(data, "base64") : data);
    console.log(`[browserfn] saved ${name} as an artifact`);
    return data;
  };
}

function runOf(page: Page): RunState | undefined {
  try {
    const context = page.browserContext ? page.browserContext() : page.context?.();
    return context ? sessionRuns.get(context) : undefined;
  } catch {
    return undefined;
  }
}
