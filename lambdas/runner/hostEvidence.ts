import type { Socket } from "node:net";
import { evidenceLine } from "./evidenceUrl";
import { splitMessages } from "./pipeTransport";
import type { CaptureEvidence } from "./protocol";

/** What the evidence's log lines say of why the sandbox took it. */
const TAKEN_BECAUSE: Record<NonNullable<CaptureEvidence["why"]>, string> = {
  stuck: "the run had stopped answering",
  canceled: "as the run was canceled",
};

/** One file of a run's failure evidence, as the sandbox's host captured it. */
export interface EvidenceFile {
  name: string;
  contentType: string;
  bytes: Uint8Array;
}

/** Pages of a stuck run kept as evidence at most (as the worker's own evidence). */
const MAX_PAGES = 5;
/** Ids of the host's own CDP commands: far above any the worker's puppeteer reaches. */
const FIRST_ID = 2_000_000_000;

/**
 * Failure evidence of a run whose worker stopped answering (its code blocks the event loop),
 * taken by the sandbox's host over the browser's CDP pipe before the worker is killed: for each
 * page of the run's sessions (pages of the browser contexts it made; at most MAX_PAGES), a
 * screenshot `failure-N.png`, its HTML `failure-N.html` (through `redactHtml`) and a log line
 * naming its URL. The caller has stopped the worker and handed over the pipe: from here on
 * the browser's messages are read here, and the worker's are never passed on again.
 * Bounded by `budgetMs`; never throws (a page stuck in its own script gives what it can).
 */
export async function captureStuckPages(
  toBrowser: Socket,
  fromBrowser: Socket,
  budgetMs: number,
  redactHtml: (html: string) => string,
  /** Why the run is stopped (its log lines say it). */
  why: CaptureEvidence["why"] = "stuck",
): Promise<{ files: EvidenceFile[]; log: string[] }> {
  const until = Date.now() + budgetMs;
  const cdp = new HostCdp(toBrowser, fromBrowser);
  const files: EvidenceFile[] = [];
  const log: string[] = [];
  try {
    const contexts = await cdp.call<{ browserContextIds: string[] }>("Target.getBrowserContexts", {}, until);
    const targets = await cdp.call<{ targetInfos: { targetId: string; type: string; url: string; browserContextId?: string }[] }>("Target.getTargets", {}, until);
    const pages = (targets?.targetInfos ?? [])
      .filter((target) => target.type === "page" && contexts?.browserContextIds.includes(target.browserContextId ?? ""))
      .slice(0, MAX_PAGES);
    for (const [index, page] of pages.entries()) {
      if (Date.now() >= until) break;
      const n = index + 1;
      const kept: string[] = [];
      const attached = await cdp.call<{ sessionId: string }>("Target.attachToTarget", { targetId: page.targetId, flatten: true }, until);
      if (attached) {
        const shot = await cdp.call<{ data: string }>("Page.captureScreenshot", { format: "png" }, until, attached.sessionId);
        if (shot) {
          files.push({ name: `failure-${n}.png`, contentType: "image/png", bytes: Buffer.from(shot.data, "base64") });
          kept.push(`failure-${n}.png`);
        }
        const dom = await cdp.call<{ result: { value?: unknown } }>(
          "Runtime.evaluate",
          { expression: "(document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '') + (document.documentElement ? document.documentElement.outerHTML : '')", returnByValue: true },
          until,
          attached.sessionId,
        );
        if (typeof dom?.result.value === "string") {
          files.push({ name: `failure-${n}.html`, contentType: "text/html; charset=utf-8", bytes: new TextEncoder().encode(redactHtml(dom.result.value)) });
          kept.push(`failure-${n}.html`);
        }
      }
      log.push(`ERROR ${evidenceLine(n, page.url, kept)} (taken by the sandbox: ${TAKEN_BECAUSE[why]})`);
    }
  } finally {
    cdp.close();
  }
  return { files, log };
}

/** The host's own CDP client over the browser's pipe: a command's answer, or undefined by `until`. */
class HostCdp {
  private nextId = FIRST_ID;
  private readonly waiting = new Map<number, (answer: { result?: unknown; error?: unknown }) => void>();
  private readonly receive = splitMessages((message) => {
    let answer: { id?: unknown; result?: unknown; error?: unknown };
    try {
      answer = JSON.parse(message) as typeof answer;
    } catch {
      return;
    }
    if (typeof answer.id === "number") this.waiting.get(answer.id)?.(answer);
  });

  constructor(
    private readonly toBrowser: Socket,
    private readonly fromBrowser: Socket,
  ) {
    fromBrowser.on("data", this.receive);
    // Unpiped from the worker's end, the stream was paused: a new reader does not resume it.
    fromBrowser.resume();
  }

  async call<T>(method: string, params: object, until: number, sessionId?: string): Promise<T | undefined> {
    const id = this.nextId++;
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<T | undefined>((resolve) => {
      this.waiting.set(id, (answer) => resolve(answer.error === undefined ? (answer.result as T) : undefined));
      timer = setTimeout(() => resolve(undefined), Math.max(0, until - Date.now()));
    });
    this.toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) })}\0`);
    try {
      return await answered;
    } finally {
      clearTimeout(timer);
      this.waiting.delete(id);
    }
  }

  close(): void {
    this.fromBrowser.off("data", this.receive);
    this.waiting.clear();
  }
}
