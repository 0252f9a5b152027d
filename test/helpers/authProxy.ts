import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface AuthProxy {
  /** `http://127.0.0.1:<port>`. */
  server: string;
  host: string;
  /** Each request it forwarded: method and absolute URL. */
  seen: string[];
  /** Requests it refused for missing or wrong credentials. */
  refused: number;
  close(): Promise<void>;
}

/**
 * A small HTTP proxy on 127.0.0.1 that wants `Proxy-Authorization: Basic <user:password>` (407
 * with a Basic challenge otherwise) and forwards plain-HTTP requests. Every host it is asked
 * for is served by `upstream` (a test server), so a page of `http://shop.test/` exists only
 * through this proxy.
 */
export async function startAuthProxy(username: string, password: string, upstream: string): Promise<AuthProxy> {
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  const target = new URL(upstream);
  const state = { seen: [] as string[], refused: 0 };
  const server: Server = createServer((request, response) => {
    if (request.headers["proxy-authorization"] !== expected) {
      state.refused++;
      response.writeHead(407, { "proxy-authenticate": 'Basic realm="test proxy"', "content-type": "text/plain" });
      response.end("proxy authentication required");
      return;
    }
    const url = new URL(request.url ?? "/", "http://unknown");
    state.seen.push(`${request.method} ${url.href}`);
    const headers = { ...request.headers };
    delete headers["proxy-authorization"];
    delete headers["proxy-connection"];
    const forwarded = httpRequest(
      { host: target.hostname, port: target.port, method: request.method, path: `${url.pathname}${url.search}`, headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on("error", () => {
      response.writeHead(502);
      response.end();
    });
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    get seen() {
      return state.seen;
    },
    get refused() {
      return state.refused;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
