/**
 * Profiles on AWS, through the in-process pipeline (Lambda, Step Functions, S3 and KMS stand-ins,
 * the real runner on a real Chromium, the real recorder and sweeper, dynalite): a login kept
 * across two functions' runs; the writer's lease taken before the run, blocking a second writer
 * while it runs and given back at its end, whoever ends it; a save over 50 MB keeps the previous
 * state; states are S3 objects written through presigned POSTs that demand SSE-KMS with the
 * stack's key, and the run holds no S3 or KMS permission of its own.
 */
import { deleteProfile } from "../../lambdas/profiles/handlers/deleteProfile";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { profileStateKey } from "../../lambdas/profiles/aws/profileObjects";
import { grantRunProfiles } from "../../lambdas/profiles/aws/grantRunProfiles";
import { newRun } from "../../lambdas/runs/newRun";
import type { RunProfileGrant } from "../../lambdas/runner/lambdaPackage";
import { apiEvent, type AwsRunWorld, runIdOf, startAwsRunWorld } from "../helpers/awsRunWorld";
import { SECRETS_KEY_ARN } from "../helpers/awsPipeline";
import { CHECK_FN, LOGIN_FN, type LoginSite, loginFn, startLoginSite } from "../helpers/loginSite";

jest.setTimeout(240_000);

const MB50 = 50 * 1024 * 1024;
const BUCKET = "bfn-run-bucket";

let site: LoginSite;
let world: AwsRunWorld;
beforeAll(async () => {
  site = await startLoginSite();
  world = await startAwsRunWorld();
});
afterAll(async () => {
  await world?.close();
  await site?.close();
});

/** The `profiles` of the event the run's Lambda was invoked with. */
function grantsOf(runId: string): RunProfileGrant[] | undefined {
  const event = world.pipeline.lambda.events.find((sent) => (sent as { run_id?: string }).run_id === runId) as { profiles?: RunProfileGrant[] } | undefined;
  return event?.profiles;
}

const objectOf = (key: string) => world.pipeline.s3.objects.get(`${BUCKET}/${key}`);

/** Invokes and waits for the run's end (the test world's sync window is 1 s): its result, or its error, as the record has it. */
async function invokeSettled(name: string, body: unknown): Promise<{ runId: string; answer: Record<string, unknown>; status: string }> {
  const runId = runIdOf(await world.invoke("acct", name, body));
  await world.pipeline.settled();
  const run = await world.run(runId);
  const answer = run?.status === "succeeded" ? (JSON.parse(String(run.result_json)) as Record<string, unknown>) : { error: run?.error };
  return { runId, answer, status: String(run?.status) };
}

