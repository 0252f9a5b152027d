/**
 * Whether a sandbox's browser may serve the next run, and its reset when it may (hostMain calls
 * it after each run's answer, its worker killed). The browser is kept only when all of these hold:
 * - the run ended on its own (succeeded, or failed with its own error: not stopped at its
 *   timeout, out of memory or refused a browser; a run the service kills takes the sandbox with it);
 * - the BrowserJudge saw nothing act beyond the run's own contexts (see browserJudge);
 * - it has served fewer than MAX_RUNS_PER_BROWSER runs, and uses less than KEEP_MAX_RSS_MB;
 * - the reset below succeeds, within RESET_TIMEOUT_MS, and leaves the browser as it was launched:
 *   no context but the default one, no target, no cookie in the default context.
 * The reset: the worker's socket is cut off; discovery and auto-attach on the root session are
 * turned off; every session the worker attached is detached; every context is disposed (its
 * pages, workers, service workers, cookies, storage, cache and permissions with it); download
 * behaviour is set back. The caller empties the downloads folder.
 */
import { readFileSync } from "node:fs";
import type { CdpRelay } from "../cdpRelay";
import type { RunOutcome } from "../protocol";

/** Runs one browser serves at most: Chromium's own caches and heap are started afresh after as many. */
export const MAX_RUNS_PER_BROWSER = 50;
/** The most memory (resident, the browser's process tree) a browser may hold and still be kept. */
export const KEEP_MAX_RSS_MB = 256;
const RESET_TIMEOUT_MS = 3_000;
const TARGETS_POLL_MS = 20;

/** Error codes of a run that ended on its own (its code's error, or its result refused). */
const OWN_FAILURES = new Set(["function_error", "result_not_serializable", "result_too_large", "result_too_deep"]);

/** Why a run's end leaves its browser unfit to keep, from its outcome (undefined: it ended on its own). */
export function endedUnfit(outcome: unknown): string | undefined {
  const sent = outcome as Partial<RunOutcome> | undefined;
  if (sent?.status === "succeeded") return undefined;
  const code = sent?.status === "failed" ? sent.error?.code : undefined;
  return typeof code === "string" && OWN_FAILURES.has(code) ? undefined : `the run ended ${String(code ?? sent?.status)}`;
}

/** Resident memory of `pid` and its descendants, in MB (undefined when it cannot be read). */
export function treeRssMb(pid: number): number | undefined {
  let kb = 0;
  const seen = new Set<number>();
  const visit = (current: number): boolean => {
    if (seen.has(current)) return true;
    seen.add(current);
    try {
      const status = readFileSync(`/proc/${current}/status`, "utf8");
      kb += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      const children = readFileSync(`/proc/${current}/task/${current}/children`, "utf8").split(" ").filter(Boolean).map(Number);
      return children.every(visit);
    } catch {
      return false;
    }
  };
  return visit(pid) ? kb / 1024 : undefined;
}

/**
 * Waits (within RESET_TIMEOUT_MS) for the targets of the run's contexts to go: a page's or a
 * service worker's outlives its context's disposal by a few milliseconds, and may have lost its
 * context's id meanwhile. A target of any other context (the default one's) is a reason not to
 * keep the browser, at once; one still there after the wait is one too.
 */
async function targetsGone(relay: CdpRelay, disposed: Set<string>): Promise<string | undefined> {
  const until = Date.now() + RESET_TIMEOUT_MS;
  for (;;) {
    const answer = await relay.call("Target.getTargets", {}, RESET_TIMEOUT_MS);
    const infos = answer.result?.targetInfos;
    if (!Array.isArray(infos)) return "its targets could not be listed";
    const left = (infos as { type?: unknown; browserContextId?: unknown }[]).filter((info) => info.type !== "browser");
    if (left.length === 0) return undefined;
    // A target of a context going away may already have lost its context's id (a service worker's does): it is waited for too.
    if (left.some((info) => typeof info.browserContextId === "string" && !disposed.has(info.browserContextId))) return "a target of the default context is open";
    if (Date.now() >= until) return "a target outlived its context";
    await new Promise((resolve) => setTimeout(resolve, TARGETS_POLL_MS));
  }
}

/** Why the browser is not kept (undefined: it was reset and may serve the next run). */
export async function resetKeptBrowser(relay: CdpRelay, browserPid: number, outcome: unknown): Promise<string | undefined> {
  relay.disconnectWorker();
  const unfit = endedUnfit(outcome) ?? relay.judge.tainted;
  if (unfit) return unfit;
  if (relay.runsServed + 1 >= MAX_RUNS_PER_BROWSER) return `it served ${MAX_RUNS_PER_BROWSER} runs`;
  const rss = treeRssMb(browserPid);
  if (rss === undefined || rss > KEEP_MAX_RSS_MB) return `it holds ${rss === undefined ? "unknown" : Math.round(rss)} MB`;
  const call = (method: string, params: object = {}, sessionId?: string) => relay.call(method, params, RESET_TIMEOUT_MS, sessionId);
  const { judge } = relay;
  const results = await Promise.all([
    call("Target.setDiscoverTargets", { discover: false }),
    call("Target.setAutoAttach", { autoAttach: false, waitForDebuggerOnStart: false, flatten: true }),
    ...[...judge.sessions].map((sessionId) => call("Target.detachFromTarget", { sessionId })),
  ]);
  if (results[0]?.error !== undefined || results[1]?.error !== undefined) return "the root session could not be reset";
  const contexts = await call("Target.getBrowserContexts");
  const ids = contexts.result?.browserContextIds;
  if (!Array.isArray(ids)) return "its contexts could not be listed";
  const disposed = await Promise.all(ids.map((browserContextId) => call("Target.disposeBrowserContext", { browserContextId })));
  if (disposed.some((answer) => answer.error !== undefined)) return "a context could not be disposed";
  const [behavior, left, cookies] = await Promise.all([call("Browser.setDownloadBehavior", { behavior: "default" }), call("Target.getBrowserContexts"), call("Storage.getCookies")]);
  if (behavior.error !== undefined) return "its download behaviour could not be reset";
  if (!Array.isArray(left.result?.browserContextIds) || left.result.browserContextIds.length > 0) return "a context outlived the reset";
  // The run's contexts closed before the reset (its sessions') may still be closing their targets too.
  const targets = await targetsGone(relay, new Set([...ids.map(String), ...judge.contexts]));
  if (targets) return targets;
  const jar = cookies.result?.cookies;
  if (!Array.isArray(jar) || jar.length > 0) return "the default context holds cookies";
  // A command of the run still unanswered could be answered while the next run waits for one of the same id (cdpRelay).
  if (relay.unansweredCommands > 0) return "a command of the run was still unanswered";
  judge.clearRun();
  relay.runsServed += 1;
  return undefined;
}
