import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  BrowserfnClient,
  ConflictError,
  FunctionError,
  FunctionTimeoutError,
  NotFoundError,
  RateLimitError,
  ServerError,
  ValidationError,
  errorClassFor,
  errorFromResponse,
  parseRetryAfter,
} from "../../client";
import { toRecord } from "../../lambdas/functions/toRecord";
import { functionItem } from "../helpers/records";

describe("client errors", () => {
  it("chooses the class by code, then by status", () => {
    expect(errorClassFor(404, "function_not_found")).toBe(NotFoundError);
    expect(errorClassFor(400, "invalid_parameters")).toBe(ValidationError);
    expect(errorClassFor(409, "function_exists")).toBe(ConflictError);
    expect(errorClassFor(429, "rate_limited")).toBe(RateLimitError);
    expect(errorClassFor(500, "function_error")).toBe(FunctionError);
    expect(errorClassFor(500, "function_crashed")).toBe(FunctionError);
    expect(errorClassFor(504, "function_timeout")).toBe(FunctionTimeoutError);
    expect(errorClassFor(500, "internal_error")).toBe(ServerError);
  });

  it("reads the API error body, Retry-After and the run id", () => {
    const body = JSON.stringify({ error: { code: "function_error", message: "boom", request_id: "r1", details: { run_id: "run_x" } } });
    const error = errorFromResponse(500, new Headers(), body);
    expect(error).toBeInstanceOf(FunctionError);
    expect(error).toMatchObject({ status: 500, code: "function_error", message: "boom", requestId: "r1", runId: "run_x", name: "FunctionError" });
    const limited = errorFromResponse(429, new Headers({ "retry-after": "7" }), JSON.stringify({ error: { code: "rate_limited", message: "m", request_id: "r", details: {} } }));
    expect((limited as RateLimitError).retryAfter).toBe(7);
    const notJson = errorFromResponse(502, new Headers({ "x-request-id": "gw" }), "<html>Bad gateway</html>");
    expect(notJson).toBeInstanceOf(ServerError);
    expect(notJson).toMatchObject({ code: "internal_error", requestId: "gw" });
    expect(notJson.message).toContain("Bad gateway");
  });

  it("parses Retry-After as seconds or an HTTP date", () => {
    expect(parseRetryAfter("3")).toBe(3);
    expect(parseRetryAfter(null)).toBeNull();
    expect(parseRetryAfter("soon")).toBeNull();
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5);
  });
});

describe("client retries (a real HTTP server on 127.0.0.1)", () => {
  let server: Server;
  let url: string;
  const seen: string[] = [];
  const keys: (string | undefined)[] = [];
  let failuresLeft = 0;

  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      keys.push(request.headers["idempotency-key"] as string | undefined);
      if (failuresLeft-- > 0) {
        response.writeHead(503, { "content-type": "application/json", "retry-after": "0" });
        response.end(JSON.stringify({ error: { code: "service_unavailable", message: "busy", request_id: "r", details: {} } }));
        return;
      }
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ status: "ok" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  it("retries a GET until it succeeds, within the bound", async () => {
    failuresLeft = 2;
    const client = new BrowserfnClient({ baseUrl: url, apiKey: "k", maxRetries: 3 });
    expect(await client.health()).toEqual({ status: "ok" });
    expect(seen).toEqual(["GET /health", "GET /health", "GET /health"]);
  });

  it("gives up after maxRetries and throws the last error", async () => {
    failuresLeft = 10;
    const client = new BrowserfnClient({ baseUrl: url, apiKey: "k", maxRetries: 2 });
    await expect(client.health()).rejects.toMatchObject({ status: 503, code: "service_unavailable" });
    expect(seen).toHaveLength(3);
  });

  it("retries an invocation under one Idempotency-Key per call, and never a create", async () => {
    failuresLeft = 10;
    keys.length = 0;
    const client = new BrowserfnClient({ baseUrl: url, apiKey: "k", maxRetries: 3 });
    await expect(client.invoke("f", { a: 1 })).rejects.toBeInstanceOf(ServerError);
    await expect(client.invoke("f", { a: "1" }, { method: "GET", idempotencyKey: "mine" })).rejects.toBeInstanceOf(ServerError);
    await expect(client.createFunction({ name: "f", code: "x" })).rejects.toBeInstanceOf(ServerError);
    expect(seen).toEqual([...Array(4).fill("POST /functions/f"), ...Array(4).fill("GET /functions/f?a=1"), "POST /functions"]);
    const [first, ...others] = keys.slice(0, 4);
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(others).toEqual([first, first, first]);
    expect(keys.slice(4, 8)).toEqual(["mine", "mine", "mine", "mine"]);
    expect(keys[8]).toBeUndefined();
  });
});

describe("waiting for a deploy (a real HTTP server on 127.0.0.1)", () => {
  it("reads /info until the function is no longer deploying, and gives up after its timeout", async () => {
    const statuses = ["deploying", "deploying", "active"];
    const reads: string[] = [];
    const server = createServer((request, response) => {
      reads.push(`${request.method} ${request.url}`);
      const status = (statuses.length > 1 ? statuses.shift() : statuses[0]) as "deploying" | "active";
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(toRecord(functionItem({ name: "title", status }), "http://api")));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const client = new BrowserfnClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: "k" });
      expect(await client.waitUntilDeployed("title", { intervalMs: 5 })).toMatchObject({ name: "title", status: "active" });
      expect(reads).toEqual(Array(3).fill("GET /functions/title/info"));
      statuses.splice(0, statuses.length, "deploying");
      const started = Date.now();
      expect(await client.waitUntilDeployed("title", { intervalMs: 5, timeoutMs: 60 })).toMatchObject({ status: "deploying" });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
