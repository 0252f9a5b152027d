/**
 * The hostile tenant's own side of bench/hostileWebhooks.ts, in processes of their own so that
 * what it does (3 MB answers and webhook bodies read, many connections) does not share the
 * event loop that times the other tenant's calls (as hostileBodies.ts's flood):
 *
 * - `--receivers`: two webhook receivers; one never answers, one answers the status the parent
 *   sends over IPC (`{ status }`); `{ counts: true }` is answered with each one's requests;
 * - `--callers <url> <key> <callers> <async>`: that many callers of the hostile function without
 *   pause until SIGTERM, then prints `answers=<JSON of answers by status>`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

async function receiver(answer: () => number | "hang") {
  let requests = 0;
  const held: ServerResponse[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    requests++;
    request.resume();
    request.on("end", () => {
      const status = answer();
      if (status === "hang") held.push(response);
      else response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, requests: () => requests };
}

async function receivers(): Promise<void> {
  let status = 200;
  const hanging = await receiver(() => "hang");
  const failing = await receiver(() => status);
  process.on("message", (message: { status?: number; counts?: boolean }) => {
    if (message.status !== undefined) status = message.status;
    if (message.counts) process.send?.({ counts: { hanging_receiver: hanging.requests(), failing_receiver: failing.requests() } });
  });
  process.send?.({ urls: { hanging: hanging.url, failing: failing.url } });
}

async function callers(url: string, key: string, count: number, respondAsync: boolean): Promise<void> {
  let stop = false;
  const answers: Record<string, number> = {};
  const all = Array.from({ length: count }, async () => {
    while (!stop) {
      const response = await fetch(`${url}/functions/poison`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(respondAsync ? { prefer: "respond-async" } : {}) },
      }).catch(() => undefined);
      await response?.arrayBuffer().catch(() => undefined);
      const status = String(response?.status ?? "error");
      answers[status] = (answers[status] ?? 0) + 1;
      if (status === "429" || status === "error") await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });
  process.once("SIGTERM", () => (stop = true));
  await Promise.all(all);
  process.stdout.write(`answers=${JSON.stringify(answers)}\n`);
}

const [mode, ...args] = process.argv.slice(2);
if (mode === "--receivers") void receivers();
else if (mode === "--callers") void callers(String(args[0]), String(args[1]), Number(args[2]), args[3] === "1").then(() => process.exit(0));
else {
  console.error("usage: hostileWebhookPeers.ts --receivers | --callers <url> <key> <callers> <async 0|1>");
  process.exit(2);
}
