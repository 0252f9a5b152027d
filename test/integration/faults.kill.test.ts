import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { newVersion } from "../../lambdas/functions/createFunction";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import type { LocalScheduler } from "../../lambdas/schedule/localScheduler";
import { createDocumentClient } from "../../lambdas/store/dynamo";
import { requestJson } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";
import { expectNoProcessesWith } from "../helpers/processes";
import { startChildService } from "../helpers/childService";
import { dynaliteClientConfig } from "../../lambdas/local/dynaliteClient";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** An automation returning `n`; `padBytes` of incompressible text make its code span several stored parts. */
const code = (n: number, padBytes = 0) =>
  `export default async (n: number = ${n}) => ({ n, pad: ${JSON.stringify(randomBytes(padBytes).toString("base64"))}.length });\n`;

/** Every item of the service's table, read directly from its dynalite. */
async function tableItems(t: TestService): Promise<Record<string, unknown>[]> {
  const { client, doc } = createDocumentClient(dynaliteClientConfig(t.service.dynamoEndpoint, t.service.storeSecret));
  try {
    const items: Record<string, unknown>[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(new ScanCommand({ TableName: "browserfn-main", ExclusiveStartKey }));
      items.push(...(page.Items ?? []));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return items;
  } finally {
    client.destroy();
  }
}

/**
 * What a cut-short create, update or delete must never leave: checked on the table itself.
 * Every function record is complete (not `deploying`; versions 1..latest, each with its
 * code parts), no version or code item is unreferenced, and no run is left active.
 */
async function expectConsistentTable(t: TestService): Promise<void> {
  const items = await tableItems(t);
  const sk = (item: Record<string, unknown>) => String(item.sk);
  const functions = items.filter((item) => sk(item).startsWith("FN#"));
  const latest = new Map(functions.map((fn) => [String(fn.function_id), Number(fn.latest_version)]));
  for (const fn of functions) expect({ name: fn.name, status: fn.status }).toEqual({ name: fn.name, status: "active" });
  const versions = items.filter((item) => sk(item).startsWith("VER#"));
  const tokens = new Set<string>();
  for (const version of versions) {
    const functionId = String(version.pk).slice("FNID#".length);
    expect({ functionId, version: version.sk, known: latest.has(functionId) }).toMatchObject({ known: true });
    expect(Number(sk(version).slice(4))).toBeLessThanOrEqual(latest.get(functionId) ?? 0);
    tokens.add(`${String(version.pk)}#${sk(version).slice(4)}#${String(version.code_token)}`);
  }
  for (const [functionId, newest] of latest) {
    const own = versions.filter((v) => v.pk === `FNID#${functionId}`).map((v) => Number(sk(v).slice(4)));
    expect(own.sort((a, b) => a - b)).toEqual(Array.from({ length: newest }, (_, i) => i + 1));
  }
  const parts = items.filter((item) => sk(item).startsWith("CODE#"));
  const partOwners = new Set<string>();
  for (const part of parts) {
    const [, version, token, field] = sk(part).split("#");
    const owner = `${String(part.pk)}#${version}#${token}`;
    expect({ part: sk(part), referenced: tokens.has(owner) }).toMatchObject({ referenced: true });
    partOwners.add(`${owner}#${field}`);
  }
  for (const owner of tokens) {
    expect(partOwners.has(`${owner}#source`) && partOwners.has(`${owner}#js`)).toBe(true);
  }
  const active = items.filter((item) => sk(item) === "RUN" && ["queued", "running"].includes(String(item.status)));
  expect(active).toEqual([]);
}

describe("SIGKILL in the middle of creates, updates and deletes", () => {
  it("after each restart no function is half-made, no version is orphaned, every run is final and schedules are armed again", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-kill-"));
    const key = generateApiKey();
    const runtimeDirs: string[] = [];
    try {
      let names: string[] = [];
      for (let round = 0; round < 3; round++) {
        const service = await startChildService(dataDir, key);
        runtimeDirs.push((await readFile(path.join(dataDir, "runtime-dir"), "utf8")).trim());
        const call = (method: string, urlPath: string, body?: unknown) =>
          requestJson(service.url, method, urlPath, { token: key, body }).catch((error: Error) => ({ status: 0, error }));
        try {
          if (round === 0) {
            // A calm start: functions to update and delete later, two of them scheduled, and one that sleeps.
            for (let i = 0; i < 6; i++) {
              const schedule = i < 2 ? { schedule: "17 3 * * *" } : {};
              const created = await requestJson(service.url, "POST", "/functions", { token: key, body: { name: `base-${i}`, code: code(i), ...schedule } });
              expect(created.status).toBe(201);
            }
            const sleeper = "export default async () => { await new Promise((r) => setTimeout(r, 60000)); return 1; }";
            expect((await requestJson(service.url, "POST", "/functions", { token: key, body: { name: "sleeper", code: sleeper } })).status).toBe(201);
            names = [...Array.from({ length: 6 }, (_, i) => `base-${i}`)];
          }
          // A run in flight when the kill comes.
          expect((await requestJson(service.url, "POST", "/functions/sleeper", { token: key, headers: { prefer: "respond-async" } })).status).toBe(202);
          // Many concurrent changes, some with code big enough for several code parts; the kill lands among them.
          const ops: Promise<unknown>[] = [];
          for (let i = 0; i < 6; i++) {
            const schedule = i % 3 === 0 ? { schedule: "41 4 * * *" } : {};
            ops.push(call("POST", "/functions", { name: `r${round}-new-${i}`, code: code(100 + i, i === 0 ? 500_000 : 0), ...schedule }));
          }
          for (const [i, name] of names.entries()) {
            ops.push(call("PATCH", `/functions/${name}`, { code: code(1000 * round + i, i === 1 ? 500_000 : 0) }));
            if (i % 2 === 1) ops.push(call("PATCH", `/functions/${name}`, { code: code(1000 * round + i + 500) }));
          }
          const doomed = names.filter((name) => name.startsWith(`r${round - 1}-`)).slice(0, 3);
          for (const name of doomed) ops.push(call("DELETE", `/functions/${name}`));
          await sleep(30 + Math.random() * 250);
          await service.kill();
          await Promise.all(ops);
          const listed = names.filter((name) => !doomed.includes(name));
          names = [...new Set([...listed, ...Array.from({ length: 6 }, (_, i) => `r${round}-new-${i}`)])];
        } finally {
          await service.kill();
        }
      }

      const t = await startTestService({ dataDir, adminKey: key });
      runtimeDirs.push(t.service.runtimeDir);
      try {
        await expectConsistentTable(t);
        const list = (await t.call("GET", "/functions?limit=100")).body.items as { name: string }[];
        expect(list.length).toBeGreaterThanOrEqual(7);
        // Every function works and takes a new version: nothing blocks a later update.
        for (const { name } of list.filter((fn) => fn.name !== "sleeper")) {
          const updated = await t.call("PATCH", `/functions/${name}`, { body: { code: code(4242) } });
          expect({ name, status: updated.status }).toEqual({ name, status: 200 });
          const versions = (await t.call("GET", `/functions/${name}/versions`)).body.items as { version: string }[];
          expect(versions.map((v) => v.version)).toEqual(updated.body.versions);
          expect((await t.call("POST", `/functions/${name}`)).body).toMatchObject({ n: 4242 });
        }
        // The scheduled ones have a next firing and an armed timer again.
        const infos = await Promise.all(list.map(async ({ name }) => (await t.call("GET", `/functions/${name}/info`)).body));
        const scheduled = infos.filter((fn) => fn.schedule !== null);
        expect(scheduled.length).toBeGreaterThanOrEqual(2);
        for (const fn of scheduled) expect(Date.parse(fn.next_run_at)).toBeGreaterThan(Date.now());
        const armed = (t.service.deps.scheduler as LocalScheduler).scheduled;
        expect(armed.sort()).toEqual(scheduled.map((fn) => fn.function_id).sort());
        // The sleeper's runs were all cut off by a kill and settled as crashed.
        const runs = (await t.call("GET", "/functions/sleeper/logs")).body.items as { status: string }[];
        expect(runs.length).toBe(3);
        expect(runs.every((run) => run.status === "failed")).toBe(true);
      } finally {
        await t.destroy();
      }
      for (const dir of runtimeDirs) await expectNoProcessesWith(dir);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it("an update that died between its version and its record does not block later updates, even without a restart", async () => {
    // On AWS there is no start-up repair: the next update removes such a version once it is old enough.
    const t = await startTestService();
    try {
      const fn = await t.deploy("abandoned", code(1));
      const compiled = { js: "module.exports = async () => 1;", variables: [], code_sha256: "e".repeat(64), parameter_style: "positional" as const };
      const longAgo = new Date(Date.now() - 10 * 60_000);
      expect(await t.service.deps.store.versions.create(newVersion(fn.function_id, 2, compiled, "// died here", longAgo))).not.toBeNull();
      const updated = await t.call("PATCH", "/functions/abandoned", { body: { code: code(8) } });
      expect(updated.status).toBe(200);
      expect(updated.body.versions).toEqual(["1", "2"]);
      expect((await t.call("GET", "/functions/abandoned/versions/2")).body.code).toBe(code(8));
      expect((await t.call("POST", "/functions/abandoned")).body).toMatchObject({ n: 8 });
      await expectConsistentTable(t);
    } finally {
      await t.destroy();
    }
  });

  it("repairs at start what each crash window leaves, so later updates are not blocked", async () => {
    const t = await startTestService();
    const { dataDir, adminKey } = t;
    let next: TestService | undefined;
    try {
      const store = t.service.deps.store;
      const now = new Date();
      const compiled = { js: "module.exports = async () => 1;", variables: [], code_sha256: "f".repeat(64), parameter_style: "positional" as const };
      // An update cut after its version was written: version 2 exists, the record still says 1.
      const kept = await t.deploy("kept", code(1));
      await store.versions.create(newVersion(kept.function_id, 2, compiled, "// cut short", now));
      // A create cut after its version was written: a version of a function with no record.
      await store.versions.create(newVersion("fn_01m00000000000000000000000", 1, compiled, "// never recorded", now));
      // A delete cut after the record went: its versions stay.
      const gone = await t.deploy("gone", code(2));
      expect(await store.functions.delete({ ...gone, account_id: "local" })).toBe(true);
      // A create cut after its record was written: still deploying.
      await t.deploy("stuck", code(3));
      const stuck = await store.functions.getByName("local", "stuck"); // as stored, with its deploy_id
      expect(await store.functions.setStatus(stuck!, "deploying", null)).toMatchObject({ status: "deploying" });
      await t.stop();

      next = await startTestService({ dataDir, adminKey });
      await expectConsistentTable(next);
      expect((await next.call("GET", "/functions/stuck/info")).body.status).toBe("active");
      const updated = await next.call("PATCH", "/functions/kept", { body: { code: code(7) } });
      expect(updated.status).toBe(200);
      expect(updated.body.versions).toEqual(["1", "2"]);
      expect((await next.call("POST", "/functions/kept")).body).toMatchObject({ n: 7 });
    } finally {
      await (next ?? t).destroy();
    }
  });
});
