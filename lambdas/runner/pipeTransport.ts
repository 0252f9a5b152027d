import type { Socket } from "node:net";
import type { ConnectionTransport } from "puppeteer-core";

/**
 * puppeteer's transport over Chromium's `--remote-debugging-pipe`: CDP messages as
 * NUL-terminated JSON, written to the browser's fd 3 and read from its fd 4. The worker gets
 * both ends from its sandbox host; no DevTools endpoint listens on any socket.
 */
export class PipeTransport implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  private closed = false;

  constructor(
    private readonly toBrowser: Socket,
    private readonly fromBrowser: Socket,
  ) {
    // Delivered on a later turn, as puppeteer's own PipeTransport does: a handler that sends in
    // reply never re-enters the reading.
    const receive = splitMessages((message) =>
      setImmediate(() => {
        if (!this.closed) this.onmessage?.(message);
      }),
    );
    fromBrowser.on("data", receive);
    const close = () => this.close();
    fromBrowser.once("close", close);
    toBrowser.once("close", close);
    fromBrowser.on("error", () => undefined);
    toBrowser.on("error", () => undefined);
  }

  send(message: string): void {
    if (this.closed) return;
    this.toBrowser.write(message);
    this.toBrowser.write("\0");
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.toBrowser.destroy();
    this.fromBrowser.destroy();
    this.onclose?.();
  }
}

/**
 * Reads CDP's pipe framing (each message JSON text ending in a NUL byte) from chunks as they
 * come: returns what to call with each chunk; `onMessage` gets each whole message.
 */
export function splitMessages(onMessage: (message: string) => void): (chunk: Buffer) => void {
  let pending: Buffer[] = [];
  return (chunk) => {
    let rest = chunk;
    let end = rest.indexOf(0);
    while (end !== -1) {
      pending.push(rest.subarray(0, end));
      const message = Buffer.concat(pending).toString("utf8");
      pending = [];
      onMessage(message);
      rest = rest.subarray(end + 1);
      end = rest.indexOf(0);
    }
    if (rest.length > 0) pending.push(rest);
  };
}
