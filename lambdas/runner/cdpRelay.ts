/**
 * The relay between a worker and its browser's CDP pipe, in the sandbox's host (hostMain). The
 * pipe is the host's for the browser's life; each worker gets a socket of its own on it
 * (connectWorker), and the socket of a worker that ended is cut off: a browser kept for the next
 * run (see browserReuse/) serves its next worker on a new socket, and nothing meant for an
 * earlier worker (an answer to its command, an event of a session it attached) reaches it.
 *
 * Each command of the worker goes to the browser whole, after keepDownloadsIn (downloads kept in
 * the run's folder), guardCommand (with `guard`) and the BrowserJudge, which says whether the
 * browser may serve another run. Relaying whole messages also lets the host speak to the
 * browser itself: to reset it between runs, and to take evidence when the worker is stuck.
 */
import { rmSync } from "node:fs";
import { type Server, Socket, createServer } from "node:net";
import path from "node:path";
import { keepDownloadsIn } from "./cdpDownloads";
import { guardCommand } from "./cdpGuard";
import { splitMessages } from "./pipeTransport";
import { BrowserJudge, answerIdOf, sessionOf } from "./browserReuse/browserJudge";

/** Ids of the host's own commands: above any a worker's drivers count up to (cdpMux's own start at 2^30), within int32; a worker may not use them. */
export const FIRST_HOST_ID = 2 ** 30 + 2 ** 29;

/** An answer of the browser, as the host reads its own. */
export interface CdpAnswer {
  result?: Record<string, unknown>;
  error?: unknown;
}

/** One worker's socket on the pipe: what it sent and has not been answered, by `session:id`. */
interface WorkerSide {
  hostEnd: Socket;
  pending: Set<string>;
}

export class CdpRelay {
  readonly judge = new BrowserJudge();
  /** Runs this browser has served (the reset counts them). */
  runsServed = 0;
  #worker: WorkerSide | undefined;
  /**
   * Root-session commands of workers cut off before their answer came (`:id`): the next worker
   * counts its ids from 1 too, so such an answer would pass for one of its own. Each is dropped
   * when it comes; a browser with any left unanswered is not kept (resetKeptBrowser).
   */
  readonly #unanswered = new Set<string>();
  #nextId = FIRST_HOST_ID;
  readonly #own = new Map<number, (answer: CdpAnswer) => void>();
  #taken = false;
  #closed = false;
  readonly #receive: (chunk: Buffer) => void;

