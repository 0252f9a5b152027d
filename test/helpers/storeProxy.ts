import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { STORE_SECRET_HEADER } from "../../lambdas/local/dynaliteDocumentClient";
import type { DynaliteServer } from "../../lambdas/local/dynaliteServer";

export interface StoreProxy {
  endpoint: string;
  close(): Promise<void>;
}

/**
 * An endpoint on 127.0.0.1 that passes each request on to `dynamo` with the store's secret
 * added: for a process whose DynamoDB client is configured by its environment alone
 * (AWS_ENDPOINT_URL_DYNAMODB, as on AWS) and so cannot send the secret itself.
 */
export async function startStoreProxy(dynamo: Pick<DynaliteServer, "endpoint" | "secret">): Promise<StoreProxy> {
  const target = new URL(dynamo.endpoint);
  const server = createServer((req, res) => {
    const { host: _host, connection: _connection, ...headers } = req.headers;
    const forwarded = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...headers, [STORE_SECRET_HEADER]: dynamo.secret } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on("error", () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
