import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { startTestService, type TestService } from "../helpers/localService";

// The service's own side of artifacts on the local service: its caps against a worker that
// sends more than the runtime lets it (a worker's parts are untrusted), how it meters a name
// saved twice, and how its sweep ends what is past the retention.

const DAY_MS = 86_400_000;

/** The names and bytes `GET /runs/{id}/artifacts` lists. */
async function listed(t: TestService, runId: string, token?: string): Promise<{ name: string; bytes: number }[]> {
  const body = (await t.call("GET", `/runs/${runId}/artifacts`, { token })).body as { items: { name: string; bytes: number }[] };
  return body.items.map((item) => ({ name: item.name, bytes: item.bytes }));
}

describe("the service's artifact caps and metering", () => {
  let t: TestService;
  const errors: string[] = [];

  beforeAll(async () => {
    t = await startTestService({ serviceOptions: { errorLog: (line) => errors.push(line) } });
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
  });

  it("drops a file that would pass 100 MB in all, sent by a worker past the runtime's own check", async () => {
    // 60 MB forged straight onto the worker's channel (the runtime never sees it), then 50 MB
    // through artifacts.save, whose check passes (it knows of 50 MB only): the service's must not.
    await t.deploy(
      "forger",
      `import { artifacts } from "browserfn/runtime";
      import { writeSync } from "node:fs";
      export default async () => {
        const small = await artifacts.save("small.txt", "x");
        const runId = small.url.split("/runs/")[1].split("/")[0];
        const chunk = Buffer.alloc(256 * 1024, 1).toString("base64");
        // The descriptor is non-blocking: a write may take part of a message, or none for now.
        const writeAll = (text: string) => {
          for (let rest = Buffer.from(text); rest.length > 0; ) {
            try { rest = rest.subarray(writeSync(3, rest)); } catch (error) { if ((error as { code?: string }).code !== "EAGAIN") throw error; }
          }
        };
        const parts = 240;
        for (let i = 0; i < parts; i++) {
          // Raw on the channel's descriptor, a line of JSON per message (process.send is the runtime's).
          writeAll(JSON.stringify({ type: "artifact", runId, name: "forged.bin", content_type: "application/octet-stream", data: chunk, last: i === parts - 1 }) + "\\n");
        }
        const real = await artifacts.save("real.bin", new Uint8Array(50 * 1024 * 1024));
        const after = await artifacts.save("after.txt", "y");
        return { real: real.bytes, after: after.bytes };
      }`,
      { timeout_seconds: 60 },
    );
    const answer = await t.call("POST", "/functions/forger");
    // 110 MB through the channel can outlast the sync window on a busy machine (202): its result once it ends.
    const runId = String(answer.headers.get("x-run-id") ?? (answer.body as { run_id?: string }).run_id);
    const run = (await t.ended(runId)) as { status: string; result?: unknown };
    expect([answer.status === 200 || answer.status === 202, run.status, run.result]).toEqual([true, "succeeded", { real: 50 * 1024 * 1024, after: 1 }]);
    expect(await listed(t, runId)).toEqual([
      { name: "after.txt", bytes: 1 },
      { name: "forged.bin", bytes: 60 * 1024 * 1024 },
      { name: "small.txt", bytes: 1 },
    ]);
    expect(errors).toContain(`run ${runId}: artifact real.bin dropped: a run keeps at most 104857600 bytes of artifacts`);
    // Nothing of the dropped file is left in the data dir.
    expect((await readdir(path.join(t.dataDir, "artifacts", runId))).sort()).toEqual(["after.txt", "forged.bin", "small.txt"]);
  }, 120_000);

  it("drops an artifact named like its partial folder, and keeps the run's others", async () => {
    await t.deploy(
      "partial-name",
      `import { artifacts } from "browserfn/runtime";
      export default async () => {
        await artifacts.save("before.txt", "a");
        await artifacts.save(".partial", "x");
        await artifacts.save("after.txt", "b");
        return "ok";
      }`,
    );
    const answer = await t.call("POST", "/functions/partial-name");
    expect([answer.status, answer.body]).toEqual([200, "ok"]);
    const runId = String(answer.headers.get("x-run-id"));
    expect(await listed(t, runId)).toEqual([
      { name: "after.txt", bytes: 1 },
      { name: "before.txt", bytes: 1 },
    ]);
    expect(errors).toContain(`run ${runId}: artifact .partial dropped: the name is the folder's own (files are written there first)`);
    expect((await readdir(path.join(t.dataDir, "artifacts", runId))).sort()).toEqual(["after.txt", "before.txt"]);
  }, 60_000);

  it("meters each name a run kept once, with the bytes it ended with (as on AWS), however often it was saved", async () => {
    const token = await t.newAccount("artifact-meter");
    await t.deploy(
      "resaver",
      `import { artifacts } from "browserfn/runtime";
      export default async () => {
        await artifacts.save("data.bin", new Uint8Array(1000));
        await artifacts.save("data.bin", new Uint8Array(10));
        await artifacts.save("notes.txt", "hello");
        await artifacts.save("notes.txt", "hello");
        return "ok";
      }`,
      {},
      token,
    );
    const answer = await t.call("POST", "/functions/resaver", { token });
    expect([answer.status, answer.body]).toEqual([200, "ok"]);
    expect(await listed(t, String(answer.headers.get("x-run-id")), token)).toEqual([
      { name: "data.bin", bytes: 10 },
      { name: "notes.txt", bytes: 5 },
    ]);
    const usage = (await t.call("GET", "/usage", { token })).body as { total: { artifact_bytes: number } };
    expect(usage.total.artifact_bytes).toBe(15);
  }, 60_000);
});

describe("the artifact retention (BROWSERFN_ARTIFACT_RETENTION_DAYS)", () => {
  it("removes the files and items of a run past the retention at the sweep, and keeps a newer run's", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-retention-"));
    const adminKey = generateApiKey();
    let offsetMs = 0;
    const serviceOptions = { clock: { now: () => new Date(Date.now() + offsetMs) } };
    const start = () => startTestService({ dataDir, adminKey, config: { artifactRetentionDays: 2 }, serviceOptions });
    let t = await start();
    try {
      await t.deploy("keeper", `import { artifacts } from "browserfn/runtime"; export default async (text: string) => (await artifacts.save("kept.txt", text)).bytes;`);
      const runOf = async (text: string) => {
        const answer = await t.call("POST", "/functions/keeper", { body: { text } });
        expect(answer.status).toBe(200);
        return String(answer.headers.get("x-run-id"));
      };
      const older = await runOf("old");
      offsetMs = 1.5 * DAY_MS;
      const newer = await runOf("new!");
      // 2.5 days after the first run, 1 after the second: a restarted service sweeps at start.
      offsetMs = 2.5 * DAY_MS;
      await t.stop();
      t = await start();
      const runsDir = path.join(dataDir, "artifacts");
      expect(await readdir(runsDir)).toEqual([newer]);
      // Gone from the store, not only hidden by its expiry: listed as of the epoch, it has no items.
      expect(await t.service.deps.store.artifacts.list(older, new Date(0))).toEqual([]);
      expect(await t.service.deps.store.artifacts.list(newer, new Date(0))).toEqual([expect.objectContaining({ name: "kept.txt", bytes: 4 })]);
      expect(await listed(t, older)).toEqual([]);
      const kept = await fetch(`${t.url}/runs/${newer}/artifacts/kept.txt`, { headers: { authorization: `Bearer ${adminKey}` } });
      expect([kept.status, await kept.text()]).toEqual([200, "new!"]);
    } finally {
      await t.destroy();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