  constructor(
    readonly toBrowser: Socket,
    readonly fromBrowser: Socket,
    private readonly profileDir: string,
    private readonly downloads: string,
    private readonly guard: boolean,
  ) {
    this.#receive = splitMessages((text) => this.#fromBrowser(text));
    fromBrowser.on("data", this.#receive);
    const close = () => {
      this.#closed = true;
      this.#worker?.hostEnd.destroy();
      this.#worker = undefined;
      toBrowser.destroy();
      for (const resolve of this.#own.values()) resolve({ error: "the browser's pipe closed" });
      this.#own.clear();
    };
    fromBrowser.once("close", close);
    toBrowser.once("close", close);
    for (const socket of [toBrowser, fromBrowser]) socket.on("error", () => undefined);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * A connected pair of Unix sockets (through a server on a path in the profile, closed at
   * once): one end for the worker, the other relayed to the pipe. A previous worker's socket is
   * cut off first.
   */
  async connectWorker(): Promise<Socket> {
    this.disconnectWorker();
    const address = path.join(this.profileDir, ".cdp.sock");
    rmSync(address, { force: true });
    const server: Server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(address, () => resolve());
    });
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
    const workerEnd = new Socket();
    await new Promise<void>((resolve, reject) => {
      workerEnd.once("error", reject);
      workerEnd.connect(address, () => resolve());
    });
    const hostEnd = await accepted;
    server.close();
    rmSync(address, { force: true });
    hostEnd.on("error", () => undefined);
    if (this.#closed || this.#taken) {
      hostEnd.destroy();
      return workerEnd;
    }
    const side: WorkerSide = { hostEnd, pending: new Set() };
    hostEnd.on(
      "data",
      splitMessages((text) => {
        if (this.#worker === side) this.#fromWorker(side, text);
      }),
    );
    // A worker that closes its socket leaves the browser to the host (and the browser stays for the next worker only if clean).
    hostEnd.once("close", () => {
      if (this.#worker === side) this.#worker = undefined;
    });
    this.#worker = side;
    return workerEnd;
  }

  /** Cuts the current worker's socket off: from here on nothing it sent is answered, and it hears nothing. */
  disconnectWorker(): void {
    const side = this.#worker;
    this.#worker = undefined;
    side?.hostEnd.destroy();
    // Its page and browser-target sessions' ids are the browser's own tokens, never a later worker's: only the root's can collide.
    for (const key of side?.pending ?? []) if (key.startsWith(":")) this.#unanswered.add(key);
  }

  /** Root-session commands of earlier workers the browser has not answered yet. */
  get unansweredCommands(): number {
    return this.#unanswered.size;
  }

  /** The host's own command (on the root session, or `sessionId`), answered within `timeoutMs` or with an error. */
  call(method: string, params: object, timeoutMs: number, sessionId?: string): Promise<CdpAnswer> {
    if (this.#closed || this.#taken) return Promise.resolve({ error: "the browser's pipe is closed" });
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#own.delete(id);
        resolve({ error: "no answer in time" });
      }, timeoutMs);
      this.#own.set(id, (answer) => {
        clearTimeout(timer);
        this.#own.delete(id);
        resolve(answer);
      });
      this.toBrowser.write(`${JSON.stringify(sessionId === undefined ? { id, method, params } : { id, method, params, sessionId })}\0`);
    });
  }

  /** Stops relaying (the worker's commands are dropped from here on, and the browser is never kept): the pipe is the host's. */
  takeOver(): void {
    this.#taken = true;
    this.judge.taint("the host took the pipe over");
    this.disconnectWorker();
    this.fromBrowser.off("data", this.#receive);
  }

  #fromWorker(side: WorkerSide, text: string): void {
    const kept = keepDownloadsIn(text, this.downloads);
    const verdict = kept.ok && this.guard ? guardCommand(kept.message) : kept;
    const judged = verdict.ok ? this.judge.command(verdict.message) : undefined;
    // The host's ids are its own: a worker's answer must never pass for the reset's.
    const id = judged?.command.id;
    if (typeof id === "number" && id >= FIRST_HOST_ID) {
      const { sessionId } = judged?.command ?? {};
      const answer = { id, ...(sessionId === undefined ? {} : { sessionId }), error: { code: -32000, message: `browserfn refused the command: ids from ${FIRST_HOST_ID} are the runtime's` } };
      return void side.hostEnd.write(`${JSON.stringify(answer)}\0`);
    }
    if (verdict.ok && judged) {
      const { sessionId } = judged.command;
      side.pending.add(`${typeof sessionId === "string" ? sessionId : ""}:${String(id)}`);
      this.toBrowser.write(`${judged.message}\0`);
      return;
    }
    const refusal = verdict.ok ? { id: undefined, sessionId: undefined, reason: "not a CDP command" } : verdict;
    const answer = { id: refusal.id, ...(refusal.sessionId === undefined ? {} : { sessionId: refusal.sessionId }), error: { code: -32000, message: refusal.reason } };
    side.hostEnd.write(`${JSON.stringify(answer)}\0`);
  }

  #fromBrowser(text: string): void {
    const id = answerIdOf(text);
    const session = sessionOf(text);
    if (id !== undefined && id >= FIRST_HOST_ID && session === undefined) {
      const own = this.#own.get(id);
      if (own) return own(JSON.parse(text) as CdpAnswer);
    }
    this.judge.message(text);
    // An earlier worker's late answer: never the current one's, even with the same id.
    if (id !== undefined && session === undefined && this.#unanswered.delete(`:${id}`)) return;
    const side = this.#worker;
    if (!side) return;
    if (id !== undefined) {
      // An answer: only to a command this worker sent (an earlier worker's answers are dropped).
      if (!side.pending.delete(`${session ?? ""}:${id}`)) return;
    } else if (session !== undefined && !this.judge.sessions.has(session)) {
      // An event of a session this worker did not attach (an earlier worker's): dropped.
      return;
    }
    side.hostEnd.write(`${text}\0`);
  }
}
