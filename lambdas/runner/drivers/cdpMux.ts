/**
 * One browser, one CDP pipe, two drivers. Chromium takes a single `--remote-debugging-pipe`,
 * and the sandbox listens on no socket, so puppeteer and Playwright share the pipe through this
 * multiplexer (the choice is written in docs/automations.md, "One warm browser, two drivers"):
 *
 * - `root` is the pipe as it is: puppeteer (the runtime's own driver: downloads, evidence,
 *   `Session.start()`) speaks on the browser's root session, unchanged.
 * - `openConnection()` gives another client (Playwright's `connectOverCDP(transport)`) a
 *   connection of its own: a browser-target session (`Target.attachToBrowserTarget`), whose
 *   commands are sent with that session's id and whose answers and events come back without it,
 *   as if the client had the pipe alone. The sessions that client attaches (its pages, workers)
 *   are routed to it by their session id.
 *
 * Each connection is a CDP client in its own right, as a DevTools window beside an automation
 * is: its targets, auto-attach and events are its own. Every command still goes down the one
 * pipe, so the host's filters (cdpDownloads, cdpGuard) see them all.
 *
 * `openedPages` holds the pages the drivers' pages open before they load anything, for the
 * runner's hooks (see OpenedPageGate): the drivers' messages go through its gate.
 */
import { type OpenedPageHook, OpenedPageGate } from "./openedPageGate";

/** A transport of CDP messages as text (puppeteer's ConnectionTransport, PipeTransport). */
export interface TextTransport {
  send(message: string): void;
  close(): void;
  onmessage?: (message: string) => void;
  onclose?: () => void;
}

/** A transport of CDP messages as objects (Playwright's ConnectOverCDPTransport). */
export interface ObjectTransport {
  send(message: object): void;
  close(): void;
  onmessage?: (message: object) => void;
  onclose?: (reason?: string) => void;
}

type Message = { id?: number; method?: string; sessionId?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: unknown };

/** Ids of the multiplexer's own commands: far above any a client counts up to, within the int32 Chromium reads ids as. */
const FIRST_OWN_ID = 2 ** 30;

/** A connection opened by openConnection: its browser session and the sessions it attached. */
interface Connection {
  transport: ObjectTransport & { deliver(message: Message): void; closed: boolean };
  browserSession: string;
  sessions: Set<string>;
  /** Ids of its `Target.attachToTarget` commands: their answers name a session of its own. */
  attaching: Set<number>;
  /** A driver's connection: the pages it attaches can be held (see OpenedPageGate); false for the runner's own. */
  gated: boolean;
}

export class CdpMux {
  /** The pipe as the root session's client sees it. */
  readonly root: TextTransport;
  readonly #pipe: TextTransport;
  #nextOwnId = FIRST_OWN_ID;
  readonly #own = new Map<number, (message: Message) => void>();
  /** Connections by the session ids they own (their browser session and those it attached). */
  readonly #bySession = new Map<string, Connection>();
  readonly #connections = new Set<Connection>();
  /** The connections' browser sessions: the root never hears of them (see toRoot). */
  readonly #browserSessions = new Set<string>();
  /** Own `Target.attachToBrowserTarget` calls under way: the root's messages wait meanwhile (see toRoot). */
  #attaching = 0;
  readonly #held: string[] = [];
  readonly #gate: OpenedPageGate;
  #closed = false;

  constructor(pipe: TextTransport) {
    this.#pipe = pipe;
    this.#gate = new OpenedPageGate((text) => pipe.send(text));
    this.root = {
      send: (message) => (this.#gate.active ? this.#gate.send(message, sessionOf(message)) : pipe.send(message)),
      close: () => pipe.close(),
      onmessage: undefined,
      onclose: undefined,
    };
    pipe.onmessage = (text) => this.#receive(text);
    pipe.onclose = () => this.#closeAll();
  }

  /**
   * Holds each page a driver's page opens (a popup) until the promise `hook` answers for it
   * settles (see OpenedPageGate); the function returned removes the hook.
   */
  holdOpenedPages(hook: OpenedPageHook): () => void {
    return this.#gate.add(hook);
  }

  /**
   * A new connection of its own to the browser (a browser-target session on the pipe). A
   * driver's (`gated`, the default) has the pages it is told of held for holdOpenedPages' hooks;
   * the runner's own (`gated: false`), which attaches to such pages to set them up, is never held.
   */
  async openConnection(options: { gated?: boolean } = {}): Promise<ObjectTransport> {
    if (this.#closed) throw new Error("The browser's connection is closed");
    this.#attaching += 1;
    let answer: Message;
    try {
      answer = await this.#call("Target.attachToBrowserTarget", {});
    } finally {
      this.#attaching -= 1;
    }
    const browserSession = answer.result?.sessionId;
    if (typeof browserSession === "string") this.#browserSessions.add(browserSession);
    this.#release();
    if (typeof browserSession !== "string") throw new Error(`The browser refused a connection: ${JSON.stringify(answer.error ?? answer)}`);
    const pipe = this.#pipe;
    const gate = this.#gate;
    const connection: Connection = {
      browserSession,
      sessions: new Set([browserSession]),
      attaching: new Set(),
      gated: options.gated !== false,
      transport: {
        closed: false,
        send(message: object) {
          if (this.closed) return;
          const command = message as Message;
          if (command.method === "Target.attachToTarget" && typeof command.id === "number" && command.sessionId === undefined) connection.attaching.add(command.id);
          const text = JSON.stringify(command.sessionId === undefined ? { ...command, sessionId: browserSession } : command);
          if (connection.gated && gate.active) gate.send(text, command.sessionId);
          else pipe.send(text);
        },
        close: () => this.#closeConnection(connection, true),
        deliver(message: Message) {
          if (!this.closed) this.onmessage?.(message);
        },
      },
    };
    this.#connections.add(connection);
    this.#bySession.set(browserSession, connection);
    return connection.transport;
  }

  #call(method: string, params: object): Promise<Message> {
    const id = this.#nextOwnId++;
    return new Promise((resolve) => {
      this.#own.set(id, resolve);
      this.#pipe.send(JSON.stringify({ id, method, params }));
    });
  }

  #receive(text: string): void {
    // Most messages are the root's: only those naming a session a connection owns are parsed here.
    const sessionId = sessionOf(text);
    const connection = sessionId === undefined ? undefined : this.#bySession.get(sessionId);
    if (!connection) {
      const id = sessionId === undefined ? answerId(text) : undefined;
      const own = id === undefined || id < FIRST_OWN_ID ? undefined : this.#own.get(id);
      if (own && id !== undefined) {
        this.#own.delete(id);
        return own(JSON.parse(text) as Message);
      }
      if (this.#gate.active) this.#gateHears(text, sessionId);
      return this.#toRoot(text);
    }
    const message = JSON.parse(text) as Message;
    this.#track(connection, message);
    if (connection.gated && this.#gate.active) {
      if (message.method === "Target.attachedToTarget") this.#gate.attached(message);
      else if (typeof message.sessionId === "string") this.#gate.heard(message.sessionId);
    }
    if (message.sessionId === connection.browserSession) delete message.sessionId;
    connection.transport.deliver(message);
  }

  /** Shows the gate a message the root's client is about to hear (only `Target.attachedToTarget` events are parsed). */
  #gateHears(text: string, sessionId: string | undefined): void {
    if (attachesTarget(text)) this.#gate.attached(JSON.parse(text) as Message);
    else if (sessionId !== undefined) this.#gate.heard(sessionId);
  }

