/** One server-sent event: its `event:` name ("message" when none), `data:` lines joined by "\n", and the stream's last event id. */
export interface ServerSentEvent {
  event: string;
  data: string;
  /** The `id:` in force when the event was dispatched (the last one seen on the stream), or null. */
  id: string | null;
}

/**
 * Reads a `text/event-stream` as its text arrives, by the WHATWG rules: lines end at CRLF, LF
 * or CR; `:` lines are comments; `data:` lines are joined with "\n"; an empty line dispatches
 * the event; `retry:` sets the reconnection time. What is left unfinished at the end is dropped.
 */
export class SseParser {
  /** The last `id:` seen (what a reconnection sends as Last-Event-ID). */
  lastEventId: string | null = null;
  /** The last `retry:` seen, in ms. */
  retryMs: number | null = null;
  private buffer = "";
  private data: string[] = [];
  private event = "";

  /** Takes the next piece of the stream's text; returns the events it completed. */
  push(text: string): ServerSentEvent[] {
    this.buffer += text;
    const events: ServerSentEvent[] = [];
    for (;;) {
      const end = this.buffer.search(/[\r\n]/);
      if (end < 0) break;
      // A CR at the very end may be the first half of a CRLF: wait for the next piece.
      if (this.buffer[end] === "\r" && end === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (this.buffer.startsWith("\r\n", end) ? 2 : 1));
      const event = this.line(line);
      if (event) events.push(event);
    }
    return events;
  }

  private line(line: string): ServerSentEvent | null {
    if (line === "") {
      if (this.data.length === 0) {
        this.event = "";
        return null;
      }
      const event = { event: this.event || "message", data: this.data.join("\n"), id: this.lastEventId };
      this.data = [];
      this.event = "";
      return event;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.lastEventId = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retryMs = Number(value);
    return null;
  }
}
