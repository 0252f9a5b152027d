/**
 * A run waiting for its next attempt lives in the store (issue #22, item 4): it survives a
 * SIGKILL of the real service (`npm start` in a child process) and runs after the next start.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { type AttemptCounter, startAttemptCounter } from "../helpers/attemptCounter";
import { type ChildService, startChildService } from "../helpers/childService";
import { requestJson } from "../helpers/http";

const FAILS_FIRST = `export default async (counter: string) => {
  const attempt = Number(await (await fetch(counter)).text());
  if (attempt === 1) throw new Error("the first attempt fails");
  return { attempt };
}`;
const env = { BROWSERFN_ALLOW_LOCAL_NETWORK: "true" };

let dataDir: string;
let service: ChildService | undefined;
let counter: AttemptCounter;
const key = generateApiKey();

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-retries-restart-"));
  counter = await startAttemptCounter();
});
afterEach(async () => {
  await service?.kill();
  service = undefined;
  await counter.close();
  await rm(dataDir, { recursive: true, force: true });
});

const call = (method: string, urlPath: string, options: { body?: unknown; headers?: Record<string, string> } = {}) =>
  requestJson(service!.url, method, urlPath, { token: key, ...options });

async function waitFor(runId: string, done: (run: any) => boolean) { // eslint-disable-line @typescript-eslint/no-explicit-any
  for (let i = 0; i < 1200; i++) {
    const run = (await call("GET", `/runs/${runId}`)).body;
    if (done(run)) return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`run ${runId} did not get there: ${JSON.stringify((await call("GET", `/runs/${runId}`)).body)}\n${service?.output().slice(-3000)}`);
}

describe("a retry waiting in its backoff across a restart", () => {
  it("runs after the next start when the service got SIGKILL", async () => {
    service = await startChildService(dataDir, key, env);
    const created = await call("POST", "/functions", { body: { name: "fails-first", code: FAILS_FIRST, retries: { max_attempts: 2, backoff_seconds: 4 } } });
    expect(created.status).toBe(201);
    const answer = await call("POST", "/functions/fails-first", { body: { counter: `${counter.url}restart` }, headers: { prefer: "respond-async" } });
    expect(answer.status).toBe(202);
    const runId = String(answer.body.run_id);
    const waiting = await waitFor(runId, (run) => run.status === "queued" && run.attempts.length === 1);
    expect(waiting).toMatchObject({ queue_reason: "retry_backoff", attempt: 2 });
    // Still within its 4 s backoff (a SIGKILL inside the retry's own writes: retries.crashWindow.test).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await service.kill();
    expect(counter.count("restart")).toBe(1);
    service = await startChildService(dataDir, key, env);
    const run = await waitFor(runId, (r) => r.finished_at !== null);
    expect(run).toMatchObject({ status: "succeeded", attempt: 2, result: { attempt: 2 } });
    expect(run.attempts.map((a: { status: string }) => a.status)).toEqual(["failed", "succeeded"]);
    expect(Date.parse(run.attempts[1].started_at)).toBeGreaterThanOrEqual(Date.parse(run.attempts[0].finished_at) + 4000);
    expect(counter.count("restart")).toBe(2);
    const usage = (await call("GET", "/usage")).body;
    expect(usage.total.invocations).toBe(1);
  }, 120_000);
});
