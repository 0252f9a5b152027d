import { RunQueueState } from "../../lambdas/queue/queueState";
import type { GetAccountSettingsCommand } from "@aws-sdk/client-lambda";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { MAX_BODY_BYTES } from "../../lambdas/config/serviceConfig";
import type { DeployJob, DeployJobs, Deps } from "../../lambdas/deps";
import { createFunction } from "../../lambdas/functions/createFunction";
import { deleteFunction } from "../../lambdas/functions/deleteFunction";
import { runDeployJob } from "../../lambdas/functions/deployJob";
import { forkFunction } from "../../lambdas/functions/forkFunction";
import { ENQUEUE_FAILED_REASON, STALE_DEPLOY_MS } from "../../lambdas/functions/startDeploy";
import { DEPLOY_JOB_MAX_EVENT_AGE_MS, DEPLOY_JOB_TIMEOUT_MS } from "../../lambdas/functions/deployLimits";
import type { FunctionItem, VersionWithCode } from "../../lambdas/functions/types";
import { updateFunction } from "../../lambdas/functions/updateFunction";
import { ApiError } from "../../lambdas/http/errors";
import type { Principal } from "../../lambdas/identity/identity";
import { createAccountQuotaCheck } from "../../lambdas/runtime/aws/accountQuotas";
import { makeDeployJobHandler } from "../../lambdas/runtime/aws/deployJobs";
import type { DeployGuard, DeployResult, Runtime } from "../../lambdas/runtime/runtime";
import type { Scheduler } from "../../lambdas/schedule/scheduler";
import { ECHO_FN, NO_PARAMS_FN } from "../helpers/code";
import { FakeClock } from "../helpers/fakeClock";
import { inlineCodeAnalysis } from "../helpers/inlineCodeAnalysis";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";

const START = "2026-11-22T12:00:00.000Z";
const ACTIVE: DeployResult = { status: "active", status_reason: null };

let memory: MemoryStore;
beforeAll(async () => {
  memory = await startMemoryStore();
});
afterAll(() => memory.close());

type RuntimeCall = { op: "deploy" | "configure"; function_id: string; version: number; memory_mb: number; source?: string };

/**
 * A runtime (Lambda cannot run here) that records what it is asked and answers as scripted:
 * active by default; a queued result or Error; a deploy held until the test releases it.
 */
class FakeRuntime implements Runtime {
  readonly calls: RuntimeCall[] = [];
  readonly results: (DeployResult | Error)[] = [];
  readonly removed: string[] = [];
  private held: { started: () => void; release: Promise<void> } | undefined;
  configure?: (fn: FunctionItem) => Promise<DeployResult>;

  constructor(withConfigure: boolean) {
    if (withConfigure) {
      this.configure = async (fn) => {
        this.calls.push({ op: "configure", function_id: fn.function_id, version: fn.latest_version, memory_mb: fn.memory_mb });
        return this.answer();
      };
    }
  }

  /** Holds the next deploy until `release` is called; resolves once it has started. */
  holdNextDeploy(): { started: Promise<void>; release: () => void } {
    let release!: () => void;
    let started!: () => void;
    const startedPromise = new Promise<void>((resolve) => (started = resolve));
    this.held = { started, release: new Promise<void>((resolve) => (release = resolve)) };
    return { started: startedPromise, release };
  }

  async deploy(fn: FunctionItem, version: VersionWithCode, guard?: DeployGuard): Promise<DeployResult> {
    this.calls.push({ op: "deploy", function_id: fn.function_id, version: version.version, memory_mb: fn.memory_mb, source: version.source });
    const held = this.held;
    this.held = undefined;
    if (held) {
      held.started();
      await held.release;
      // As the AWS runtime does before each change it makes to the function's Lambda.
      await guard?.();
    }
    return this.answer();
  }

  private answer(): DeployResult {
    const result = this.results.shift() ?? ACTIVE;
    if (result instanceof Error) throw result;
    return result;
  }

