import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it was answered with. */
  answered: number;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook` */
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Statuses to answer, in turn; once used up, `fallback` (200 unless set). */
  answers: number[];
  fallback: number;
  /** While true, requests are kept (answered: 0) and never answered: a slow receiver (the sender times out). */
  hang: boolean;
  /** Resolves when `count` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1, an ephemeral port. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const waiters: (() => void)[] = [];
  const receiver: WebhookReceiver = {
    url: "",
    port: 0,
    received,
    answers: [],
    fallback: 200,
    hang: false,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} webhook request(s), got ${received.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 100);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received.slice(0, count);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (receiver.hang) {
        received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), answered: 0 });
        for (const wake of waiters.splice(0)) wake();
        return;
      }
      const answered = receiver.answers.shift() ?? receiver.fallback;
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), answered });
      response.writeHead(answered, { "content-type": "text/plain" }).end("ok");
      for (const wake of waiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  return receiver;
}

/**
 * Standard Webhooks verification, written from the specification (not the service's code): the
 * `webhook-signature` header holds space-separated `v1,<base64>` signatures; one must equal
 * base64(HMAC-SHA256(key, `${webhook-id}.${webhook-timestamp}.${body}`)) where key is the
 * base64-decoded part of the secret after `whsec_`.
 */
export function verifyStandardWebhook(secret: string, request: Pick<ReceivedWebhook, "headers" | "body">): boolean {
  const id = request.headers["webhook-id"];
  const timestamp = request.headers["webhook-timestamp"];
  const signatures = request.headers["webhook-signature"];
  if (typeof id !== "string" || typeof timestamp !== "string" || typeof signatures !== "string") return false;
  if (!secret.startsWith("whsec_")) return false;
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${request.body}`).digest();
  return signatures.split(" ").some((entry) => {
    const [version, signature] = entry.split(",");
    if (version !== "v1" || !signature) return false;
    const given = Buffer.from(signature, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
