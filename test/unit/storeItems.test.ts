import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { FunctionItem, VersionWithCode } from "../../lambdas/functions/types";
import type { InvokeResult } from "../../lambdas/runtime/runtime";
import { finishRun } from "../../lambdas/runs/finishRun";
import type { RunItem } from "../../lambdas/runs/types";
import type { AccountItem, ApiKeyItem } from "../../lambdas/store/accountStore";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";
import { functionItem, runItem } from "../helpers/records";

// A record handed to a store can carry more than its type says (an outcome or a request the
// service did not parse field by field). Whatever it carries, the item written is keyed by the
// key builders alone and holds the record's own fields only (STYLE.md, rule 11): the attack of
// issue #12 planted an admin API key through a run's extra `pk`/`sk`/`admin`.

const PLANTED_HASH = "f".repeat(64);
/** What a hostile object adds to a record: another item's keys, and fields that are not the record's. */
const HOSTILE = {
  pk: `KEY#${PLANTED_HASH}`,
  sk: "KEY",
  gsi1pk: "ACCOUNT#victim",
  gsi1sk: "KEY#key_planted",
  admin: true,
  key_hash: PLANTED_HASH,
  owner_account_id: "victim",
};
const NOW = new Date("2026-03-01T10:00:42.500Z");

const RUN_ATTRIBUTES = [
  "pk", "sk", "runs_pk", "runs_sk", "acct_runs_pk", "acct_runs_sk", "run_id", "account_id", "function_id", "function_name", "version", "trigger", "status",
  "params_json", "result_json", "error", "logs", "queued_at", "deadline_at", "started_at", "finished_at", "duration_ms", "browser_ms",
  "peak_memory_mb", "memory_mb", "request_origin", "sdk_version", "expires_at",
];
const RUN_FIELDS = [
  "run_id", "account_id", "function_id", "function_name", "version", "trigger", "status", "params", "result_json", "error",
  "logs", "queued_at", "deadline_at", "started_at", "finished_at", "duration_ms", "browser_ms", "peak_memory_mb", "memory_mb",
  "request_origin", "sdk_version",
];
const FUNCTION_FIELDS = Object.keys(functionItem());

function hostile<T>(record: T, extra: Record<string, unknown> = HOSTILE): T {
  return { ...record, ...extra } as unknown as T;
}

const sorted = (names: string[]) => [...names].sort();