  invoke(): never {
    throw new Error("no runs in these tests");
  }
  async remove(fn: FunctionItem): Promise<void> {
    this.removed.push(fn.function_id);
  }
  async close(): Promise<void> {}
}

/** The AWS adapter's stand-in: jobs are kept for the test to run, or refused when told. */
class JobQueue implements DeployJobs {
  readonly jobs: DeployJob[] = [];
  refuseNext = false;

  async enqueue(job: DeployJob): Promise<void> {
    if (this.refuseNext) {
      this.refuseNext = false;
      throw new Error("AccessDeniedException: not authorized to perform lambda:InvokeFunction");
    }
    this.jobs.push(job);
  }
}

let accounts = 0;

/** A service on the shared store: deploy jobs (AWS) unless `inline`, a runtime with `configure` unless told otherwise. */
function service(options: { inline?: boolean; configure?: boolean; checkFunctionSettings?: Deps["checkFunctionSettings"] } = {}) {
  const clock = new FakeClock(START);
  const runtime = new FakeRuntime(options.configure ?? true);
  const queue = new JobQueue();
  const synced: FunctionItem[] = [];
  const lines: string[] = [];
  const scheduler: Scheduler = {
    check: () => undefined,
    sync: async (fn) => {
      synced.push(fn);
    },
    remove: async () => undefined,
    close: async () => undefined,
  };
  const deps: Deps = {
    store: memory.store,
    identity: { authenticate: () => Promise.reject(new Error("not used")) } as unknown as Deps["identity"],
    runtime,
    queue: new RunQueueState(),
    scheduler,
    codeAnalysis: inlineCodeAnalysis,
    clock,
    secretBox: { seal: () => Promise.reject(new Error("not used")), open: () => Promise.reject(new Error("not used")) },
    config: { plans: DEFAULT_PLANS, publicUrl: null, syncWaitSeconds: 25, maxBodyBytes: MAX_BODY_BYTES },
    log: (line) => lines.push(line),
    deployJobs: options.inline ? undefined : queue,
    checkFunctionSettings: options.checkFunctionSettings,
  };
  const principal: Principal = { account_id: `acct-${++accounts}`, plan: "pro", admin: false, key_id: null };
  const stored = (name: string) => memory.store.functions.getByName(principal.account_id, name);
  const advance = (ms: number) => clock.advanceTo(new Date(clock.now().getTime() + ms).toISOString());
  return { deps, runtime, queue, synced, lines, principal, stored, advance };
}

const deployJob = (fn: FunctionItem, version = fn.latest_version): DeployJob => ({
  kind: "deploy",
  account_id: fn.account_id,
  function_id: fn.function_id,
  name: fn.name,
  version,
  deploy_id: fn.deploy_id,
});

