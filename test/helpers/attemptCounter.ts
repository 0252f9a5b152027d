import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface AttemptCounter {
  /** `http://127.0.0.1:<port>/`: a GET of `<url><name>` answers how many times `name` was asked, this time included. */
  url: string;
  /** How many times `name` was asked. */
  count(name: string): number;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 that counts requests per path: automations fetch it to know
 * which attempt they are (each attempt may run in a new worker process, so it keeps no state).
 */
export async function startAttemptCounter(): Promise<AttemptCounter> {
  const counts = new Map<string, number>();
  const server = createServer((request, response) => {
    const name = (request.url ?? "/").slice(1);
    const n = (counts.get(name) ?? 0) + 1;
    counts.set(name, n);
    response.writeHead(200, { "content-type": "text/plain" });
    response.end(String(n));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    count: (name) => counts.get(name) ?? 0,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
