import {
  AuthenticationError,
  BrowserfnClient,
  BrowserfnError,
  ConflictError,
  FunctionError,
  FunctionTimeoutError,
  NetworkError,
  NotFoundError,
  ValidationError,
  WaitTimeoutError,
} from "../../client";
import { ECHO_FN } from "../helpers/code";
import { type TestService, startTestService } from "../helpers/localService";

const SLEEP_FN = `export default async function run(ms: number = 2000) {
  await new Promise((resolve) => setTimeout(resolve, ms));
  return { slept: ms };
}
`;
const THROW_FN = `export default async function run(reason: string) {
  throw new Error("broke: " + reason);
}
`;

/** Runs `fn` and returns what it threw (fails the test when it did not throw). */
async function thrown(fn: () => Promise<unknown>): Promise<BrowserfnError> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof BrowserfnError) return error;
    throw error;
  }
  throw new Error("expected an error");
}

describe("browserfn/client against a real local service", () => {
  let svc: TestService;
  let client: BrowserfnClient;

  beforeAll(async () => {
    // A 1 s sync window: a 2 s run answers 202 and the client polls it.
    svc = await startTestService({ config: { syncWaitSeconds: 1 } });
    client = new BrowserfnClient({ baseUrl: svc.url, apiKey: svc.adminKey });
  });
  afterAll(async () => {
    await svc?.destroy();
  });

  it("manages functions with typed calls", async () => {
    expect(await client.health()).toEqual({ status: "ok" });
    expect((await client.openapi()).openapi).toBe("3.1.0");
    const created = await client.createFunction({ name: "echo", code: ECHO_FN, description: "echoes" });
    expect(created).toMatchObject({ name: "echo", latest_version: "1", description: "echoes", status: "active" });
    expect(created.variables?.map((v) => [v.name, v.type, v.required])).toEqual([
      ["message", "string", true],
      ["times", "number", false],
    ]);
    expect((await client.getFunction(created.function_id)).name).toBe("echo");
    const updated = await client.updateFunction("echo", { code: ECHO_FN.replace("times = 1", "times = 2"), timeout_seconds: 30 });
    expect(updated).toMatchObject({ latest_version: "2", versions: ["1", "2"], timeout_seconds: 30 });
    expect((await client.listVersions("echo")).items.map((v) => v.version)).toEqual(["1", "2"]);
    expect((await client.getVersion("echo", 1)).code).toBe(ECHO_FN);
    await client.createFunction({ name: "another", code: ECHO_FN });
    const page = await client.listFunctions({ limit: 1 });
    expect(page.items.map((f) => f.name)).toEqual(["another"]);
    expect(page.next_cursor).not.toBeNull();
    const all: string[] = [];
    for await (const fn of client.allFunctions(1)) all.push(fn.name);
    expect(all).toEqual(["another", "echo"]);
    await client.deleteFunction("another");
    expect((await thrown(() => client.getFunction("another"))).code).toBe("function_not_found");
  });

  it("invokes with POST and GET, and reads runs, logs, metrics and usage", async () => {
    const post = await client.invoke<{ echo: string[] }>("echo", { message: "hi" });
    expect(post.result).toEqual({ echo: ["hi", "hi"] });
    expect(post.runId).toMatch(/^run_/);
    expect(post.version).toBe("2");
    const get = await client.invoke("echo", { message: "x", times: 3 }, { method: "GET", version: 1 });
    expect(get.result).toEqual({ echo: ["x", "x", "x"] });
    expect(get.version).toBe("1");
    const run = await client.getRun(post.runId);
    expect(run).toMatchObject({ run_id: post.runId, status: "succeeded", result: { echo: ["hi", "hi"] }, function_name: "echo" });
    const logs = await client.getLogs("echo", { limit: 1 });
    expect(logs.items).toHaveLength(1);
    expect(logs.items[0]?.run_id).toBe(get.runId);
    const metrics = await client.getMetrics("echo");
    expect(metrics.total_calls).toBeGreaterThanOrEqual(2);
    expect(metrics.success_rate).toBe(100);
    const usage = await client.getUsage();
    expect(usage.plan).toBe("pro");
    expect(usage.functions.find((f) => f.name === "echo")?.invocations).toBeGreaterThanOrEqual(2);
  });

  it("throws error classes chosen by code", async () => {
    const missing = await thrown(() => client.getFunction("nope"));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ status: 404, code: "function_not_found", details: { ref: "nope" } });
    expect(missing.requestId).toMatch(/[0-9a-f-]{36}/);
    const badParams = await thrown(() => client.invoke("echo", { message: 5 }));
    expect(badParams).toBeInstanceOf(ValidationError);
    expect(badParams.code).toBe("invalid_parameters");
    expect(badParams.details.parameters).toEqual([expect.objectContaining({ name: "message", problem: "wrong_type" })]);
    const exists = await thrown(() => client.createFunction({ name: "echo", code: ECHO_FN }));
    expect(exists).toBeInstanceOf(ConflictError);
    expect(exists.code).toBe("function_exists");
    const badKey = await thrown(() => new BrowserfnClient({ baseUrl: svc.url, apiKey: "bfn_not_a_real_key_at_all" }).listFunctions());
    expect(badKey).toBeInstanceOf(AuthenticationError);
    expect(badKey.code).toBe("invalid_token");

    await client.createFunction({ name: "thrower", code: THROW_FN });
    const failed = await thrown(() => client.invoke("thrower", { reason: "here" }));
    expect(failed).toBeInstanceOf(FunctionError);
    expect(failed).toMatchObject({ status: 500, code: "function_error" });
    expect(failed.message).toContain("broke: here");
    const runId = (failed as FunctionError).runId;
    expect(runId).toMatch(/^run_/);
    expect((await client.getRun(runId ?? "")).status).toBe("failed");

    await client.createFunction({ name: "slow-timeout", code: SLEEP_FN, timeout_seconds: 1 });
    // Past the 1 s sync window too: the client polls, and turns the timed-out run into the error.
    const timedOut = await thrown(() => client.invoke("slow-timeout", { ms: 10_000 }));
    expect(timedOut).toBeInstanceOf(FunctionTimeoutError);
    expect(timedOut).toMatchObject({ code: "function_timeout" });
    expect((timedOut as FunctionTimeoutError).runId).toMatch(/^run_/);

    const closed = new BrowserfnClient({ baseUrl: "http://127.0.0.1:1", apiKey: "k", maxRetries: 1, retryBaseDelayMs: 10 });
    const unreachable = await thrown(() => closed.health());
    expect(unreachable).toBeInstanceOf(NetworkError);
    expect(unreachable).toMatchObject({ status: 0, code: "network_error" });
  });

  it("lists a run's artifacts and downloads their bytes", async () => {
    const code = `import { artifacts } from "browserfn/runtime";
export default async function run() {
  await artifacts.save("all-bytes.bin", new Uint8Array(256).map((_, i) => i));
  await artifacts.save("page.html", "<p>hi</p>");
  return 1;
}
`;
    await client.createFunction({ name: "keeper", code });
    const { runId } = await client.invoke("keeper");
    const listed = await client.listArtifacts(runId);
    expect(listed.items.map((a) => [a.name, a.bytes, a.url])).toEqual([
      ["all-bytes.bin", 256, `${svc.url}/runs/${runId}/artifacts/all-bytes.bin`],
      ["page.html", 9, `${svc.url}/runs/${runId}/artifacts/page.html`],
    ]);
    const binary = await client.downloadArtifact(runId, "all-bytes.bin");
    expect(binary.contentType).toBe("application/octet-stream");
    expect(binary.bytes).toBeInstanceOf(Uint8Array);
    expect([...binary.bytes]).toEqual(Array.from({ length: 256 }, (_, i) => i));
    const html = await client.downloadArtifact(runId, "page.html");
    expect([html.contentType, new TextDecoder().decode(html.bytes)]).toEqual(["text/html; charset=utf-8", "<p>hi</p>"]);
    const missing = await thrown(() => client.downloadArtifact(runId, "nope.txt"));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.code).toBe("artifact_not_found");
  });

  it("waits through a 202 by polling the run", async () => {
    await client.createFunction({ name: "sleeper", code: SLEEP_FN });
    const accepted: string[] = [];
    const outcome = await client.invoke("sleeper", { ms: 2000 }, { onAccepted: (run) => accepted.push(run.run_id) });
    expect(outcome.result).toEqual({ slept: 2000 });
    expect(accepted).toEqual([outcome.runId]);
    expect(outcome.durationMs).toBeGreaterThanOrEqual(2000);

    const started = await client.startInvocation("sleeper", { ms: 300 });
    expect(started.status_url).toBe(`${svc.url}/runs/${started.run_id}`);
    const run = await client.waitForRun(started.run_id, { pollIntervalMs: 100 });
    expect(run).toMatchObject({ status: "succeeded", result: { slept: 300 } });

    const long = await client.startInvocation("sleeper", { ms: 3000 });
    const gaveUp = await thrown(() => client.waitForRun(long.run_id, { timeoutMs: 200 }));
    expect(gaveUp).toBeInstanceOf(WaitTimeoutError);
    expect((gaveUp as WaitTimeoutError).runId).toBe(long.run_id);
    expect((await client.waitForRun(long.run_id)).status).toBe("succeeded");
  });

  it("manages API keys and forks a shared function from another account", async () => {
    const created = await client.createApiKey({ account: "other", plan: "free", name: "other's key" });
    expect(created.key).toMatch(/^bfn_/);
    const other = new BrowserfnClient({ baseUrl: svc.url, apiKey: created.key });
    expect((await other.listApiKeys()).items.map((k) => k.key_id)).toEqual([created.key_id]);
    const shared = await client.updateFunction("echo", { shared: true });
    const copy = await other.forkFunction(shared.function_id);
    expect(copy).toMatchObject({ name: "echo", reference_workflow_id: shared.function_id, shared: false });
    expect((await other.invoke("echo", { message: "m" })).result).toEqual({ echo: ["m", "m"] });
    expect(await client.setAccountPlan("other", "pro")).toMatchObject({ account: "other", plan: "pro", limits: { concurrency: 25 } });
    expect((await other.getUsage()).plan).toBe("pro");
    await other.deleteApiKey(created.key_id); // a key of its own account
    expect(await thrown(() => other.listFunctions())).toBeInstanceOf(AuthenticationError);
  });
});