describe("deploys outside the request (deploy jobs)", () => {
  it("create answers `deploying` at once with a job queued and the schedule kept; the job makes the function active", async () => {
    const s = service();
    const fn = await createFunction(s.deps, s.principal, { name: "nightly", code: NO_PARAMS_FN, schedule: "0 3 * * *", memory_mb: 2048 });
    expect(fn).toMatchObject({ status: "deploying", status_reason: null, latest_version: 1 });
    expect(s.queue.jobs).toEqual([{ kind: "deploy", account_id: s.principal.account_id, function_id: fn.function_id, name: "nightly", version: 1, deploy_id: fn.deploy_id }]);
    expect(fn.deploy_id).toMatch(/^dep_[0-9a-z]{26}$/);
    expect(s.runtime.calls).toEqual([]);
    expect(s.synced.map((synced) => [synced.function_id, synced.schedule])).toEqual([[fn.function_id, "0 3 * * *"]]);
    expect(await s.stored("nightly")).toMatchObject({ status: "deploying" });

    // As the deploy-job Lambda gets it: the job as JSON.
    const handler = makeDeployJobHandler(s.deps);
    await expect(handler(JSON.parse(JSON.stringify(s.queue.jobs[0])))).resolves.toEqual({ outcome: "active" });
    expect(s.runtime.calls).toEqual([{ op: "deploy", function_id: fn.function_id, version: 1, memory_mb: 2048, source: NO_PARAMS_FN }]);
    expect(await s.stored("nightly")).toMatchObject({ status: "active", status_reason: null, revision: 2 });

    // The same job again (Lambda delivers at least once): nothing more.
    await expect(handler(s.queue.jobs[0])).resolves.toEqual({ outcome: "not_deploying" });
    expect(s.runtime.calls).toHaveLength(1);
  });

  it("a deploy that throws, or that the runtime reports failed, leaves the function failed with the reason", async () => {
    const s = service();
    s.runtime.results.push(new Error("Rate exceeded"), { status: "failed", status_reason: "Lambda reports the function Failed: InvalidImage" });
    const first = await createFunction(s.deps, s.principal, { name: "first", code: ECHO_FN });
    const second = await createFunction(s.deps, s.principal, { name: "second", code: ECHO_FN });
    expect(await runDeployJob(s.deps, deployJob(first))).toBe("failed");
    expect(await runDeployJob(s.deps, deployJob(second))).toBe("failed");
    expect(await s.stored("first")).toMatchObject({ status: "failed", status_reason: "Deploy failed: Rate exceeded" });
    expect(await s.stored("second")).toMatchObject({ status: "failed", status_reason: "Lambda reports the function Failed: InvalidImage" });
    expect(s.lines).toEqual([expect.stringMatching(new RegExp(`^deploy of ${first.function_id} v1 failed: Error: Rate exceeded`))]);
  });

  it("a job superseded by a newer version does nothing; the newer version's job deploys it", async () => {
    const s = service();
    const fn = await createFunction(s.deps, s.principal, { name: "scraper", code: NO_PARAMS_FN });
    const updated = await updateFunction(s.deps, s.principal, "scraper", { code: ECHO_FN });
    expect(updated).toMatchObject({ status: "deploying", latest_version: 2 });
    expect(s.queue.jobs.map((job) => job.version)).toEqual([1, 2]);
    expect(await runDeployJob(s.deps, deployJob(fn, 1))).toBe("superseded");
    expect(s.runtime.calls).toEqual([]);
    expect(await runDeployJob(s.deps, deployJob(updated))).toBe("active");
    expect(s.runtime.calls).toEqual([{ op: "deploy", function_id: fn.function_id, version: 2, memory_mb: 1024, source: ECHO_FN }]);
    expect(await s.stored("scraper")).toMatchObject({ status: "active", latest_version: 2 });
  });

  it("a job whose function was deleted, or whose name now belongs to another function, does nothing", async () => {
    const s = service();
    const fn = await createFunction(s.deps, s.principal, { name: "gone", code: NO_PARAMS_FN });
    await deleteFunction(s.deps, s.principal, "gone");
    expect(await runDeployJob(s.deps, deployJob(fn))).toBe("gone");
    await createFunction(s.deps, s.principal, { name: "gone", code: NO_PARAMS_FN });
    expect(await runDeployJob(s.deps, deployJob(fn))).toBe("gone");
    expect(s.runtime.calls).toEqual([]);
    expect(await s.stored("gone")).toMatchObject({ status: "deploying" });
  });

  it("a function deleted while its job deploys it has what the deploy provisioned removed again", async () => {
    const s = service();
    const fn = await createFunction(s.deps, s.principal, { name: "fleeting", code: NO_PARAMS_FN });
    const held = s.runtime.holdNextDeploy();
    const running = runDeployJob(s.deps, deployJob(fn));
    await held.started;
    await deleteFunction(s.deps, s.principal, "fleeting");
    expect(s.runtime.removed).toEqual([fn.function_id]);
    held.release();
    expect(await running).toBe("gone");
    expect(s.runtime.removed).toEqual([fn.function_id, fn.function_id]);
    expect(await s.stored("fleeting")).toBeUndefined();
  });

  it("new memory for an active function queues a configure job, which applies it", async () => {
    const s = service();
    const fn = await createFunction(s.deps, s.principal, { name: "sized", code: NO_PARAMS_FN });
    await runDeployJob(s.deps, deployJob(fn));
    const updated = await updateFunction(s.deps, s.principal, "sized", { memory_mb: 2048 });
    expect(updated).toMatchObject({ status: "deploying", memory_mb: 2048, latest_version: 1 });
    const job = s.queue.jobs[1];
    expect(job).toEqual({ ...deployJob(updated), kind: "configure" });
    expect(updated.deploy_id).not.toBe(fn.deploy_id);
    expect(await runDeployJob(s.deps, job!)).toBe("active");
    expect(s.runtime.calls.map((call) => [call.op, call.memory_mb])).toEqual([
      ["deploy", 1024],
      ["configure", 2048],
    ]);
    expect(await s.stored("sized")).toMatchObject({ status: "active", memory_mb: 2048 });

    // Settings the runtime does not hold change nothing there.
    await updateFunction(s.deps, s.principal, "sized", { description: "resized" });
    expect(s.queue.jobs).toHaveLength(2);
    expect(await s.stored("sized")).toMatchObject({ status: "active", description: "resized" });
  });

  it("memory changed while a deploy runs is applied before the job ends, without a second job", async () => {
    const s = service();
    const fn = await createFunction(s.deps, s.principal, { name: "racing", code: NO_PARAMS_FN });
    const held = s.runtime.holdNextDeploy();
    const running = runDeployJob(s.deps, deployJob(fn));
    await held.started;
    const updated = await updateFunction(s.deps, s.principal, "racing", { memory_mb: 4096 });
    expect(updated).toMatchObject({ status: "deploying", memory_mb: 4096 });
    expect(s.queue.jobs).toHaveLength(1);
    held.release();
    expect(await running).toBe("active");
    expect(s.runtime.calls.map((call) => [call.op, call.memory_mb])).toEqual([
      ["deploy", 1024],
      ["configure", 4096],
    ]);
    expect(await s.stored("racing")).toMatchObject({ status: "active", memory_mb: 4096 });
  });

  it("a job that cannot be queued leaves the function failed, saying to send the code again; sending it again redeploys", async () => {
    const s = service();
    s.queue.refuseNext = true;
    const fn = await createFunction(s.deps, s.principal, { name: "unlucky", code: ECHO_FN });
    expect(fn).toMatchObject({ status: "failed", status_reason: ENQUEUE_FAILED_REASON });
    expect(ENQUEUE_FAILED_REASON).toBe("The deploy could not be started; send the code again to retry");
    expect(await s.stored("unlucky")).toMatchObject({ status: "failed", status_reason: ENQUEUE_FAILED_REASON });
    expect(s.lines).toEqual([expect.stringMatching(/^queueing the deploy job of fn_\w+ v1 failed: Error: AccessDeniedException/)]);

    const resent = await updateFunction(s.deps, s.principal, "unlucky", { code: ECHO_FN });
    expect(resent).toMatchObject({ status: "deploying", status_reason: null, latest_version: 1 });
    expect(s.queue.jobs).toEqual([deployJob(resent)]);
    expect(await runDeployJob(s.deps, deployJob(resent))).toBe("active");
    expect(await s.stored("unlucky")).toMatchObject({ status: "active", latest_version: 1 });
  });
});

