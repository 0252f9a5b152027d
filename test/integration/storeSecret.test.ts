import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { DynaliteDocumentClient, STORE_SECRET_HEADER } from "../../lambdas/local/dynaliteDocumentClient";
import { type DynaliteServer, startDynalite } from "../../lambdas/local/dynaliteServer";
import { isStoreUnavailable } from "../../lambdas/store/dynamo";
import { NO_PARAMS_FN } from "../helpers/code";
import { startTestService, type TestService } from "../helpers/localService";

// Automation code can reach 127.0.0.1 in some modes (workers on the host network, even as the
// service's own user). dynalite answers whoever reaches its port, so the store must refuse
// every request that does not carry the secret the service made when it started dynalite.

/** One request in DynamoDB's JSON protocol, signed or not: dynalite checks no signature. */
async function dynamoRequest(endpoint: string, operation: string, input: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${endpoint}/`, {
    method: "POST",
    headers: {
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": `DynamoDB_20120810.${operation}`,
      authorization: "AWS4-HMAC-SHA256 Credential=x/20260101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
      "x-amz-date": "20260101T000000Z",
      ...headers,
    },
    body: JSON.stringify(input),
  });
  const text = await response.text();
  return { status: response.status, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

const REFUSED = { __type: "com.amazon.coral.service#UnrecognizedClientException", message: expect.any(String) };

describe("a local service's store, reached directly", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
    await t.deploy("kept", NO_PARAMS_FN);
  }, 60_000);
  afterAll(() => t?.destroy());

  const wrongSecrets = () => [
    randomBytes(32).toString("base64url"), // as long as the right one
    "",
    `${t.service.storeSecret}x`,
    t.service.storeSecret.slice(0, -1),
  ];

  it("refuses a request without the secret with 403, and answers nothing of the tables", async () => {
    const list = await dynamoRequest(t.service.dynamoEndpoint, "ListTables", {});
    expect(list.status).toBe(403);
    expect(list.body).toEqual(REFUSED);
    expect(list.text).not.toContain("browserfn");

    const scan = await dynamoRequest(t.service.dynamoEndpoint, "Scan", { TableName: "browserfn-main" });
    expect(scan.status).toBe(403);
    expect(scan.body).toEqual(REFUSED);
    expect(scan.text).not.toContain("kept");

    const put = await dynamoRequest(t.service.dynamoEndpoint, "PutItem", { TableName: "browserfn-main", Item: { pk: { S: "INTRUDER" }, sk: { S: "X" } } });
    expect(put.status).toBe(403);
    const written = await dynamoRequest(t.service.dynamoEndpoint, "GetItem", { TableName: "browserfn-main", Key: { pk: { S: "INTRUDER" }, sk: { S: "X" } } }, {
      [STORE_SECRET_HEADER]: t.service.storeSecret,
    });
    expect(written).toMatchObject({ status: 200, body: {} }); // the refused write wrote nothing
  });

  it("refuses a request with a wrong secret", async () => {
    for (const secret of wrongSecrets()) {
      const list = await dynamoRequest(t.service.dynamoEndpoint, "ListTables", {}, { [STORE_SECRET_HEADER]: secret });
      expect([secret, list.status, list.body]).toEqual([secret, 403, REFUSED]);
      const scan = await dynamoRequest(t.service.dynamoEndpoint, "Scan", { TableName: "browserfn-main" }, { [STORE_SECRET_HEADER]: secret });
      expect([secret, scan.status]).toEqual([secret, 403]);
      expect(scan.text).not.toContain("kept");
    }
  });

  it("refuses a browser's CORS preflight (a page the automation visits cannot probe it either)", async () => {
    const response = await fetch(`${t.service.dynamoEndpoint}/`, {
      method: "OPTIONS",
      headers: { origin: "https://example.com", "access-control-request-method": "POST", "access-control-request-headers": "x-amz-target" },
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("goes on serving the service itself: creating and invoking functions", async () => {
    await t.deploy("after-probes", NO_PARAMS_FN);
    const invoked = await t.call("POST", "/functions/after-probes");
    expect([invoked.status, invoked.body]).toEqual([200, { ok: true }]);
    expect((await t.call("GET", "/functions/kept/info")).status).toBe(200);
  }, 60_000);

  it("answers a request that carries the secret (so the refusals above are the secret's doing)", async () => {
    const headers = { [STORE_SECRET_HEADER]: t.service.storeSecret };
    const list = await dynamoRequest(t.service.dynamoEndpoint, "ListTables", {}, headers);
    expect(list.status).toBe(200);
    expect(list.body?.TableNames).toContain("browserfn-main");
    const scan = await dynamoRequest(t.service.dynamoEndpoint, "Scan", { TableName: "browserfn-main" }, headers);
    expect(scan.status).toBe(200);
    expect(scan.text).toContain("kept");
  });
});

describe("the store's secret (startDynalite)", () => {
  const servers: DynaliteServer[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it("is made anew for each start, and is in neither the command line nor the environment of dynalite's process", async () => {
    const first = await startDynalite(null);
    servers.push(first);
    const second = await startDynalite(null);
    servers.push(second);
    expect(first.secret).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes
    expect(second.secret).not.toBe(first.secret);
    for (const server of [first, second]) {
      const pid = server.pid();
      expect(pid).toBeDefined();
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      expect(cmdline).toContain("dynaliteChild.cjs"); // the right process
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      expect(environ).toContain("PATH=");
      for (const secret of [first.secret, second.secret]) {
        expect(cmdline).not.toContain(secret);
        expect(environ).not.toContain(secret);
      }
    }
    // One start's secret does not open another's store.
    const crossed = await dynamoRequest(second.endpoint, "ListTables", {}, { [STORE_SECRET_HEADER]: first.secret });
    expect(crossed.status).toBe(403);
  });

  it("stays the same across a restart of dynalite, which refuses requests without it as before", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "browserfn-store-secret-"));
    dirs.push(dir);
    const server = await startDynalite(path.join(dir, "dynamodb"), { log: () => undefined, backoffMs: 10 });
    servers.push(server);
    const headers = { [STORE_SECRET_HEADER]: server.secret };
    expect((await dynamoRequest(server.endpoint, "ListTables", {}, headers)).status).toBe(200);
    const before = server.pid();
    process.kill(before as number, "SIGKILL");
    const deadline = Date.now() + 20_000;
    while (server.restarts() < 1 || server.pid() === undefined) {
      if (Date.now() > deadline) throw new Error("dynalite was not restarted");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(server.pid()).not.toBe(before);
    expect(readFileSync(`/proc/${server.pid()}/cmdline`, "utf8")).not.toContain(server.secret);
    expect((await dynamoRequest(server.endpoint, "ListTables", {}, headers)).status).toBe(200);
    expect((await dynamoRequest(server.endpoint, "ListTables", {})).status).toBe(403);
  }, 30_000);

  it("is required of the local document client: a wrong one fails as a client error, not tried again, not 'unavailable'", async () => {
    const server = await startDynalite(null);
    servers.push(server);
    const wrong = new DynaliteDocumentClient(server.endpoint, randomBytes(32).toString("base64url"), { requestTimeoutMs: 5000, maxAttempts: 3 });
    const right = new DynaliteDocumentClient(server.endpoint, server.secret, { requestTimeoutMs: 5000, maxAttempts: 3 });
    try {
      const error = await wrong.send(new GetCommand({ TableName: "missing", Key: { pk: "a" } })).catch((e: unknown) => e as Error);
      expect(error).toMatchObject({ name: "UnrecognizedClientException", $fault: "client", $metadata: { httpStatusCode: 403 } });
      expect(isStoreUnavailable(error)).toBe(false);
      // With the right one the same request reaches dynalite (which has no such table).
      await expect(right.send(new GetCommand({ TableName: "missing", Key: { pk: "a" } }))).rejects.toMatchObject({ name: "ResourceNotFoundException" });
    } finally {
      wrong.destroy();
      right.destroy();
    }
  });
});

describe("dynalite's process (dynaliteChild.cjs)", () => {
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child?.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    child = undefined;
  });

  const freePort = () =>
    new Promise<number>((resolve, reject) => {
      const probe = createServer();
      probe.once("error", reject);
      probe.listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
  const start = (port: number) =>
    spawn(process.execPath, [path.join(__dirname, "..", "..", "lambdas", "local", "dynaliteChild.cjs"), String(port)], {
      stdio: ["ignore", "ignore", "ignore", "ipc"],
      env: { PATH: process.env.PATH ?? "" },
    });
  const refused = (port: number) => fetch(`http://127.0.0.1:${port}/`, { method: "POST" }).then(
    () => false,
    (error: Error & { cause?: { code?: string } }) => error.cause?.code === "ECONNREFUSED",
  );

  it("serves nothing until the secret has come over its IPC channel", async () => {
    const port = await freePort();
    const running = start(port);
    child = running;
    const messages: { type: string; port?: number }[] = [];
    running.on("message", (message: { type: string; port?: number }) => messages.push(message));
    await new Promise((resolve) => setTimeout(resolve, 1500)); // long enough for dynalite to load and listen, had it not waited
    expect(messages).toEqual([]);
    expect(await refused(port)).toBe(true);
    const secret = randomBytes(32).toString("base64url");
    running.send({ type: "secret", secret });
    const deadline = Date.now() + 10_000;
    while (messages.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(messages).toEqual([{ type: "listening", port }]);
    expect((await dynamoRequest(`http://127.0.0.1:${port}`, "ListTables", {}, { [STORE_SECRET_HEADER]: secret })).status).toBe(200);
    expect((await dynamoRequest(`http://127.0.0.1:${port}`, "ListTables", {})).status).toBe(403);
  }, 20_000);

  it("refuses to start with a secret that is too short to be one", async () => {
    const running = start(await freePort());
    child = running;
    const message = new Promise((resolve) => running.once("message", resolve));
    const exited = new Promise((resolve) => running.once("exit", (code) => resolve(code)));
    running.send({ type: "secret", secret: "" });
    expect(await message).toMatchObject({ type: "error" });
    expect(await exited).toBe(1);
  });
});
