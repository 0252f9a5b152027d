import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { createDynaliteClients } from "../../lambdas/local/dynaliteClient";
import { queryAll } from "../../lambdas/store/dynamo";
import { MAIN_TABLE, tableName } from "../../lambdas/store/tables";
import { startTestService, type TestService } from "../helpers/localService";

/**
 * Issue #26 item 6: an account holds at most its plan's `max_storage_mb` (artifacts and run
 * records); past it `artifacts.save` fails with `storage_limit_exceeded`, and GET /usage shows
 * what it holds. Runs are pruned after the run retention, and what they held with them.
 */

jest.setTimeout(180_000);

const KB = 1024;
const MB = 1024 * KB;
const DAY_MS = 86_400_000;
const plans = { ...DEFAULT_PLANS, tiny: { concurrency: 2, invocations_per_month: 1000, max_timeout_seconds: 60, max_memory_mb: 1024, max_storage_mb: 1 } };

/** Saves `first` bytes as a.bin, then `second` bytes as `secondName`; answers what each save did. */
const SAVER = `import { artifacts } from "browserfn/runtime";
export default async (first: number, second: number, secondName: string, waitMs: number) => {
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  const attempt = async (name: string, bytes: number) => {
    try {
      return { saved: (await artifacts.save(name, new Uint8Array(bytes))).bytes };
    } catch (error) {
      return { code: (error as { code?: string }).code ?? null, message: (error as Error).message };
    }
  };
  return { first: await attempt("a.bin", first), second: await attempt(secondName, second) };
};`;

interface Usage {
  storage_bytes: number;
  max_storage_bytes: number;
}

async function usageOf(t: TestService, token: string): Promise<Usage> {
  const answer = await t.call("GET", "/usage", { token });
  expect(answer.status).toBe(200);
  return answer.body as Usage;
}

describe("the storage cap per account (max_storage_mb)", () => {
  let t: TestService;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    t = await startTestService({ config: { plans } });
    alice = await t.newAccount("alice", "tiny");
    bob = await t.newAccount("bob", "tiny");
    await t.deploy("saver", SAVER, { timeout_seconds: 30 }, alice);
    await t.deploy("saver", SAVER, { timeout_seconds: 30 }, bob);
  });
  afterAll(() => t?.destroy());

  it("refuses an artifact past the cap with storage_limit_exceeded, leaves another account alone, and counts up and down", async () => {
    expect(await usageOf(t, alice)).toEqual(expect.objectContaining({ storage_bytes: 0, max_storage_bytes: 1 * MB }));
    const full = await t.call("POST", "/functions/saver", { token: alice, body: { first: 600 * KB, second: 600 * KB, secondName: "b.bin", waitMs: 0 } });
    expect(full.status).toBe(200);
    expect(full.body.first).toEqual({ saved: 600 * KB });
    expect(full.body.second.code).toBe("storage_limit_exceeded");
    expect(full.body.second.message).toMatch(/storage is full.*max_storage_mb/);
    const runId = String(full.headers.get("x-run-id"));
    const listed = await t.call("GET", `/runs/${runId}/artifacts`, { token: alice });
    expect((listed.body as { items: { name: string }[] }).items.map((item) => item.name)).toEqual(["a.bin"]);
    const afterFull = await usageOf(t, alice);
    // The kept file and the run's record (params, result, logs): a few hundred bytes.
    expect(afterFull.storage_bytes).toBeGreaterThanOrEqual(600 * KB);
    expect(afterFull.storage_bytes).toBeLessThan(600 * KB + 4 * KB);

    // Bob's account is its own: he keeps 600 KB and 300 KB.
    const other = await t.call("POST", "/functions/saver", { token: bob, body: { first: 600 * KB, second: 300 * KB, secondName: "b.bin", waitMs: 0 } });
    expect(other.body).toEqual({ first: { saved: 600 * KB }, second: { saved: 300 * KB } });

    // Alice is still full: even 500 KB more is refused, in a new run.
    const again = await t.call("POST", "/functions/saver", { token: alice, body: { first: 500 * KB, second: 1, secondName: "c.bin", waitMs: 0 } });
    expect(again.body.first.code).toBe("storage_limit_exceeded");

    // A name saved again gives back what it held: a.bin shrinks from 300 KB to 10 KB in one run.
    const before = (await usageOf(t, bob)).storage_bytes;
    const shrink = await t.call("POST", "/functions/saver", { token: bob, body: { first: 50 * KB, second: 10 * KB, secondName: "a.bin", waitMs: 0 } });
    expect(shrink.body).toEqual({ first: { saved: 50 * KB }, second: { saved: 10 * KB } });
    const after = (await usageOf(t, bob)).storage_bytes;
    expect(after - before).toBeGreaterThanOrEqual(10 * KB);
    expect(after - before).toBeLessThan(10 * KB + 4 * KB);
  });

  it("holds the cap on the service's side when two runs were each told there was room", async () => {
    const carol = await t.newAccount("carol", "tiny");
    await t.deploy("saver", SAVER, { timeout_seconds: 30 }, carol);
    // Both start with 1 MB of room, then each saves 700 KB: the runtime lets both through, the service keeps one.
    const body = { first: 700 * KB, second: 1, secondName: "tiny.txt", waitMs: 1500 };
    const [one, two] = await Promise.all([
      t.call("POST", "/functions/saver", { token: carol, body }),
      t.call("POST", "/functions/saver", { token: carol, body }),
    ]);
    expect([one.status, two.status]).toEqual([200, 200]);
    const names = await Promise.all(
      [one, two].map(async (answer) => {
        const listed = await t.call("GET", `/runs/${String(answer.headers.get("x-run-id"))}/artifacts`, { token: carol });
        return (listed.body as { items: { name: string }[] }).items.map((item) => item.name);
      }),
    );
    expect(names.flat().filter((name) => name === "a.bin")).toHaveLength(1);
    expect((await usageOf(t, carol)).storage_bytes).toBeLessThanOrEqual(1 * MB);
  });

  it("reads what an account may keep from the store once for runs close together, and again once it kept a file", async () => {
    const dave = await t.newAccount("dave", "tiny");
    await t.deploy("quiet", "export default async () => 1;", {}, dave);
    await t.deploy("saver", SAVER, { timeout_seconds: 30 }, dave);
    const held = jest.spyOn(t.service.deps.store.storage, "held");
    try {
      // Two store reads per run before (the plan's cap and what is held), on the path every run's caller waits for.
      for (let i = 0; i < 4; i++) expect((await t.call("POST", "/functions/quiet", { token: dave })).status).toBe(200);
      expect(held.mock.calls.length).toBeLessThanOrEqual(2);
      const reads = held.mock.calls.length;
      const saved = await t.call("POST", "/functions/saver", { token: dave, body: { first: 900 * KB, second: 1, secondName: "b.bin", waitMs: 0 } });
      expect(saved.body.first).toEqual({ saved: 900 * KB });
      // The run right after is told the room left after that file, not the room before it.
      const next = await t.call("POST", "/functions/saver", { token: dave, body: { first: 200 * KB, second: 1, secondName: "b.bin", waitMs: 0 } });
      expect(held.mock.calls.length).toBeGreaterThan(reads);
      expect(next.body.first.code).toBe("storage_limit_exceeded");
    } finally {
      held.mockRestore();
    }
  });
});