it("keeps a login across two functions on AWS: states go to S3 through presigned POSTs demanding SSE-KMS, read back through presigned GETs, the replaced state deleted", async () => {
  await world.create("acct", "login", LOGIN_FN);
  await world.create("acct", "check", CHECK_FN);

  const before = await invokeSettled("check", { site: site.url });
  expect(before.answer).toEqual({ greeting: "who are you?", user: null, token: null, page_cookies: "" });
  // A reader is granted the name with nothing to read, and no form to write.
  expect(grantsOf(before.runId)).toEqual([{ name: "shop", get: null, put: null, locked: false }]);

  const login = await invokeSettled("login", { site: site.url });
  expect([login.status, login.answer]).toEqual(["succeeded", { logged_in: true }]);
  const key = profileStateKey("acct", "shop", login.runId);
  const [grant] = grantsOf(login.runId) ?? [];
  expect(grant).toMatchObject({ name: "shop", get: null, locked: false });
  // The form writes that one key, at most 50 MB, and S3 must encrypt it with the stack's KMS key.
  const fields = grant?.put?.fields ?? {};
  expect(fields).toMatchObject({ key, "x-amz-server-side-encryption": "aws:kms", "x-amz-server-side-encryption-aws-kms-key-id": SECRETS_KEY_ARN });
  const policy = JSON.parse(Buffer.from(String(fields.Policy), "base64").toString("utf8")) as { conditions: unknown[] };
  expect(policy.conditions).toEqual(
    expect.arrayContaining([
      { bucket: BUCKET },
      { key },
      ["content-length-range", 0, MB50],
      { "x-amz-server-side-encryption": "aws:kms" },
      { "x-amz-server-side-encryption-aws-kms-key-id": SECRETS_KEY_ARN },
    ]),
  );
  expect(world.pipeline.s3.encryption.get(`${BUCKET}/${key}`)).toEqual({ algorithm: "aws:kms", keyId: SECRETS_KEY_ARN });
  const saved = JSON.parse(String(objectOf(key))) as { cookies: { name: string; httpOnly: boolean }[] };
  expect(saved.cookies).toEqual([expect.objectContaining({ name: "sid", httpOnly: true })]);
  expect(await world.pipeline.memory.store.profiles.get("acct", "shop")).toMatchObject({ name: "shop", last_function: "login", last_run_id: login.runId, domains: ["127.0.0.1"] });
  expect(await world.pipeline.memory.store.profileStates.stateKey("acct", "shop")).toBe(key);

  const after = await invokeSettled("check", { site: site.url });
  // The cookie is httpOnly: the page cannot read it, yet the server receives it.
  expect(after.answer).toEqual({ greeting: "welcome sid-4f2a9c", user: "alice", token: "token-42", page_cookies: "" });
  const [read] = grantsOf(after.runId) ?? [];
  expect(read).toMatchObject({ name: "shop", put: null, locked: false });
  expect(new URL(String(read?.get)).pathname).toBe(`/${BUCKET}/${key}`);
  expect(new URL(String(read?.get)).searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);

  // A second login writes a new object; once adopted, the old one is deleted.
  const again = await invokeSettled("login", { site: site.url });
  expect(again.status).toBe("succeeded");
  const next = profileStateKey("acct", "shop", again.runId);
  expect(await world.pipeline.memory.store.profileStates.stateKey("acct", "shop")).toBe(next);
  expect(objectOf(next)).toBeDefined();
  expect(objectOf(key)).toBeUndefined();
  expect(world.pipeline.s3.deletes).toContainEqual([key]);

  // The runs held no KMS client of their own: no secret, and profiles never need one.
  expect(world.pipeline.kms.calls).toEqual([]);
  // Every lease went back: another owner takes it at once.
  const now = Date.now();
  expect(await world.pipeline.memory.store.profiles.takeLease("acct", "shop", "probe", now, now + 1000)).toBe(true);
  await world.pipeline.memory.store.profiles.releaseLease("acct", "shop", "probe");

  // DELETE /profiles/shop deletes its state object, then its record.
  const deleted = await deleteProfile(world.deps)(apiEvent("acct", "DELETE", "/profiles/shop", undefined, { name: "shop" }), lambdaContext("deleteProfile", "req"));
  expect(deleted.statusCode).toBe(204);
  expect(world.pipeline.s3.deletes).toContainEqual([next]);
  expect(objectOf(next)).toBeUndefined();
  expect(await world.pipeline.memory.store.profiles.get("acct", "shop")).toBeNull();
  expect((await invokeSettled("check", { site: site.url })).answer).toMatchObject({ greeting: "who are you?" });
});

