import { newRunId } from "../../lambdas/runs/runIds";
import { runDeadline } from "../../lambdas/runs/types";
import { openEventStream } from "../helpers/eventStream";
import { expectError } from "../helpers/http";
import { type TestService, startTestService } from "../helpers/localService";
import { isPng } from "../helpers/png";
import { isAlive, processesWith } from "../helpers/processes";
import { runItem } from "../helpers/records";
import { type PageServer, startPageServer } from "../helpers/testBrowser";
import { type WebhookReceiver, startWebhookReceiver } from "../helpers/webhookReceiver";

// POST /runs/{run_id}/cancel against the real service: a running browser run's worker and
// Chromium are ended (host pids checked), the run ends `canceled` with its logs and failure
// evidence, the slot comes back, and its webhook and event stream say so.

/** Opens a page, says so, then waits `wait_ms` (a long wait: the run a cancel stops). */
const BROWSING_FN = `import { Session } from "browserfn/runtime";
export default async function run(url: string, wait_ms: number = 0) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url);
  await page.evaluate(() => { document.body.insertAdjacentHTML("beforeend", "<p id=marker>before the cancel</p>"); });
  console.log("opened " + (await page.title()));
  await new Promise((resolve) => setTimeout(resolve, wait_ms));
  return { title: await page.title() };
}
`;

let t: TestService;
let pages: PageServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [t, pages, receiver] = await Promise.all([startTestService(), startPageServer(), startWebhookReceiver()]);
  await t.deploy("browsing", BROWSING_FN, { webhooks: [{ url: receiver.url, events: ["run.canceled"] }] });
}, 60_000);

afterAll(async () => {
  await t?.destroy();
  await pages?.close();
  await receiver?.close();
});

/** Starts a run without waiting for it; its id. */
async function startAsync(name: string, params: Record<string, unknown>, token?: string): Promise<string> {
  const accepted = await t.call("POST", `/functions/${name}`, { body: params, token, headers: { prefer: "respond-async" } });
  expect(accepted.status).toBe(202);
  return String(accepted.body.run_id);
}