describe("retries", () => {
  let svc: TestService;

  beforeAll(async () => {
    // One request a second per key, bursts of 2: the third request at once is a 429 with Retry-After.
    svc = await startTestService({ config: { rateLimit: { perSecond: 1, burst: 2 } } });
  });
  afterAll(async () => {
    await svc?.destroy();
  });

  it("retries a rate-limited GET after Retry-After, and an invocation under its Idempotency-Key (one run)", async () => {
    const key = await svc.newAccount("limited", "pro");
    await svc.deploy("echo", ECHO_FN, {}, key);
    const requests: string[] = [];
    const countingFetch: typeof fetch = (input, init) => {
      requests.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`);
      return fetch(input, init);
    };
    const client = new BrowserfnClient({ baseUrl: svc.url, apiKey: key, fetch: countingFetch });
    await new Promise((resolve) => setTimeout(resolve, 2100)); // the bucket refills after the deploy
    await client.listFunctions();
    await client.listFunctions();
    const started = Date.now();
    const page = await client.listFunctions(); // 429, then retried after Retry-After: 1
    expect(page.items.map((f) => f.name)).toEqual(["echo"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(requests).toEqual(Array(4).fill("GET /functions"));

    requests.length = 0;
    const results = [];
    for (const message of ["a", "b", "c"]) results.push((await client.invoke("echo", { message })).result);
    expect(results).toEqual([{ echo: ["a"] }, { echo: ["b"] }, { echo: ["c"] }].map((r) => expect.objectContaining(r)));
    // The rate-limited one was sent again (after Retry-After), under the same key: three runs in all.
    expect(requests.every((r) => r === "POST /functions/echo")).toBe(true);
    expect(requests.length).toBeGreaterThan(3);
    const logs = (await client.getLogs("echo")) as { items: unknown[] };
    expect(logs.items).toHaveLength(3);
  });
});
