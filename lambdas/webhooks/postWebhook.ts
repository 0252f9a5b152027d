import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { literalAddressOf, refusedAddressReason } from "../network/addressPolicy";

/** How long an attempt may take, from resolving the host to the answer's status line. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** The most of an answer's body read (then the connection is closed): only its status counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface PostOptions {
  /** Loopback and private targets are allowed (BROWSERFN_ALLOW_LOCAL_NETWORK). */
  allowLocalNetwork: boolean;
  timeoutMs?: number;
  /** Aborts the attempt (the service is stopping); it then counts as not made. */
  signal?: AbortSignal;
  /** Resolves a host to all its addresses (tests; default: the system resolver). */
  resolve?: (hostname: string) => Promise<{ address: string; family: number }[]>;
}

/** What an attempt got: a 2xx, another status, or no answer (with why). */
export type PostResult = { ok: boolean; status_code: number | null; error: string | null };

/**
 * POSTs `body` to `url` once. The host is resolved now and every address it has is checked
 * (refusedAddressReason) unless the local network is allowed; the connection then goes to the
 * address that was checked (pinned: a second lookup cannot swap it), while the Host header and
 * TLS's server name stay the URL's host. Redirects are not followed (a 3xx is a failed
 * attempt). Never throws for the target's sake; an abort through `signal` rejects.
 */
export async function postWebhook(url: string, headers: Record<string, string>, body: string, options: PostOptions): Promise<PostResult> {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  // One controller, held by the timer and the stop's listener until the attempt ends. Not
  // AbortSignal.timeout and AbortSignal.any: their signals are held weakly, and Node 20 lets a
  // garbage collection drop them before they fire, so an attempt on a receiver that never
  // answered then waited forever, holding its slot (seen under the GC of 3 MB results).
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  const stop = options.signal;
  const onStop = () => deadline.abort(stop?.reason);
  stop?.addEventListener("abort", onStop, { once: true });
  try {
    return await attempt(url, headers, body, options, deadline.signal, timeoutMs);
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener("abort", onStop);
  }
}

async function attempt(url: string, headers: Record<string, string>, body: string, options: PostOptions, signal: AbortSignal, timeoutMs: number): Promise<PostResult> {
  const target = new URL(url);
  let pinned: { address: string; family: number };
  try {
    const literal = literalAddressOf(target.hostname);
    const addresses = literal ? [{ address: literal, family: literal.includes(":") ? 6 : 4 }] : await (options.resolve ?? resolveAll)(target.hostname);
    const first = addresses[0];
    if (!first) return failure(`${target.hostname} has no address`);
    if (!options.allowLocalNetwork) {
      const refused = addresses.map((entry) => refusedAddressReason(entry.address)).find((reason) => reason !== null);
      if (refused) return failure(`refused: ${target.hostname} resolves to a non-public address (${refused}); set BROWSERFN_ALLOW_LOCAL_NETWORK=true to allow it`);
    }
    pinned = first;
  } catch (error) {
    return failure(`cannot resolve ${target.hostname}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (options.signal?.aborted) throw options.signal.reason;
  return send(target, pinned, { headers, body, signal, stop: options.signal, timeoutMs });
}

async function resolveAll(hostname: string): Promise<{ address: string; family: number }[]> {
  return dnsLookup(hostname, { all: true, verbatim: true });
}

interface Sending {
  headers: Record<string, string>;
  body: string;
  /** The attempt's deadline and the service's stop, together. */
  signal: AbortSignal;
  stop: AbortSignal | undefined;
  timeoutMs: number;
}

function send(target: URL, pinned: { address: string; family: number }, { headers, body, signal, stop, timeoutMs }: Sending): Promise<PostResult> {
  // The connection's only lookup answers with the address checked above.
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const client = target.protocol === "https:" ? https : http;
  return new Promise<PostResult>((resolve, reject) => {
    const request = client.request(
      {
        protocol: target.protocol,
        hostname: target.hostname.replace(/^\[|\]$/g, ""),
        port: target.port || undefined,
        path: `${target.pathname}${target.search}`,
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "user-agent": "browserfn-webhooks/1" },
        lookup,
        agent: false,
        signal,
        ...(target.protocol === "https:" ? { servername: literalAddressOf(target.hostname) ? undefined : target.hostname } : {}),
      },
      (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        const done = () => resolve({ ok: status >= 200 && status < 300, status_code: status, error: status >= 200 && status < 300 ? null : `answered HTTP ${status}` });
        response.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) {
            response.destroy();
            done();
          }
        });
        response.on("end", done);
        response.on("error", done);
        response.on("close", done);
      },
    );
    request.on("error", (error: NodeJS.ErrnoException) => {
      if (stop?.aborted) reject(stop.reason);
      else if (signal.aborted) resolve(failure(`no answer within ${timeoutMs} ms`));
      else resolve(failure(`connection failed: ${error.code ?? error.message}`));
    });
    request.end(body);
  });
}

function failure(error: string): PostResult {
  return { ok: false, status_code: null, error };
}