describe("store items are built from named fields", () => {
  let memory: MemoryStore;

  beforeEach(async () => {
    memory = await startMemoryStore();
  });
  afterEach(() => memory.close());

  const raw = async (pk: string, sk: string) =>
    (await memory.doc.send(new GetCommand({ TableName: memory.table, Key: { pk, sk }, ConsistentRead: true }))).Item;
  /** Items the hostile fields would have made or marked: the planted key, the victim's index, stray fields. */
  const planted = async () =>
    (await memory.scan()).filter((item) => {
      const isKey = String(item.pk).startsWith("KEY#");
      return item.pk === `KEY#${PLANTED_HASH}` || item.gsi1pk === "ACCOUNT#victim" || "owner_account_id" in item || (!isKey && ("admin" in item || "key_hash" in item));
    });

  it("a run carrying keys and stray fields is written under its own keys, with its own fields only", async () => {
    const fn = functionItem();
    const run = runItem(fn, { run_id: "run_own" });
    await memory.store.runs.put(hostile(run, { ...HOSTILE, expires_at: 1, params_parts: 3, result_parts: 2 }));
    await memory.store.runs.putIfActive(hostile({ ...run, status: "succeeded", result_json: "1", finished_at: NOW.toISOString() }));

    const item = await raw("RUN#run_own", "RUN");
    expect(sorted(Object.keys(item ?? {}))).toEqual(sorted(RUN_ATTRIBUTES));
    expect(item).toMatchObject({ pk: "RUN#run_own", sk: "RUN", runs_pk: `FNID#${fn.function_id}#RUNS`, runs_sk: "run_own", acct_runs_pk: "ACCOUNT#acct#RUNS", acct_runs_sk: "run_own", account_id: "acct", status: "succeeded" });
    expect(item?.expires_at).toBeGreaterThan(Date.parse(run.queued_at) / 1000);
    expect(await raw(`KEY#${PLANTED_HASH}`, "KEY")).toBeUndefined();
    expect(await planted()).toEqual([]);

    const read = await memory.store.runs.get("run_own");
    expect(sorted(Object.keys(read ?? {}))).toEqual(sorted(RUN_FIELDS));
    expect(read).toEqual({ ...run, status: "succeeded", result_json: "1", finished_at: NOW.toISOString() });
  });

  it("a run's error is kept as its code, message and stack (nothing else of it)", async () => {
    const run = runItem(functionItem(), { run_id: "run_err", status: "failed" });
    const error = { code: "function_error", message: "boom", stack: "Error: boom", pk: "KEY#x", admin: true };
    await memory.store.runs.put({ ...run, error: error as unknown as RunItem["error"] });
    expect((await raw("RUN#run_err", "RUN"))?.error).toEqual({ code: "function_error", message: "boom", stack: "Error: boom" });
    expect((await memory.store.runs.get("run_err"))?.error).toEqual({ code: "function_error", message: "boom", stack: "Error: boom" });
  });

  it("a run without optional fields stores none of them", async () => {
    const run = runItem(functionItem(), { run_id: "run_plain" });
    await memory.store.runs.put(run);
    // Running: also in the active index.
    expect(sorted(Object.keys((await raw("RUN#run_plain", "RUN")) ?? {}))).toEqual(sorted([...RUN_ATTRIBUTES, "gsi1pk", "gsi1sk"]));
    expect(await memory.store.runs.get("run_plain")).toEqual(run);
  });

  it("stray attributes of a stored run do not reach its readers", async () => {
    const fn = functionItem();
    const run = runItem(fn, { run_id: "run_stray" });
    await memory.store.runs.put(run);
    await memory.doc.send(
      new UpdateCommand({ TableName: memory.table, Key: { pk: "RUN#run_stray", sk: "RUN" }, UpdateExpression: "SET admin = :t, key_hash = :h", ExpressionAttributeValues: { ":t": true, ":h": PLANTED_HASH } }),
    );
    const reads = [await memory.store.runs.get("run_stray"), ...(await memory.store.runs.recent(fn.function_id, 10)), ...(await memory.store.runs.listActive())];
    for (const read of reads) expect(sorted(Object.keys(read ?? {}))).toEqual(sorted(RUN_FIELDS));
  });

  it("a function record carrying keys and stray fields is written under its account and name, found by its own id", async () => {
    const fn = functionItem({ function_id: "fn_own" });
    const intruder = { ...HOSTILE, gsi1pk: "FNID#fn_victim", gsi1sk: "FN" };
    expect(await memory.store.functions.create(hostile(fn, intruder))).toBe(true);
    const next: FunctionItem = { ...fn, description: "changed", revision: 2 };
    expect(await memory.store.functions.replace(fn, hostile(next, intruder))).toBe(true);

    const item = await raw("ACCOUNT#acct", "FN#scraper");
    expect(sorted(Object.keys(item ?? {}))).toEqual(sorted(["pk", "sk", "gsi1pk", "gsi1sk", ...FUNCTION_FIELDS]));
    expect(item).toMatchObject({ gsi1pk: "FNID#fn_own", gsi1sk: "FN", description: "changed" });
    expect(await memory.store.functions.getById("fn_victim")).toBeUndefined();
    expect(await memory.store.functions.getById("fn_own")).toEqual(next);
    expect(sorted(Object.keys((await memory.store.functions.getByName("acct", "scraper")) ?? {}))).toEqual(sorted(FUNCTION_FIELDS));
    expect(await planted()).toEqual([]);
  });

  it("an API key carrying another key's hash and another account's index is stored as itself, admin only when it is true", async () => {
    const key: ApiKeyItem = {
      key_id: "key_own", account_id: "acct", key_hash: "a".repeat(64), prefix: "bfn_aaaa", name: null, admin: false, created_at: NOW.toISOString(),
    };
    const intruder = { pk: `KEY#${PLANTED_HASH}`, sk: "KEY", gsi1pk: "ACCOUNT#victim", gsi1sk: "KEY#key_planted", plan: "pro", owner_account_id: "victim" };
    expect(await memory.store.accounts.putApiKey(hostile(key, intruder))).toBe(true);
    expect(await memory.store.accounts.putApiKey(hostile({ ...key, key_id: "key_str", key_hash: "b".repeat(64) }, { admin: "true" }))).toBe(true);

    const item = await raw(`KEY#${"a".repeat(64)}`, "KEY");
    expect(item).toEqual({ pk: `KEY#${"a".repeat(64)}`, sk: "KEY", gsi1pk: "ACCOUNT#acct", gsi1sk: "KEY#key_own", ...key });
    expect((await raw(`KEY#${"b".repeat(64)}`, "KEY"))?.admin).toBe(false);
    expect(await raw(`KEY#${PLANTED_HASH}`, "KEY")).toBeUndefined();
    expect(await memory.store.accounts.listApiKeys("victim")).toEqual([]);
    expect(await memory.store.accounts.getApiKeyByHash("a".repeat(64))).toEqual(key);
    expect(await planted()).toEqual([]);
  });

  it("an account carrying keys and stray fields is stored as itself, and answered without them", async () => {
    const account: AccountItem = { account_id: "acme", plan: "free", created_at: NOW.toISOString() };
    const answered = await memory.store.accounts.ensureAccount(hostile(account));
    expect(answered).toEqual(account);
    expect(Object.keys(answered).sort()).toEqual(["account_id", "created_at", "plan"]);
    expect(await raw("ACCOUNT#acme", "ACCOUNT")).toEqual({ pk: "ACCOUNT#acme", sk: "ACCOUNT", ...account });
    expect(await memory.store.accounts.getAccount("acme")).toEqual(account);
    expect(await planted()).toEqual([]);
  });

  it("a version carrying keys and stray fields is stored under its function and number, code apart", async () => {
    const version: VersionWithCode = {
      function_id: "fn_own", version: 1, created_at: NOW.toISOString(), code_sha256: "c".repeat(64), variables: [],
      parameter_style: "object", source: "export default async () => 1;", js: "module.exports = async () => 1;",
    };
    const token = await memory.store.versions.create(hostile(version, { ...HOSTILE, code_token: "attacker" }));
    expect(token).toEqual(expect.any(String));

    const item = await raw("FNID#fn_own", "VER#000001");
    const { source: _s, js: _j, ...meta } = version;
    expect(item).toEqual({ pk: "FNID#fn_own", sk: "VER#000001", ...meta, variables: "[]", code_token: token });
    expect(await memory.store.versions.meta("fn_own", 1)).toEqual(meta);
    expect(await memory.store.versions.list("fn_own")).toEqual([meta]);
    expect(await memory.store.versions.get("fn_own", 1)).toEqual(version);
    const parts = (await memory.scan()).filter((i) => String(i.sk).startsWith("CODE#"));
    expect(parts.length).toBeGreaterThan(0);
    for (const part of parts) expect(Object.keys(part).sort()).toEqual(["data", "pk", "sk"]);
    expect(await planted()).toEqual([]);
  });

  it("keeps a function's and a version's parameters as one JSON text attribute, and reads those written as a list of maps before", async () => {
    const variables = Array.from({ length: 3000 }, (_, i) => ({ name: `p${i}`, type: "[]", required: false, default: "[]", schema_note: "a note" }));
    const fn = functionItem({ function_id: "fn_params", variables });
    expect(await memory.store.functions.create(fn)).toBe(true);
    const version: VersionWithCode = { function_id: "fn_params", version: 1, created_at: NOW.toISOString(), code_sha256: "e".repeat(64), variables, source: "s", js: "j" };
    await memory.store.versions.create(version);
    // One attribute each (its text gzipped, this big), not 3,000 maps for the store to marshal and check on every write.
    const [fnItem] = (await memory.scan()).filter((item) => item.function_id === "fn_params" && item.name === "scraper");
    expect(fnItem?.variables).toBeInstanceOf(Uint8Array);
    expect((fnItem?.variables as Uint8Array).byteLength).toBeLessThan(16 * 1024);
    expect((await raw("FNID#fn_params", "VER#000001"))?.variables).toBeInstanceOf(Uint8Array);
    expect((await memory.store.functions.getById("fn_params"))?.variables).toEqual(variables);
    expect((await memory.store.versions.meta("fn_params", 1))?.variables).toEqual(variables);
    // Records written before: a list of maps, read as it is.
    const before = [{ name: "url", type: "string", required: true }];
    await memory.doc.send(new UpdateCommand({ TableName: memory.table, Key: { pk: "FNID#fn_params", sk: "VER#000001" }, UpdateExpression: "SET variables = :v", ExpressionAttributeValues: { ":v": before } }));
    await memory.doc.send(new UpdateCommand({ TableName: memory.table, Key: { pk: fnItem?.pk, sk: fnItem?.sk }, UpdateExpression: "SET variables = :v", ExpressionAttributeValues: { ":v": before } }));
    expect((await memory.store.versions.meta("fn_params", 1))?.variables).toEqual(before);
    expect((await memory.store.functions.getById("fn_params"))?.variables).toEqual(before);
  });

  it("a deploy's status is answered as the record now stands, without the store sending the whole record back", async () => {
    const variables = Array.from({ length: 3000 }, (_, i) => ({ name: `p${i}`, type: "[]", required: false }));
    const fn = functionItem({ function_id: "fn_status", name: "status-fn", status: "deploying", variables, input_schema: { type: "object", properties: { p0: { type: "array" } }, required: [], additionalProperties: false } });
    expect(await memory.store.functions.create(fn)).toBe(true);
    const sent: unknown[] = [];
    const send = memory.doc.send.bind(memory.doc);
    const spy = jest.spyOn(memory.doc, "send").mockImplementation(((command: { input: unknown }) => (sent.push(command.input), send(command as never))) as never);
    try {
      // Nothing else wrote since `fn`: the store answers what the update set, and that with `fn` is the record.
      const active = await memory.store.functions.setStatus(fn, "active", null);
      expect(sent).toEqual([expect.objectContaining({ ReturnValues: "UPDATED_NEW" })]);
      expect(active).toEqual(await memory.store.functions.getByName(fn.account_id, fn.name));
      expect(active).toMatchObject({ status: "active", revision: fn.revision + 1, variables });

      // The scheduler moved next_run_at (no revision of its own): it is in the answer.
      await memory.store.functions.setNextRun(fn, "2026-03-02T00:00:00.000Z");
      const again = await memory.store.functions.setStatus({ ...fn, revision: fn.revision + 1 }, "failed", "why");
      expect(again).toEqual(await memory.store.functions.getByName(fn.account_id, fn.name));
      expect(again?.next_run_at).toBe("2026-03-02T00:00:00.000Z");

      // Another writer changed the record since the caller read it: the record is read, not the caller's copy patched.
      await memory.store.functions.markHasSecrets(fn);
      const stale = { ...fn, revision: fn.revision + 2 };
      const read = await memory.store.functions.setStatus(stale, "active", null);
      expect(read).toEqual(await memory.store.functions.getByName(fn.account_id, fn.name));
      expect(read).toMatchObject({ status: "active", has_secrets: true });
    } finally {
      spy.mockRestore();
    }
  });

  it("a version stored without parameter_style is read without one", async () => {
    const version: VersionWithCode = {
      function_id: "fn_old", version: 1, created_at: NOW.toISOString(), code_sha256: "d".repeat(64), variables: [], source: "s", js: "j",
    };
    await memory.store.versions.create(version);
    expect(Object.keys((await memory.store.versions.meta("fn_old", 1)) ?? {})).not.toContain("parameter_style");
  });

  it("a schedule firing is read back with its own fields only", async () => {
    await memory.store.schedules.claim("fn_own", NOW.toISOString());
    const [firing] = await memory.store.schedules.latest("fn_own", 5);
    expect(firing).toEqual({ function_id: "fn_own", scheduled_for: NOW.toISOString(), outcome: "claimed", run_id: null, reason: null });
  });

  describe("finishRun", () => {
    const deps = () => ({ store: memory.store, clock: { now: () => NOW }, log: () => undefined });

    it("records a run under its own keys, account and function, whatever the runtime's result carries", async () => {
      const fn = functionItem({ function_id: "fn_own", account_id: "acct" });
      const victimFn = functionItem({ function_id: "fn_victim", account_id: "victim", name: "other" });
      const run = runItem(fn, { run_id: "run_own", queued_at: "2026-03-01T10:00:00.000Z", started_at: "2026-03-01T10:00:00.000Z" });
      const victim = runItem(victimFn, { run_id: "run_victim", queued_at: "2026-03-01T10:00:00.000Z", started_at: "2026-03-01T10:00:00.000Z" });
      await memory.store.runs.put(run);
      await memory.store.runs.put(victim);

      const result = {
        status: "succeeded", result_json: '{"ok":true}', error: null, logs: "LOG x\n", duration_ms: 42_500, browser_ms: 100, peak_memory_mb: 300,
        pk: "RUN#run_victim", sk: "RUN", gsi1pk: "FNID#fn_victim#RUNS", gsi1sk: "run_victim",
        run_id: "run_victim", account_id: "victim", function_id: "fn_victim", function_name: "other", memory_mb: 10_240,
        completion_token: "forged", finished_at: "1999-01-01T00:00:00.000Z", admin: true,
      } as unknown as InvokeResult;
      const final = await finishRun(deps(), run, result, "now");

      const expected: RunItem = {
        ...run, status: "succeeded", result_json: '{"ok":true}', error: null, logs: "LOG x\n", duration_ms: 42_500, browser_ms: 100,
        peak_memory_mb: 300, finished_at: NOW.toISOString(),
      };
      expect(final).toEqual(expected);
      expect(sorted(Object.keys(final))).toEqual(sorted(RUN_FIELDS));
      expect(await memory.store.runs.get("run_own")).toEqual(expected);
      expect(await raw("RUN#run_own", "RUN")).toMatchObject({ runs_pk: "FNID#fn_own#RUNS", account_id: "acct", function_id: "fn_own" });
      expect(await memory.store.runs.get("run_victim")).toEqual(victim);
      expect((await memory.store.meters.usage("victim", "2026-03")).total.invocations).toBe(0);
      expect((await memory.store.meters.usage("acct", "2026-03")).functions.fn_own?.invocations).toBe(1);
      expect(await planted()).toEqual([]);
    });

    it("keeps an error's code, message and stack only", async () => {
      const run = runItem(functionItem(), { run_id: "run_failed" });
      await memory.store.runs.put(run);
      const error = { code: "function_error", message: "boom", stack: "Error: boom\n at x", pk: "KEY#x" };
      const result = { status: "failed", result_json: null, error, logs: "", duration_ms: 1, browser_ms: 0, peak_memory_mb: null } as unknown as InvokeResult;
      const final = await finishRun(deps(), run, result, "now");
      expect(final.error).toEqual({ code: "function_error", message: "boom", stack: "Error: boom\n at x" });
      expect((await raw("RUN#run_failed", "RUN"))?.error).toEqual({ code: "function_error", message: "boom", stack: "Error: boom\n at x" });
    });
  });
});