  /**
   * Passes a message on to the root's client, except the news of a connection's browser session
   * (`Target.attachedToTarget` of it): the root's client did not attach it, and would otherwise
   * take it for its own (puppeteer attaches to what it hears of, and its own browser-target
   * sessions, e.g. for downloads, must still reach it). Chromium tells the root before it answers
   * the attach, so while one of the mux's attaches is under way the root's messages wait, in
   * order, until its answer names the session to leave out.
   */
  #toRoot(text: string): void {
    if (this.#attaching > 0) {
      this.#held.push(text);
      return;
    }
    if (this.#announcesBrowserSession(text)) return;
    this.root.onmessage?.(text);
  }

  /** Lets the held messages go once no attach of the mux's is under way. */
  #release(): void {
    if (this.#attaching > 0) return;
    for (const text of this.#held.splice(0)) this.#toRoot(text);
  }

  /** True for `Target.attachedToTarget` of a connection's browser session (only such events are parsed). */
  #announcesBrowserSession(text: string): boolean {
    if (!attachesTarget(text)) return false;
    const session = (JSON.parse(text) as Message).params?.sessionId;
    return typeof session === "string" && this.#browserSessions.has(session);
  }

  /** Keeps the sessions a connection attaches (and lets go of those it loses) routed to it. */
  #track(connection: Connection, message: Message): void {
    if (message.method === "Target.attachedToTarget" && typeof message.params?.sessionId === "string") {
      this.#adopt(connection, message.params.sessionId);
    } else if (message.method === "Target.detachedFromTarget" && typeof message.params?.sessionId === "string") {
      const session = message.params.sessionId;
      if (session !== connection.browserSession) {
        connection.sessions.delete(session);
        this.#bySession.delete(session);
      }
    } else if (message.sessionId === connection.browserSession && typeof message.id === "number" && connection.attaching.delete(message.id)) {
      if (typeof message.result?.sessionId === "string") this.#adopt(connection, message.result.sessionId);
    }
  }

  #adopt(connection: Connection, session: string): void {
    connection.sessions.add(session);
    this.#bySession.set(session, connection);
  }

  #closeConnection(connection: Connection, detach: boolean): void {
    if (connection.transport.closed) return;
    connection.transport.closed = true;
    this.#connections.delete(connection);
    for (const session of connection.sessions) this.#bySession.delete(session);
    this.#browserSessions.delete(connection.browserSession);
    // Its pages' sessions go with its browser session; the browser and the other clients stay.
    if (detach && !this.#closed) void this.#call("Target.detachFromTarget", { sessionId: connection.browserSession });
    connection.transport.onclose?.();
  }

  #closeAll(): void {
    this.#closed = true;
    for (const connection of [...this.#connections]) this.#closeConnection(connection, false);
    for (const resolve of this.#own.values()) resolve({ error: { message: "The browser's connection closed" } });
    this.#own.clear();
    this.root.onclose?.();
  }
}

/** A top-level `sessionId`, which Chromium writes as a message's last key: `…,"sessionId":"<id>"}`. */
const SESSION_AT_END = /,"sessionId":"([^"\\]+)"\}$/;
/** An answer's `id`, which Chromium writes first: `{"id":<n>,…`. */
const ID_AT_START = /^\{"id":(\d+),/;

/** The `sessionId` of a CDP message as text, read without parsing it whole (nearly every message is passed on unparsed). */
function sessionOf(text: string): string | undefined {
  return SESSION_AT_END.exec(text.length > 64 ? text.slice(-64) : text)?.[1];
}

/** True for a `Target.attachedToTarget` event as text (Chromium writes its `method` first). */
function attachesTarget(text: string): boolean {
  return text.slice(0, 48).includes('"Target.attachedToTarget"');
}

function answerId(text: string): number | undefined {
  const found = ID_AT_START.exec(text.slice(0, 32))?.[1];
  return found === undefined ? undefined : Number(found);
}