describe("the run retention (BROWSERFN_RUN_RETENTION_DAYS)", () => {
  it("prunes a run past the retention with its parts and artifacts' items, and what the account holds falls", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-run-retention-"));
    const adminKey = generateApiKey();
    let offsetMs = 0;
    const serviceOptions = { clock: { now: () => new Date(Date.now() + offsetMs) } };
    const start = () => startTestService({ dataDir, adminKey, config: { runRetentionDays: 2, artifactRetentionDays: 2 }, serviceOptions });
    let t = await start();
    try {
      // A result over the inline size: kept in part items beside the run's.
      await t.deploy("big", `import { artifacts } from "browserfn/runtime"; export default async () => { await artifacts.save("a.txt", "x".repeat(1000)); return { text: Array.from({ length: 80000 }, (_, i) => i.toString(36)).join(" ") }; };`);
      const old = await t.call("POST", "/functions/big");
      expect(old.status).toBe(200);
      const oldRun = String(old.headers.get("x-run-id"));
      offsetMs = 1.5 * DAY_MS;
      const recent = await t.call("POST", "/functions/big");
      const recentRun = String(recent.headers.get("x-run-id"));
      const held = (await usageOf(t, adminKey)).storage_bytes;
      const resultBytes = Buffer.byteLength(old.text);
      expect(held).toBeGreaterThanOrEqual(2 * (resultBytes + 1000));

      // Three days after the first run, 1.5 after the second: a restarted service sweeps at start.
      offsetMs = 3 * DAY_MS;
      await t.stop();
      t = await start();
      const { doc, destroy } = createDynaliteClients(t.service.dynamoEndpoint, t.service.storeSecret);
      try {
        const itemsOf = async (runId: string) =>
          (await queryAll(doc, { TableName: tableName("browserfn", MAIN_TABLE), KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": `RUN#${runId}` } })).map((item) =>
            String(item.sk).replace(/#.*$/, ""),
          );
        expect(await itemsOf(oldRun)).toEqual([]);
        expect((await itemsOf(recentRun)).sort()).toEqual(["ART", "RESULT", "RUN"]);
      } finally {
        destroy();
      }
      expect((await t.call("GET", `/runs/${oldRun}`)).status).toBe(404);
      expect((await t.call("GET", `/runs/${recentRun}`)).status).toBe(200);
      // The first run's record and artifact no longer count; the second's still do.
      const after = (await usageOf(t, adminKey)).storage_bytes;
      expect(held - after).toBeGreaterThanOrEqual(resultBytes + 1000);
      expect(after).toBeGreaterThanOrEqual(resultBytes + 1000);
      expect(await readdir(path.join(dataDir, "artifacts"))).toEqual([recentRun]);
    } finally {
      await t.destroy();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
