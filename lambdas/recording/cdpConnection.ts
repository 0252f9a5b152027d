/**
 * A CDP connection of the runner's own to the run's browser (a browser-target session on the
 * pipe, see CdpMux.openConnection), spoken in flat mode: commands to the browser, or to a session
 * it attached, by that session's id.
 */
import type { ObjectTransport } from "../runner/drivers/cdpMux";
import type { CdpChannel } from "./pageTarget";

type Message = { id?: number; method?: string; sessionId?: string; params?: Record<string, unknown>; result?: unknown; error?: { message?: unknown } };
type Listener = (params: never) => void;

export class CdpConnection {
  readonly #transport: ObjectTransport;
  #nextId = 1;
  readonly #waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  /** Listeners by session id ("" for the browser's) and event name. */
  readonly #listeners = new Map<string, Map<string, Listener[]>>();
  #closed = false;

  constructor(transport: ObjectTransport) {
    this.#transport = transport;
    transport.onmessage = (message) => this.#receive(message as Message);
    transport.onclose = () => this.#gone();
  }

  /** Sends `method` to the browser (no `sessionId`) or to the attached session `sessionId`. */
  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<unknown> {
    if (this.#closed) return Promise.reject(new Error("The recorder's connection is closed"));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#transport.send(sessionId === undefined ? { id, method, params } : { id, method, params, sessionId });
    });
  }

  on(event: string, listener: Listener, sessionId = ""): void {
    const bySession = this.#listeners.get(sessionId) ?? new Map<string, Listener[]>();
    this.#listeners.set(sessionId, bySession);
    bySession.set(event, [...(bySession.get(event) ?? []), listener]);
  }

  /** The attached session `sessionId` as a channel of its own. */
  channel(sessionId: string): CdpChannel {
    return {
      send: (method, params) => this.send(method, params, sessionId),
      on: (event, listener) => this.on(event, listener, sessionId),
    };
  }

  /** Forgets what a session listened to (once it is detached). */
  forget(sessionId: string): void {
    this.#listeners.delete(sessionId);
  }

  close(): void {
    if (this.#closed) return;
    this.#transport.close();
    this.#gone();
  }

  #receive(message: Message): void {
    if (typeof message.id === "number") {
      const waiting = this.#waiting.get(message.id);
      this.#waiting.delete(message.id);
      if (!waiting) return;
      if (message.error) waiting.reject(new Error(String(message.error.message ?? "CDP error")));
      else waiting.resolve(message.result);
      return;
    }
    if (typeof message.method !== "string") return;
    for (const listener of this.#listeners.get(message.sessionId ?? "")?.get(message.method) ?? []) listener(message.params as never);
  }

  #gone(): void {
    this.#closed = true;
    for (const waiting of this.#waiting.values()) waiting.reject(new Error("The recorder's connection closed"));
    this.#waiting.clear();
    this.#listeners.clear();
  }
}
