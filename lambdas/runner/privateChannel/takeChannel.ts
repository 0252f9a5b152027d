/**
 * The worker's end of its channel to the sandbox's host, taken out of the automation's reach
 * before the automation's code loads. Node gives a child its IPC channel as `process.send`,
 * `process._send` and `process.on("message")`, which any code of the process can use: an
 * automation could read the messages its worker gets and send messages as the runtime.
 *
 * What this closes, and what it cannot (the design, see docs/local.md "What worker code can do"):
 * - `process.send` is gone (`undefined`, never redefinable as an accessor). Node's internal
 *   `process._send` must stay (it acknowledges each handle passed, such as the browser's pipe),
 *   so it is reachable, as the raw descriptor is: see the token below.
 * - `process.emit("message")` is this module's own non-configurable function: messages go to
 *   the runtime's handler and never to listeners an automation adds on `process`.
 * - The channel's descriptor is still open in the process (Node reads it; `process.channel`
 *   must stay for Node's own reading), so code of the process can write raw messages on it.
 *   What makes a message the runtime's is therefore not the pipe but the per-worker token the
 *   host gave in `init`, before any automation code existed (see hostMain): the host takes a
 *   `done` only with that token, and drops every other message a worker may not send. The
 *   token lives only in closures of workerMain; heapReaders closes the ways JavaScript could
 *   read it out of the heap.
 * - None of this has to hold across runs: a worker process serves one run and is replaced
 *   (see hostMain), so nothing an automation does to its process reaches another run.
 */
import type { SupervisorMessage, WorkerMessage } from "../protocol";

type SendImpl = (message: unknown, handle: unknown, options: object, callback: (error: Error | null) => void) => boolean;

export interface PrivateChannel {
  /** Sends one message to the host; `onSent` once it is handed to the channel (or failed). */
  send(message: WorkerMessage, onSent?: (error: Error | null) => void): void;
}

/**
 * Takes this process's IPC channel for the runtime: `onMessage` gets every message (and the
 * handle that came with it), and no other code of the process gets them or can call
 * `process.send`. Throws when the process has no IPC channel. Call once, before user code loads.
 */
export function takeChannel(onMessage: (message: SupervisorMessage, handle: unknown) => void): PrivateChannel {
  const owner = process as unknown as { _send?: SendImpl; emit: (event: string | symbol, ...args: unknown[]) => boolean };
  const sendImpl = owner._send;
  if (typeof sendImpl !== "function" || typeof process.send !== "function") throw new Error("the worker has no IPC channel");
  const emit = owner.emit;
  // Node delivers a message only while the process has a 'message' listener; the runtime's is this one.
  process.on("message", () => undefined);
  Object.defineProperty(process, "emit", {
    value: function (this: unknown, event: string | symbol, ...args: unknown[]): boolean {
      if (event === "message") {
        onMessage(args[0] as SupervisorMessage, args[1]);
        return true;
      }
      return Reflect.apply(emit, this, [event, ...args]) as boolean;
    },
    writable: false,
    configurable: false,
  });
  // Writable (code that sets its own `process.send` keeps working; nothing of the runtime calls it), never redefinable.
  // `process._send` stays: Node's own handle passing acknowledges each handle with it.
  Object.defineProperty(process, "send", { value: undefined, writable: true, configurable: false });
  return {
    send(message, onSent = () => undefined) {
      try {
        Reflect.apply(sendImpl, process, [message, undefined, {}, onSent]);
      } catch (error) {
        onSent(error as Error);
      }
    },
  };
}
