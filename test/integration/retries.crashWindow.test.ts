/**
 * A retry's store steps (retryRun: its queue item, its count and lease, its record) cut off at
 * each point by a "crash": from the k-th write on, the service's store answers nothing more,
 * as if the process had died there. At the next start on the same data dir the run must go on
 * to its next attempt, never end `function_crashed` (issue #22: before, a crash between the
 * record and the queue item ended it failed, its parameters lost).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { DocumentSender } from "../../lambdas/store/dynamo";
import { type AttemptCounter, startAttemptCounter } from "../helpers/attemptCounter";
import { type TestService, startTestService } from "../helpers/localService";

const FAILS_FIRST = `export default async (counter: string) => {
  const attempt = Number(await (await fetch(counter)).text());
  if (attempt === 1) throw new Error("the first attempt fails");
  return { attempt };
}`;

let counter: AttemptCounter;
beforeAll(async () => {
  counter = await startAttemptCounter();
});
afterAll(() => counter.close());

/** Whether a store command is one of the retry's writes: its queue item, or its record queued again. */
function isRetryWrite(command: { constructor: { name: string }; input?: unknown }): boolean {
  if (command.constructor.name !== "PutCommand") return false;
  const item = (command.input as { Item?: Record<string, unknown> }).Item ?? {};
  return String(item.sk ?? "").startsWith("RUN#") || (item.status === "queued" && item.queue_reason === "retry_backoff");
}

/** A store client that lets `writes` writes through from the retry's first one, and then fails every call. */
function crashingAfter(writes: number) {
  let seen = 0;
  let armed = false;
  const crashed = { value: false };
  const wrap = (doc: DocumentSender): DocumentSender => {
    const send = doc.send.bind(doc);
    return {
      ...doc,
      send: (async (command: Parameters<typeof send>[0]) => {
        if (crashed.value) throw new Error("the process is gone");
        const name = command.constructor.name;
        const write = ["PutCommand", "UpdateCommand", "DeleteCommand"].includes(name);
        if (!armed && isRetryWrite(command as never)) armed = true;
        if (armed && write) {
          seen++;
          if (seen > writes) {
            crashed.value = true;
            throw new Error("the process is gone");
          }
        }
        return send(command);
      }) as typeof doc.send,
    } as DocumentSender;
  };
  return { wrap, crashed };
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what}: ${JSON.stringify(await read())}`);
}

describe.each([1, 2])("a retry cut off after %i of its store writes", (writes) => {
  let dataDir: string;
  let service: TestService | undefined;
  afterEach(async () => {
    await service?.destroy().catch(() => undefined);
    service = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  it("runs its next attempt after the next start, with its real parameters", async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-retry-crash-"));
    const fault = crashingAfter(writes);
    const first = await startTestService({ dataDir, serviceOptions: { wrapStoreClient: fault.wrap } });
    await first.deploy("fails-first", FAILS_FIRST, { retries: { max_attempts: 2, backoff_seconds: 2 } });
    const name = `crash-${writes}`;
    const answer = await first.call("POST", "/functions/fails-first", { body: { counter: `${counter.url}${name}` }, headers: { prefer: "respond-async" } });
    expect(answer.status).toBe(202);
    const runId = String(answer.body.run_id);
    await waitFor(async () => fault.crashed.value, (crashed) => crashed, "the retry never wrote");
    expect(counter.count(name)).toBe(1);
    await first.stop().catch(() => undefined);

    service = await startTestService({ dataDir, adminKey: first.adminKey });
    const run = await waitFor(
      async () => (await service!.call("GET", `/runs/${runId}`)).body,
      (r) => r.finished_at !== null,
      "the run did not end",
    );
    expect(run).toMatchObject({ status: "succeeded", attempt: 2, max_attempts: 2, result: { attempt: 2 } });
    expect(run.attempts).toHaveLength(2);
    expect(counter.count(name)).toBe(2);
    // One invocation for the run, and no lease or queued count left behind.
    expect((await service.call("GET", "/usage")).body.total.invocations).toBe(1);
    const again = await service.call("POST", "/functions/fails-first", { body: { counter: `${counter.url}${name}` } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ attempt: 3 });
  }, 90_000);
});
