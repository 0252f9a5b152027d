import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import dynalite from "dynalite";

export interface DynaliteServer {
  endpoint: string;
  close(): Promise<void>;
}

/** A DynamoDB-API server on an ephemeral loopback port, persisting under `path` (in memory when null). */
export async function startDynalite(path: string | null): Promise<DynaliteServer> {
  const server: Server = dynalite({
    ...(path ? { path } : {}),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
