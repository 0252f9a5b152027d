import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { httpFetch } from "../../bin/cli/httpFetch";
import { BrowserfnClient } from "../../client";
import { NetworkError, NotFoundError } from "../../client/errors";

// The CLI's fetch over node:http (bin/cli/httpFetch.ts), against a real server on 127.0.0.1:
// the API client must read the same answers through it as through the global fetch.

let server: Server;
let base: string;
const seen: { method: string; url: string; authorization?: string; body: string }[] = [];

function handle(req: IncomingMessage, res: ServerResponse, body: string): void {
  seen.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body });
  if (req.url === "/functions?limit=2") {
    res.writeHead(200, { "content-type": "application/json", "x-request-id": "r1" }).end(JSON.stringify({ items: [{ name: "a" }] }));
  } else if (req.url === "/functions" && req.method === "POST") {
    res.writeHead(201, { "content-type": "application/json" }).end(body);
  } else if (req.url === "/runs/r1/artifacts/shot.png") {
    res.writeHead(302, { location: `${base}/download/shot.png` }).end();
  } else if (req.url === "/download/shot.png") {
    res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([137, 80, 78, 71]));
  } else {
    res.writeHead(404, { "content-type": "application/json", "x-request-id": "r404" }).end(
      JSON.stringify({ error: { code: "not_found", message: "no such thing", request_id: "r404", details: null } }),
    );
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => handle(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("the CLI's fetch over node:http", () => {
  const client = () => new BrowserfnClient({ baseUrl: base, apiKey: "bfn_key", fetch: httpFetch, maxRetries: 0 });

  it("sends the client's JSON requests with their headers and body, and answers their status, headers and JSON", async () => {
    expect(await client().listFunctions({ limit: 2 })).toEqual({ items: [{ name: "a" }] });
    const created = await client().send({ method: "POST", path: "/functions", body: { name: "x", code: "c" }, idempotent: false });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ name: "x", code: "c" });
    expect(seen.slice(-2).map(({ method, url, authorization, body }) => ({ method, url, authorization, body }))).toEqual([
      { method: "GET", url: "/functions?limit=2", authorization: "Bearer bfn_key", body: "" },
      { method: "POST", url: "/functions", authorization: "Bearer bfn_key", body: '{"name":"x","code":"c"}' },
    ]);
  });

  it("turns an API error into the client's error class, with its request id", async () => {
    const error = await client().getFunction("missing").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: "not_found", requestId: "r404" });
  });

  it("follows a download's redirect (through the global fetch) and answers the bytes", async () => {
    const download = await client().downloadArtifact("r1", "shot.png");
    expect(download.contentType).toBe("image/png");
    expect([...download.bytes]).toEqual([137, 80, 78, 71]);
  });

  it("fails a refused connection as a network error naming the service", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const error = await new BrowserfnClient({ baseUrl: url, fetch: httpFetch, maxRetries: 0 }).health().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toMatch(new RegExp(`Could not reach ${url}: .*ECONNREFUSED`));
  });
});
