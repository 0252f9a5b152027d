import { type IncomingMessage, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

/**
 * The `fetch` the CLI gives its API client: a plain JSON request and its whole answer, over
 * node:http (or node:https). Node 20's global fetch loads and compiles undici at its first call,
 * about 110 ms of CPU: more than the rest of a `browserfn list` (docs/cli.md). Anything else
 * goes to the global fetch as it is: a request with an abort signal or for an event stream (the
 * run's events are read as they come), a body that is not text or bytes, headers that are not a
 * plain object, and a GET or HEAD answered with a redirect (an artifact's download URL), which the
 * global fetch then follows by its rules (no Authorization to another origin).
 */
export const httpFetch = (async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
  const url = typeof input === "string" ? new URL(input) : input instanceof URL ? input : null;
  const headers = init.headers;
  const plainHeaders = headers === undefined || (typeof headers === "object" && Object.getPrototypeOf(headers) === Object.prototype);
  const body = init.body;
  const plainBody = body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array;
  const method = (init.method ?? "GET").toUpperCase();
  const record = (headers ?? {}) as Record<string, string>;
  const streamed = Object.entries(record).some(([name, value]) => name.toLowerCase() === "accept" && value.includes("text/event-stream"));
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || init.signal || !plainHeaders || !plainBody || streamed) {
    return globalThis.fetch(input, init);
  }
  const answer = await send(url, method, record, body ?? undefined);
  if (answer.status >= 300 && answer.status < 400 && answer.headers.has("location") && (method === "GET" || method === "HEAD")) {
    return globalThis.fetch(input, init);
  }
  return answer as unknown as Response;
}) as typeof fetch;

/** What the API client reads of a Response. */
interface PlainResponse {
  ok: boolean;
  status: number;
  statusText: string;
  url: string;
  redirected: false;
  headers: AnswerHeaders;
  text(): Promise<string>;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** A Response's headers, read only (the global Headers class would load undici too). */
class AnswerHeaders {
  private readonly values = new Map<string, string>();

  constructor(message: IncomingMessage) {
    for (const [name, value] of Object.entries(message.headers)) {
      if (value !== undefined) this.values.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
  }

  get(name: string): string | null {
    return this.values.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.values.has(name.toLowerCase());
  }

  forEach(callback: (value: string, name: string) => void): void {
    for (const [name, value] of this.values) callback(value, name);
  }

  entries(): IterableIterator<[string, string]> {
    return this.values.entries();
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.values.entries();
  }
}

function send(url: URL, method: string, headers: Record<string, string>, body: string | Uint8Array | undefined): Promise<PlainResponse> {
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (message) => {
      const chunks: Buffer[] = [];
      message.on("data", (chunk: Buffer) => chunks.push(chunk));
      message.on("error", (error) => reject(new TypeError("fetch failed", { cause: error })));
      message.on("end", () => {
        const bytes = Buffer.concat(chunks);
        const status = message.statusCode ?? 0;
        resolve({
          ok: status >= 200 && status < 300,
          status,
          statusText: message.statusMessage ?? "",
          url: url.href,
          redirected: false,
          headers: new AnswerHeaders(message),
          text: async () => bytes.toString("utf8"),
          json: async () => JSON.parse(bytes.toString("utf8")) as unknown,
          arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
        });
      });
    });
    req.on("error", (error) => reject(new TypeError("fetch failed", { cause: error })));
    req.end(body);
  });
}
