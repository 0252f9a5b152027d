import { type ServerSentEvent, SseParser } from "../../client/sseParser";

/** An event as a test saw it: parsed, with its data as JSON and when it arrived. */
export interface ReceivedEvent extends ServerSentEvent {
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  at: number;
}

export interface OpenedStream {
  status: number;
  headers: Headers;
  /** The body's text when it is not an event stream (an error). */
  text: string;
  events: ReceivedEvent[];
  /** Resolves when the stream has ended by itself. */
  ended: Promise<void>;
  /** Waits until `count` events have arrived (or the stream ended). */
  waitFor(count: number): Promise<ReceivedEvent[]>;
  /** Goes away mid-stream (the client disconnects). */
  close(): void;
}

/** Opens GET `path` as an event stream over real HTTP and reads it in the background. */
export async function openEventStream(baseUrl: string, path: string, options: { token?: string | null; headers?: Record<string, string> } = {}): Promise<OpenedStream> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: "text/event-stream", ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(baseUrl + path, { headers, signal: controller.signal });
  const events: ReceivedEvent[] = [];
  const waiters: (() => void)[] = [];
  const notify = () => waiters.splice(0).forEach((wake) => wake());
  if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, events, ended: Promise.resolve(), waitFor: async () => events, close: () => undefined };
  }
  const parser = new SseParser();
  let done = false;
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        for (const event of parser.push(decoder.decode(chunk, { stream: true }))) events.push({ ...event, json: JSON.parse(event.data), at: Date.now() });
        notify();
      }
    } catch {
      // closed by the test
    } finally {
      done = true;
      notify();
    }
  })();
  return {
    status: response.status,
    headers: response.headers,
    text: "",
    events,
    ended,
    async waitFor(count) {
      while (events.length < count && !done) await new Promise<void>((resolve) => waiters.push(resolve));
      return events;
    },
    close: () => controller.abort(),
  };
}