it("takes the writer's lease before a run starts: a second writer started meanwhile throws ProfileLockedError, a reader still reads, and the lease is free once the first ends", async () => {
  const writer = `import { Session } from "browserfn/runtime";
export default async function run(hold_ms: number) {
  const session = await Session.start({ profile: "busy", persist: true });
  await new Promise((resolve) => setTimeout(resolve, hold_ms));
  await session.close();
  return { held: hold_ms };
}
`;
  const reader = `import { Session } from "browserfn/runtime";
export default async function run() {
  await using session = await Session.start({ profile: "busy" });
  return { read: true };
}
`;
  await world.create("acct", "busy-writer", writer);
  await world.create("acct", "busy-reader", reader);
  // Runs overlap in the workflow; in this one process their invocations take turns.
  world.pipeline.lambda.oneRunAtATime = true;
  try {
    const first = world.invoke("acct", "busy-writer", { hold_ms: 2000 });
    // The first run's lease is taken before its execution starts.
    const started = Date.now();
    while (world.pipeline.lambda.events.length === 0 || !(await world.pipeline.memory.store.profileStates.leases(String((world.pipeline.lambda.events.at(-1) as { run_id: string }).run_id), 1))) {
      if (Date.now() - started > 30_000) throw new Error("the first writer never started");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const firstRunId = String((world.pipeline.lambda.events.at(-1) as { run_id: string }).run_id);
    const [second, reading] = await Promise.all([world.invoke("acct", "busy-writer", { hold_ms: 1 }), world.invoke("acct", "busy-reader", {})]);
    await first;
    await world.pipeline.settled();
    const secondRun = await world.run(runIdOf(second));
    expect(secondRun).toMatchObject({ status: "failed", error: { code: "function_error" } });
    expect(secondRun?.error?.message).toMatch(/ProfileLockedError|in use by another writer/);
    expect(grantsOf(runIdOf(second))).toEqual([{ name: "busy", get: null, put: null, locked: true }]);
    expect(await world.run(runIdOf(reading))).toMatchObject({ status: "succeeded" });
    expect(await world.run(firstRunId)).toMatchObject({ status: "succeeded" });
    expect(await world.pipeline.memory.store.profiles.get("acct", "busy")).toMatchObject({ last_run_id: firstRunId });
    // Given back at the first run's end: the next writer opens at once.
    const third = await invokeSettled("busy-writer", { hold_ms: 1 });
    expect(third.status).toBe("succeeded");
  } finally {
    world.pipeline.lambda.oneRunAtATime = false;
  }
});

it("gives back the lease of a run whose workflow failed without recording it (the sweeper), and deletes what it uploaded", async () => {
  const code = loginFn("crashy");
  const lost = await startAwsRunWorld({
    recorder: (real) => async (payload) => {
      // The recorder never records a run of this world (its table gone): the execution fails, EventBridge tells the sweeper.
      if ((payload as { run_id?: string }).run_id) throw Object.assign(new Error("the table is gone"), { name: "ResourceNotFoundException" });
      return real(payload);
    },
  });
  try {
    await lost.create("acct", "crashy", code);
    const answer = await lost.invoke("acct", "crashy", { site: site.url });
    await lost.pipeline.settled();
    const runId = runIdOf(answer);
    expect(await lost.run(runId)).toMatchObject({ status: "failed", error: { code: "internal_error" } });
    const key = profileStateKey("acct", "crashy", runId);
    // The runner did upload its save; nobody adopted it, and the sweeper deleted it.
    expect(lost.pipeline.s3.requests).toContain(`POST ${key}`);
    expect(lost.pipeline.s3.deletes).toContainEqual([key]);
    expect(lost.pipeline.s3.objects.get(`${BUCKET}/${key}`)).toBeUndefined();
    expect(await lost.pipeline.memory.store.profiles.get("acct", "crashy")).toBeNull();
    expect(await lost.pipeline.memory.store.profileStates.leases(runId, 1)).toBeNull();
    const now = Date.now();
    expect(await lost.pipeline.memory.store.profiles.takeLease("acct", "crashy", "probe", now, now + 1000)).toBe(true);
  } finally {
    await lost.close();
  }
});

it("fails a run that saves more than 50 MB into a profile with profile_too_large, and keeps the previous state and its object", async () => {
  const code = `import { Session } from "browserfn/runtime";
export default async function run(site: string, size: number) {
  await using session = await Session.start({ profile: "big", persist: true });
  const page = await session.newPage();
  await page.goto(site + "/account");
  await page.evaluate(async (size) => {
    localStorage.setItem("saved", "v" + size);
    await new Promise((resolve) => {
      const open = indexedDB.open("blob", 1);
      open.onupgradeneeded = () => open.result.createObjectStore("kv");
      open.onsuccess = () => {
        const tx = open.result.transaction("kv", "readwrite");
        tx.objectStore("kv").put("x".repeat(size), "payload");
        tx.oncomplete = () => { open.result.close(); resolve(null); };
      };
    });
  }, size);
  return { size };
}
`;
  await world.create("acct", "big-writer", code, { memory_mb: 2048 });
  const small = await invokeSettled("big-writer", { site: site.url, size: 1000 });
  expect(small.status).toBe("succeeded");
  const before = await world.pipeline.memory.store.profiles.get("acct", "big");
  const kept = profileStateKey("acct", "big", small.runId);
  const keptBytes = objectOf(kept);
  expect(keptBytes).toBeDefined();

  const over = await invokeSettled("big-writer", { site: site.url, size: 51 * 1024 * 1024 });
  expect(over.status).toBe("failed");
  expect(over.answer.error).toMatchObject({ code: "profile_too_large" });
  expect(String((over.answer.error as { message: string }).message)).toContain("'big'");
  expect(await world.run(over.runId)).toMatchObject({ status: "failed", error: { code: "profile_too_large" } });
  // Nothing was uploaded for it, the record and the object it points at are as they were.
  expect(objectOf(profileStateKey("acct", "big", over.runId))).toBeUndefined();
  expect(await world.pipeline.memory.store.profiles.get("acct", "big")).toEqual(before);
  expect(await world.pipeline.memory.store.profileStates.stateKey("acct", "big")).toBe(kept);
  expect(objectOf(kept)).toEqual(keptBytes);
});

it("gives back the leases of a run the sweeper ends past its deadline (its workflow never started or never ended)", async () => {
  const later = { now: () => new Date(Date.now() + 3600_000) };
  const swept = await startAwsRunWorld({ sweepClock: later });
  try {
    const fn = await swept.create("acct", "lost-writer", LOGIN_FN);
    const store = swept.pipeline.memory.store;
    // A run admitted, marked running and granted its profile (the run starter's own call), whose workflow was lost.
    const queuedAt = new Date(Date.now() - 1000).toISOString();
    await store.limits.admit("acct", "run_lost", { concurrency: 10, invocationsPerMonth: 1000 }, Date.now() + 3600_000, new Date());
    await store.runs.put({ ...newRun(fn, { version: 1, trigger: "http", params: {}, queuedAt }), run_id: "run_lost", status: "running", started_at: queuedAt });
    const grants = await grantRunProfiles({ store, objects: swept.pipeline.profileObjects }, fn, 1, { runId: "run_lost", attempt: 1, nowMs: Date.now(), leaseUntilMs: Date.now() + 3600_000, expiresInSeconds: 60 });
    expect(grants).toEqual([{ name: "shop", get: null, put: expect.objectContaining({ url: expect.any(String) }), locked: false }]);
    const now = Date.now();
    expect(await store.profiles.takeLease("acct", "shop", "probe", now, now + 1000)).toBe(false);
    expect(await swept.pipeline.sweep()).toEqual({ settled: 1 });
    expect(await store.runs.get("run_lost")).toMatchObject({ status: "failed", error: { code: "function_crashed" } });
    expect(await store.profileStates.leases("run_lost", 1)).toBeNull();
    expect(swept.pipeline.s3.deletes).toContainEqual([profileStateKey("acct", "shop", "run_lost")]);
    expect(await store.profiles.takeLease("acct", "shop", "probe", now, now + 1000)).toBe(true);
  } finally {
    await swept.close();
  }
});
