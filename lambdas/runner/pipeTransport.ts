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
  private pending: Buffer[] = [];
  private closed = false;

  constructor(
    private readonly toBrowser: Socket,
    private readonly fromBrowser: Socket,
  ) {
    fromBrowser.on("data", (chunk: Buffer) => this.receive(chunk));
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

  private receive(chunk: Buffer): void {
    let rest = chunk;
    let end = rest.indexOf(0);
    while (end !== -1) {
      this.pending.push(rest.subarray(0, end));
      const message = Buffer.concat(this.pending).toString("utf8");
      this.pending = [];
      // Delivered on a later turn, as puppeteer's own PipeTransport does: a handler that sends
      // in reply never re-enters this loop.
      setImmediate(() => {
        if (!this.closed) this.onmessage?.(message);
      });
      rest = rest.subarray(end + 1);
      end = rest.indexOf(0);
    }
    if (rest.length > 0) this.pending.push(rest);
  }
}