describe("sending the same code again", () => {
  it("deploys the latest version of a failed function again, adding no version", async () => {
    const s = service();
    s.runtime.results.push({ status: "failed", status_reason: "Timed out after 120 s waiting for Lambda" });
    const fn = await createFunction(s.deps, s.principal, { name: "flaky", code: ECHO_FN });
    await runDeployJob(s.deps, deployJob(fn));
    expect(await s.stored("flaky")).toMatchObject({ status: "failed" });

    const resent = await updateFunction(s.deps, s.principal, "flaky", { code: ECHO_FN });
    expect(resent).toMatchObject({ status: "deploying", status_reason: null, latest_version: 1 });
    expect(s.queue.jobs).toEqual([deployJob(fn), deployJob(resent)]);
    expect(await runDeployJob(s.deps, deployJob(resent))).toBe("active");
    expect(s.runtime.calls.map((call) => [call.op, call.version])).toEqual([
      ["deploy", 1],
      ["deploy", 1],
    ]);
    expect(await memory.store.versions.meta(fn.function_id, 2)).toBeUndefined();
    expect(await s.stored("flaky")).toMatchObject({ status: "active", latest_version: 1 });
  });

  it("deploys a function stuck `deploying` again once STALE_DEPLOY_MS has passed, and leaves a fresh deploy alone", async () => {
    // Longer than a job can be at work: its latest start (the event age) plus its longest run.
    expect(STALE_DEPLOY_MS).toBe(26 * 60_000);
    expect(STALE_DEPLOY_MS).toBeGreaterThan(DEPLOY_JOB_MAX_EVENT_AGE_MS + DEPLOY_JOB_TIMEOUT_MS);
    const s = service();
    const fn = await createFunction(s.deps, s.principal, { name: "stuck", code: ECHO_FN });

    await s.advance(60_000);
    const fresh = await updateFunction(s.deps, s.principal, "stuck", { code: ECHO_FN });
    expect(fresh).toMatchObject({ status: "deploying", updated_at: fn.updated_at });
    expect(s.queue.jobs).toHaveLength(1);

    // Resending it did not put off the moment it counts as stuck.
    await s.advance(STALE_DEPLOY_MS - 60_000);
    await updateFunction(s.deps, s.principal, "stuck", { code: ECHO_FN });
    expect(s.queue.jobs).toHaveLength(1);
    await s.advance(1);
    const redeployed = await updateFunction(s.deps, s.principal, "stuck", { code: ECHO_FN });
    expect(redeployed).toMatchObject({ status: "deploying", latest_version: 1 });
    expect(redeployed.updated_at).not.toBe(fn.updated_at);
    expect(s.queue.jobs).toEqual([deployJob(fn), deployJob(redeployed)]);
    // The first job, run late (a retry Lambda still held), is not the deploy any more.
    expect(await runDeployJob(s.deps, deployJob(fn))).toBe("superseded");
    expect(await runDeployJob(s.deps, deployJob(redeployed))).toBe("active");
    expect(s.runtime.calls).toHaveLength(1);
  });

  it("a job still at work when a resend starts a new deploy stops before its next change and records nothing", async () => {
    const s = service();
    const fn = await createFunction(s.deps, s.principal, { name: "slow", code: ECHO_FN });
    const held = s.runtime.holdNextDeploy();
    // Its runtime would report failed: recorded, that would overwrite the new deploy.
    s.runtime.results.push({ status: "failed", status_reason: "Timed out after 120 s waiting for Lambda" });
    const running = runDeployJob(s.deps, deployJob(fn));
    await held.started;
    await s.advance(STALE_DEPLOY_MS + 1);
    const resent = await updateFunction(s.deps, s.principal, "slow", { code: ECHO_FN });
    expect(resent.deploy_id).not.toBe(fn.deploy_id);
    held.release();
    expect(await running).toBe("superseded");
    expect(s.lines).toContainEqual(expect.stringMatching(/stopped, another deploy or a delete took the function over/));
    expect(await s.stored("slow")).toMatchObject({ status: "deploying", status_reason: null, deploy_id: resent.deploy_id });
    // It stopped at its guard: the rest of its deploy (the scripted answer) never ran.
    expect(s.runtime.results.splice(0)).toHaveLength(1);
    expect(await runDeployJob(s.deps, deployJob(resent))).toBe("active");
    expect(await s.stored("slow")).toMatchObject({ status: "active", deploy_id: resent.deploy_id });
  });

  it("a status write of an earlier deploy is refused once a resend started a new one (the store's condition on deploy_id)", async () => {
    const s = service();
    s.runtime.results.push({ status: "failed", status_reason: "broken" });
    const fn = await createFunction(s.deps, s.principal, { name: "raced", code: ECHO_FN });
    await runDeployJob(s.deps, deployJob(fn));
    const failed = await s.stored("raced");
    const resent = await updateFunction(s.deps, s.principal, "raced", { code: ECHO_FN });
    // What the first deploy (or a sweeper that read the record before the resend) would write now.
    expect(await memory.store.functions.setStatus(fn, "failed", "late")).toBeUndefined();
    expect(await memory.store.functions.setStatus(failed!, "active", null)).toBeUndefined();
    expect(await s.stored("raced")).toMatchObject({ status: "deploying", status_reason: null, deploy_id: resent.deploy_id });
    expect(await memory.store.functions.setStatus(resent, "active", null)).toMatchObject({ status: "active", deploy_id: resent.deploy_id });
  });

  it("locally (no deploy jobs), deploys a failed function again within the request", async () => {
    const s = service({ inline: true, configure: false });
    s.runtime.results.push({ status: "failed", status_reason: "broken" });
    const created = await createFunction(s.deps, s.principal, { name: "local", code: ECHO_FN });
    expect(created).toMatchObject({ status: "failed", status_reason: "broken" });
    const resent = await updateFunction(s.deps, s.principal, "local", { code: ECHO_FN });
    expect(resent).toMatchObject({ status: "active", status_reason: null, latest_version: 1 });
    expect(s.runtime.calls.map((call) => [call.op, call.version])).toEqual([
      ["deploy", 1],
      ["deploy", 1],
    ]);
    expect(s.queue.jobs).toEqual([]);
  });
});