/** Waits until the run's live output contains `text` (it runs on this service). */
async function waitForOutput(runId: string, text: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const live = t.service.deps.runtime.watchLogs?.(runId, () => undefined);
    const seen = live?.text() ?? "";
    live?.close();
    if (seen.includes(text)) return;
    if (Date.now() > deadline) throw new Error(`run ${runId} never logged '${text}'`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("POST /runs/{run_id}/cancel", () => {
  it("stops a running browser run: its worker and Chromium are gone, it ends canceled with its logs and evidence, and the next run works", async () => {
    const before = new Set(processesWith(t.service.runtimeDir));
    const runId = await startAsync("browsing", { url: `${pages.base}/long`, wait_ms: 120_000 });
    await waitForOutput(runId, "opened Hello /long");
    const stream = await openEventStream(t.url, `/runs/${runId}/events`, { token: t.adminKey });
    expect(stream.status).toBe(200);

    // This run's sandbox: its worker and its browser, started for it.
    const runPids = processesWith(t.service.runtimeDir).filter((pid) => !before.has(pid));
    const browserPids = runPids.filter((pid) => processesWith("--remote-debugging-pipe").includes(pid));
    expect(browserPids.length).toBeGreaterThan(0);
    expect(runPids.length).toBeGreaterThan(browserPids.length);

    const canceled = await t.call("POST", `/runs/${runId}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ run_id: runId, status: "canceled", result: null, error: { code: "run_canceled" } });
    expect(canceled.body.logs).toContain("opened Hello /long");
    expect(canceled.body.finished_at).not.toBeNull();
    expect(canceled.body.logs).toMatch(/page 1 was at http:\/\/127\.0\.0\.1:\d+\/long: kept failure-1\.png, failure-1\.html \(taken by the sandbox: as the run was canceled\)/);
    // Answered once the user code has stopped: none of its processes is left.
    expect(runPids.filter(isAlive)).toEqual([]);

    const record = (await t.call("GET", `/runs/${runId}`)).body;
    expect(record).toMatchObject({ status: "canceled", error: { code: "run_canceled" } });
    // It ran an attempt, which ended canceled: the run's attempts say so (the last is its own outcome).
    expect(record.attempts).toEqual([{ attempt: 1, status: "canceled", error: { code: "run_canceled", message: record.error.message }, started_at: record.started_at, finished_at: record.finished_at, duration_ms: record.duration_ms }]);
    const listed = (await t.call("GET", `/runs/${runId}/artifacts`)).body as { items: { name: string; url: string }[] };
    expect(listed.items.map((item) => item.name).sort()).toEqual(["failure-1.html", "failure-1.png"]);
    const png = await fetch(String(listed.items.find((item) => item.name === "failure-1.png")?.url), { headers: { authorization: `Bearer ${t.adminKey}` } });
    expect(isPng(Buffer.from(await png.arrayBuffer()))).toBe(true);

    // The event stream ends with the canceled status and the run's error.
    await stream.ended;
    const kinds = stream.events.map((event) => event.event);
    expect(kinds.slice(-2)).toEqual(["status", "error"]);
    expect(stream.events.at(-2)?.json).toMatchObject({ status: "canceled" });
    expect(stream.events.at(-1)?.json).toMatchObject({ run_id: runId, status: "canceled", error: { code: "run_canceled" } });

    // The webhook subscribed to run.canceled gets it.
    const [hook] = await receiver.waitFor(1);
    expect(JSON.parse(String(hook?.body))).toMatchObject({ type: "run.canceled", data: { run: { run_id: runId, status: "canceled" } } });

    // Cancelling again: it has ended.
    expectError(await t.call("POST", `/runs/${runId}/cancel`), 409, "run_finished");

    // The function's next run starts on a fresh worker and succeeds.
    const next = await t.call("POST", "/functions/browsing", { body: { url: `${pages.base}/after` } });
    expect([next.status, next.body]).toEqual([200, { title: "Hello /after" }]);
  }, 90_000);

  it("frees the plan's slot: a free account (concurrency 2) runs two more at once after canceling two", async () => {
    const key = await t.newAccount("cancel-slots", "free");
    await t.deploy("waits", "export default async function run(ms: number) { console.log('waiting'); await new Promise((r) => setTimeout(r, ms)); return ms; }", {}, key);
    const first = [await startAsync("waits", { ms: 120_000 }, key), await startAsync("waits", { ms: 120_000 }, key)];
    await Promise.all(first.map((runId) => waitForOutput(runId, "waiting")));
    for (const runId of first) expect((await t.call("POST", `/runs/${runId}/cancel`, { token: key })).body.status).toBe("canceled");
    const again = await Promise.all([1, 2].map(() => t.call("POST", "/functions/waits", { body: { ms: 10 }, token: key })));
    expect(again.map((answer) => [answer.status, answer.body])).toEqual([
      [200, 10],
      [200, 10],
    ]);
  }, 90_000);

  it("ends a queued run without starting it: canceled, finished_at set, no execution metered, the invocation counted", async () => {
    const fn = (await t.call("GET", "/functions/browsing/info")).body;
    const store = t.service.deps.store;
    const queuedAt = new Date().toISOString();
    const runId = newRunId();
    const account = (await store.functions.getById(fn.function_id))?.account_id ?? "";
    const usageBefore = (await t.call("GET", "/usage")).body;
    await store.runs.put(
      runItem(
        { account_id: account, function_id: fn.function_id, name: "browsing", memory_mb: 1024 },
        { run_id: runId, status: "queued", queued_at: queuedAt, started_at: null, deadline_at: runDeadline(queuedAt, 300), logs: "" },
      ),
    );

    const canceled = await t.call("POST", `/runs/${runId}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ run_id: runId, status: "canceled", started_at: null, duration_ms: 0, error: { code: "run_canceled" } });
    // It never ran an attempt.
    expect(canceled.body.attempts).toEqual([]);
    expect(canceled.body.finished_at).not.toBeNull();
    expect(await store.runs.get(runId)).toMatchObject({ status: "canceled", duration_ms: 0 });
    const usageAfter = (await t.call("GET", "/usage")).body;
    expect(usageAfter.total.invocations - usageBefore.total.invocations).toBe(1);
    expect(usageAfter.total.execution_ms).toBe(usageBefore.total.execution_ms);

    // A starter that finds it no longer queued cannot start it (the conditional write the queue's dispatcher relies on).
    expect(await store.runs.putIfStatus({ ...(await store.runs.get(runId))!, status: "running" }, "queued")).toBe(false);
    expect((await store.runs.get(runId))?.status).toBe("canceled");
    expectError(await t.call("POST", `/runs/${runId}/cancel`), 409, "run_finished");
  });

  it("answers 409 run_finished for a run that ended, and 404 run_not_found for another account's run or an unknown id", async () => {
    const done = await t.call("POST", "/functions/browsing", { body: { url: `${pages.base}/done` } });
    expect(done.status).toBe(200);
    const runId = String(done.headers.get("x-run-id"));
    const finished = expectError(await t.call("POST", `/runs/${runId}/cancel`), 409, "run_finished");
    expect(finished.details).toMatchObject({ run_id: runId, status: "succeeded" });
    expect((await t.call("GET", `/runs/${runId}`)).body.status).toBe("succeeded");

    const other = await t.newAccount("cancel-other");
    const running = await startAsync("browsing", { url: `${pages.base}/mine`, wait_ms: 120_000 });
    expectError(await t.call("POST", `/runs/${running}/cancel`, { token: other }), 404, "run_not_found");
    expectError(await t.call("POST", "/runs/run_nope/cancel"), 404, "run_not_found");
    expect((await t.call("GET", `/runs/${running}`)).body.status).not.toBe("canceled");
    expect((await t.call("POST", `/runs/${running}/cancel`)).body.status).toBe("canceled");
  }, 60_000);
});
