/**
 * Malformed HTTP, sent byte for byte over TCP: request targets, headers, bodies and framing
 * that fetch would refuse to build. Every answer is the API's JSON error shape (or a success
 * where the request is in fact fine), and the service keeps serving.
 */
import { type AddressInfo, connect } from "node:net";
import { createHttpServer } from "../../lambdas/local/httpServer";
import { ROUTES } from "../../lambdas/routes/routeTable";
import fc from "fast-check";
import { ECHO_FN } from "../helpers/code";
import { checkAnswer, fromFetch, fromRaw, fuzzSettings, fuzzTimeout, writeTallies } from "../helpers/fuzzChecks";
import { type CapturingService, startCapturingService } from "../helpers/fuzzService";
import { parseResponse, rawRequest } from "../helpers/rawHttp";

let t: CapturingService;
beforeAll(async () => {
  t = await startCapturingService();
  expect((await t.call("POST", "/functions", { body: { name: "echo", code: ECHO_FN } })).status).toBe(201);
});
afterAll(async () => {
  writeTallies();
  await t.destroy();
});

const send = (request: string | Buffer) => rawRequest(t.url, request);
const auth = () => `Authorization: Bearer ${t.adminKey}\r\n`;

async function expectServing(): Promise<void> {
  const health = await t.call("GET", "/health");
  expect(health.status).toBe(200);
}

describe("request targets", () => {
  it("answers targets that are not paths with 400 invalid_request, also with the request log on (regression: `GET http://[bad` crashed the service)", async () => {
    for (const target of ["http://[bad/functions", "*", "http://", "https://[::1/x", "example.com:80"]) {
      const answer = await send(`GET ${target} HTTP/1.1\r\nHost: x\r\n${auth()}Connection: close\r\n\r\n`);
      checkAnswer(`GET ${target}`, fromRaw(answer), ["invalid_request"]);
    }
    // The last one Node's parser refuses itself: its line names neither method nor path.
    expect(t.requestLog.filter((line) => / (GET|-) - 400 /.test(line))).toHaveLength(5);
    await expectServing();
  });

  it("routes the absolute form by its path and never lets `//host/path` reach another route", async () => {
    const absolute = await send(`GET ${t.url}/functions HTTP/1.1\r\nHost: x\r\n${auth()}Connection: close\r\n\r\n`);
    expect(absolute.status).toBe(200);
    const doubled = await send(`GET //evil.example/functions HTTP/1.1\r\nHost: x\r\n${auth()}Connection: close\r\n\r\n`);
    checkAnswer("GET //evil.example/functions", fromRaw(doubled), ["route_not_found"]);
  });

  it("answers random request targets in the JSON error shape", async () => {
    // Printable ASCII, and bytes that are not UTF-8, which Node's parser takes or refuses.
    const targetByte = fc.oneof(
      fc.integer({ min: 0x21, max: 0x7e }),
      fc.constantFrom(0x80, 0xc3, 0xe2, 0xed, 0xfe, 0xff),
    );
    const target = fc.oneof(
      fc.array(targetByte, { minLength: 1, maxLength: 120 }).map((bytes) => Buffer.from(bytes)),
      fc.array(targetByte, { maxLength: 60 }).map((bytes) => Buffer.concat([Buffer.from("/functions/"), Buffer.from(bytes)])),
      fc.array(targetByte, { maxLength: 60 }).map((bytes) => Buffer.concat([Buffer.from("/functions?"), Buffer.from(bytes)])),
    );
    const method = fc.constantFrom("GET", "POST", "PATCH", "DELETE", "PUT", "HEAD", "OPTIONS");
    await fc.assert(
      fc.asyncProperty(method, target, async (verb, bytes) => {
        const head = Buffer.concat([Buffer.from(`${verb} `), bytes, Buffer.from(` HTTP/1.1\r\nHost: x\r\n${auth()}Content-Length: 0\r\nConnection: close\r\n\r\n`)]);
        const answer = await send(head);
        if (verb === "HEAD") {
          expect(answer.status).toBeLessThan(500);
          return;
        }
        checkAnswer(
          `${verb} ${bytes.toString("latin1")}`,
          fromRaw(answer),
          ["invalid_request", "route_not_found", "method_not_allowed", "function_not_found", "invalid_limit", "invalid_parameters"],
          [200],
          "raw request targets",
        );
      }),
      fuzzSettings(150),
    );
    await expectServing();
  }, fuzzTimeout(150, 150));
});