describe("the pre-flight check of the account's Lambda quotas", () => {
  /** GetAccountSettings of a new account: concurrency 10, so memory is capped at 3008 MB. */
  const newAccount = () => {
    const sent: GetAccountSettingsCommand[] = [];
    const client = {
      send: async (command: GetAccountSettingsCommand) => {
        sent.push(command);
        return { AccountLimit: { ConcurrentExecutions: 10 } };
      },
    };
    return { sent, check: createAccountQuotaCheck({ client, maxMemoryMb: null, clock: new FakeClock(START), log: () => undefined }) };
  };

  async function refused(work: Promise<unknown>): Promise<ApiError> {
    const error = await work.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }

  it("answers 400 for memory the account cannot run, before anything is written, on create, update and fork", async () => {
    const account = newAccount();
    const s = service({ checkFunctionSettings: account.check });
    const before = await memory.scan();

    const error = await refused(createFunction(s.deps, s.principal, { name: "big", code: ECHO_FN, memory_mb: 4096 }));
    expect(error).toMatchObject({ status: 400, code: "invalid_request", details: { field: "memory_mb", limit: 3008 } });
    expect(error.message).toMatch(/^memory_mb 4096 exceeds the 3008 MB/);
    expect(await memory.scan()).toEqual(before);
    expect(s.queue.jobs).toEqual([]);

    const fn = await createFunction(s.deps, s.principal, { name: "big", code: ECHO_FN, memory_mb: 3008 });
    const written = await memory.scan();
    await refused(updateFunction(s.deps, s.principal, "big", { memory_mb: 3009, code: NO_PARAMS_FN }));
    expect(await memory.scan()).toEqual(written);

    // A shared function made when the account could run more: its fork cannot run here.
    const current = (await s.stored("big"))!;
    await memory.store.functions.replace(current, { ...current, memory_mb: 8192, shared: true, revision: current.revision + 1 });
    const shared = await memory.scan();
    const other = { ...s.principal, account_id: `${s.principal.account_id}-other` };
    expect(await refused(forkFunction(s.deps, other, fn.function_id))).toMatchObject({ status: 400, code: "invalid_request" });
    expect(await memory.scan()).toEqual(shared);

    expect(s.queue.jobs).toHaveLength(1);
    expect(account.sent).toHaveLength(1);
  });
});
