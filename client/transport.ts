import { BrowserfnError, FunctionError, NetworkError, errorFromResponse } from "./errors";

/** How requests are sent: where, with which key, and how idempotent calls are retried. */
export interface TransportOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** An API key (`bfn_…`) or an OAuth 2.0 access token. */
  apiKey?: string | null;
  /** The fetch to use (default: the global `fetch`). */
  fetch?: typeof fetch;
  /** Retries of an idempotent call (GET, DELETE) after a 429, a 5xx or a failed connection. Default 3. */
  maxRetries?: number;
  /** First backoff when the answer has no `Retry-After`, doubled per attempt. Default 500 ms. */
  retryBaseDelayMs?: number;
  /** The longest wait between attempts, whatever `Retry-After` says. Default 30 s. */
  maxRetryDelayMs?: number;
  /** Extra headers sent with every request (e.g. `x-service-request-origin`). */
  headers?: Record<string, string>;
}

/** One request. `idempotent` calls are retried (an invocation is, under its Idempotency-Key); a create never is. */
export interface RequestSpec {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  idempotent: boolean;
  /** Read a successful answer's body as bytes (`ApiResponse.bytes`), not as JSON. */
  binary?: boolean;
}

/** A successful answer (2xx): status, headers and the parsed JSON body (undefined when empty). */
export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
  /** The body's bytes, for a request sent with `binary: true` (body is then undefined). */
  bytes?: Uint8Array;
}

/** What the client needs from a transport; tests and callers may wrap it. */
export type Send = (spec: RequestSpec) => Promise<ApiResponse>;

const RETRY_STATUSES = (status: number) => status === 429 || status >= 500;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function buildUrl(baseUrl: string, path: string, query: RequestSpec["query"]): string {
  const url = new URL(baseUrl.replace(/\/+$/, "") + path);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  return url.toString();
}

/**
 * Builds the `send` function of a client: JSON in and out over `fetch`, API error bodies
 * turned into error classes, and retries of idempotent calls honouring `Retry-After`.
 */
export function createTransport(options: TransportOptions): Send {
  const doFetch = options.fetch ?? globalThis.fetch;
  const maxRetries = options.maxRetries ?? 3;
  const baseDelay = options.retryBaseDelayMs ?? 500;
  const maxDelay = options.maxRetryDelayMs ?? 30_000;

  const once = async (spec: RequestSpec): Promise<ApiResponse> => {
    const headers: Record<string, string> = { accept: "application/json", ...options.headers, ...spec.headers };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    let body: string | undefined;
    if (spec.body !== undefined) {
      body = JSON.stringify(spec.body);
      headers["content-type"] = "application/json";
    }
    let response: Response;
    try {
      response = await doFetch(buildUrl(options.baseUrl, spec.path, spec.query), { method: spec.method, headers, body });
    } catch (error) {
      const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
      throw new NetworkError({ status: 0, code: "network_error", message: `Could not reach ${options.baseUrl}: ${cause}` });
    }
    if (spec.binary && response.ok) {
      return { status: response.status, headers: response.headers, body: undefined, bytes: new Uint8Array(await response.arrayBuffer()) };
    }
    const text = await response.text();
    if (!response.ok) throw errorFromResponse(response.status, response.headers, text);
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new BrowserfnError({ status: response.status, code: "unexpected_response", message: `The answer is not JSON: ${text.slice(0, 200)}` });
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };

  return async (spec) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await once(spec);
      } catch (error) {
        const retryable =
          spec.idempotent &&
          attempt < maxRetries &&
          error instanceof BrowserfnError &&
          // A run's own failure is its answer (a retry under its idempotency key would replay it).
          !(error instanceof FunctionError) &&
          (error instanceof NetworkError || RETRY_STATUSES(error.status));
        if (!retryable) throw error;
        const wait = error.retryAfter !== null ? error.retryAfter * 1000 : baseDelay * 2 ** attempt;
        await delay(Math.min(wait, maxDelay));
      }
    }
  };
}