describe("what Node's HTTP parser refuses", () => {
  it("answers in the JSON error shape, with a request id, instead of a bare status line", async () => {
    const cases: [string, string | Buffer, number, string][] = [
      ["headers over 16 KB", `GET /functions HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\nConnection: close\r\n\r\n`, 431, "headers_too_large"],
      ["not HTTP", "GARBAGE\r\n\r\n", 400, "invalid_request"],
      ["a header without a colon", "GET /functions HTTP/1.1\r\nHost: x\r\nBad Header\r\nConnection: close\r\n\r\n", 400, "invalid_request"],
      ["a bare CR in a header value", "GET /functions HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\nConnection: close\r\n\r\n", 400, "invalid_request"],
      ["a target with bytes that are not UTF-8", Buffer.concat([Buffer.from("GET /functions/"), Buffer.from([0xff, 0xfe, 0x00]), Buffer.from("/info HTTP/1.1\r\nHost: x\r\n\r\n")]), 400, "invalid_request"],
      ["a bad chunk size", `POST /functions/echo HTTP/1.1\r\nHost: x\r\n${auth()}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`, 400, "invalid_request"],
      ["a Content-Length that is not a number", `POST /functions/echo HTTP/1.1\r\nHost: x\r\n${auth()}Content-Length: abc\r\nConnection: close\r\n\r\n{}`, 400, "invalid_request"],
      ["both Content-Length and chunked", `POST /functions/echo HTTP/1.1\r\nHost: x\r\n${auth()}Content-Length: 2\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`, 400, "invalid_request"],
      ["HTTP/1.1 without Host", `GET /functions HTTP/1.1\r\n${auth()}Connection: close\r\n\r\n`, 400, "invalid_request"],
      ["an unknown HTTP version", "GET /health HTTP/9.9\r\nHost: x\r\nConnection: close\r\n\r\n", 400, "invalid_request"],
    ];
    for (const [what, request, status, code] of cases) {
      const answer = await send(request);
      expect({ what, status: answer.status }).toEqual({ what, status });
      checkAnswer(what, fromRaw(answer), [code]);
    }
    await expectServing();
  });

  it("answers a request whose head does not arrive in time with 408 request_timeout", async () => {
    // The service's own server with Node's timeouts short enough to wait for.
    const server = createHttpServer(ROUTES, t.service.deps, null, { headersTimeout: 300, requestTimeout: 300, connectionsCheckingInterval: 50 });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const answer = await rawRequest(url, `GET /functions HTTP/1.1\r\nHost: x\r\n${auth()}`); // the head never ends
      expect(answer.status).toBe(408);
      checkAnswer("a head that never ends", fromRaw(answer), ["request_timeout"]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("answers a malformed request that follows a good one on the same connection after the good one's answer", async () => {
    const answer = await send(`GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n`);
    expect(answer.status).toBe(200);
    const second = answer.raw.slice(answer.raw.indexOf("HTTP/1.1", 1));
    expect(second).toMatch(/^HTTP\/1\.1 400 /);
    checkAnswer("pipelined malformed request", fromRaw(parseResponse(Buffer.from(second))), ["invalid_request"]);
  });

  it("answers random header names and values in the JSON error shape, or serves the request", async () => {
    const headerByte = fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.constantFrom(0x09, 0x0d, 0x0a, 0x00, 0x7f, 0x80, 0xff));
    const bytes = (max: number) => fc.array(headerByte, { maxLength: max }).map((b) => Buffer.from(b));
    await fc.assert(
      fc.asyncProperty(bytes(30), bytes(200), fc.boolean(), async (name, value, withAuth) => {
        const request = Buffer.concat([
          Buffer.from(`GET /functions HTTP/1.1\r\nHost: x\r\n${withAuth ? auth() : ""}`),
          name,
          Buffer.from(": "),
          value,
          Buffer.from("\r\nConnection: close\r\n\r\n"),
        ]);
        const answer = await send(request);
        checkAnswer(`header ${JSON.stringify(name.toString("latin1"))}`, fromRaw(answer), ["invalid_request", "missing_token", "invalid_token"], [200], "raw headers");
      }),
      fuzzSettings(100),
    );
    await expectServing();
  }, fuzzTimeout(100, 150));
});

describe("bodies", () => {
  it("answers a chunked body over 6 MB with 413 payload_too_large (no Content-Length to refuse it by)", async () => {
    const chunk = Buffer.alloc(1024 * 1024, "x");
    const parts = [Buffer.from(`POST /functions HTTP/1.1\r\nHost: x\r\n${auth()}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n`)];
    for (let i = 0; i < 7; i++) parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n"));
    parts.push(Buffer.from("0\r\n\r\n"));
    checkAnswer("chunked 7 MB", fromRaw(await send(Buffer.concat(parts))), ["payload_too_large"]);
    const small = `{"message":"chunked"}`;
    const ok = await send(
      `POST /functions/echo HTTP/1.1\r\nHost: x\r\n${auth()}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${small.length.toString(16)}\r\n${small}\r\n0\r\n\r\n`,
    );
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toEqual({ echo: ["chunked"] });
  });

  it("answers a Content-Length over 6 MB with 413 before reading the body", async () => {
    const answer = await send(`POST /functions HTTP/1.1\r\nHost: x\r\n${auth()}Content-Length: 6291457\r\nConnection: close\r\n\r\n{}`);
    checkAnswer("Content-Length 6291457", fromRaw(answer), ["payload_too_large"]);
  });

  it("takes bodies that are not UTF-8 as text and answers in the JSON error shape", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), fc.constantFrom("/functions", "/functions/echo", "/api-keys"), async (body, path) => {
        const head = `POST ${path} HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
        const answer = await send(Buffer.concat([Buffer.from(head), body]));
        checkAnswer(`POST ${path} ${Buffer.from(body).toString("hex")}`, fromRaw(answer), ["invalid_request", "invalid_name", "invalid_code", "invalid_parameters"], [200, 201], "raw bodies");
      }),
      fuzzSettings(100),
    );
  }, fuzzTimeout(100, 150));

  it("reads a body as JSON whatever its Content-Type says, and answers what is not JSON with 400 invalid_request", async () => {
    const json = JSON.stringify({ message: "typed" });
    for (const type of ["application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "", "application/json; charset=utf-16", "*/*; q=0"]) {
      const answer = await t.call("POST", "/functions/echo", { body: json, headers: { "content-type": type } });
      expect({ type, status: answer.status, body: answer.body }).toEqual({ type, status: 200, body: { echo: ["typed"] } });
    }
    const notJson: [string, string | Buffer][] = [
      ["application/x-www-form-urlencoded", "message=typed"],
      ["multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="message"\r\n\r\ntyped\r\n--x--\r\n'],
      ["application/xml", "<message>typed</message>"],
      ["application/json; charset=utf-16le", Buffer.from(json, "utf16le")],
    ];
    for (const [type, body] of notJson) {
      const head = `POST /functions/echo HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
      checkAnswer(`POST as ${type}`, fromRaw(await send(Buffer.concat([Buffer.from(head), Buffer.from(body)]))), ["invalid_request"]);
    }
  });

  it("keeps serving when a client goes away in the middle of a body", async () => {
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve, reject) => {
        const { hostname, port } = new URL(t.url);
        const socket = connect({ host: hostname, port: Number(port) }, () => {
          socket.write(`POST /functions/echo HTTP/1.1\r\nHost: x\r\n${auth()}Content-Length: 1000\r\n\r\n{"message":`);
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 20);
        });
        socket.on("error", reject);
      });
    }
    const answer = await t.call("POST", "/functions/echo", { body: { message: "still here" } });
    checkAnswer("after aborted bodies", fromFetch(answer), [], [200]);
  });
});
