import { ECHO_FN, TITLE_FN } from "../helpers/code";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";

let t: TestService;
let keyA: string;
let keyB: string;
beforeAll(async () => {
  t = await startTestService();
  keyA = await t.newAccount("alice");
  keyB = await t.newAccount("bob");
});
afterAll(() => t.destroy());

describe("accounts are isolated", () => {
  it("hides A's functions from B until A shares one, then B may read and fork it by id only", async () => {
    const created = await t.call("POST", "/functions", { token: keyA, body: { name: "scraper", code: TITLE_FN } });
    expect(created.status).toBe(201);
    const id = created.body.function_id;

    expectError(await t.call("GET", "/functions/scraper/info", { token: keyB }), 404, "function_not_found");
    expectError(await t.call("GET", `/functions/${id}/info`, { token: keyB }), 404, "function_not_found");
    expectError(await t.call("PATCH", `/functions/${id}`, { token: keyB, body: { shared: true } }), 404, "function_not_found");
    expectError(await t.call("DELETE", `/functions/${id}`, { token: keyB }), 404, "function_not_found");
    expectError(await t.call("GET", `/functions/${id}/versions`, { token: keyB }), 404, "function_not_found");
    expectError(await t.call("POST", `/functions/${id}/fork`, { token: keyB }), 404, "function_not_found");
    expect((await t.call("GET", "/functions", { token: keyB })).body.items).toEqual([]);

    await t.call("PATCH", "/functions/scraper", { token: keyA, body: { shared: true } });
    const info = await t.call("GET", `/functions/${id}/info`, { token: keyB });
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ function_id: id, name: "scraper", shared: true });
    // Shared means readable and forkable, nothing more.
    expectError(await t.call("GET", "/functions/scraper/info", { token: keyB }), 404, "function_not_found");
    expectError(await t.call("PATCH", `/functions/${id}`, { token: keyB, body: { description: "mine" } }), 404, "function_not_found");
    expectError(await t.call("DELETE", `/functions/${id}`, { token: keyB }), 404, "function_not_found");
    expectError(await t.call("GET", `/functions/${id}/versions`, { token: keyB }), 404, "function_not_found");

    const patched = await t.call("PATCH", "/functions/scraper", {
      token: keyA,
      body: { code: ECHO_FN, schedule: "@daily", schedule_params: { message: "hi" }, timeout_seconds: 120 },
    });
    expect(patched.status).toBe(200);
    // What A's schedule passes is A's: B, which may read the shared record, does not see it.
    expect((await t.call("GET", `/functions/${id}/info`, { token: keyA })).body.schedule_params).toEqual({ message: "hi" });
    expect((await t.call("GET", `/functions/${id}/info`, { token: keyB })).body).toMatchObject({ schedule: "@daily", schedule_params: null });
    const fork = await t.call("POST", `/functions/${id}/fork`, { token: keyB });
    expect(fork.status).toBe(201);
    expect(fork.body).toMatchObject({
      name: "scraper",
      reference_workflow_id: id,
      latest_version: "1",
      versions: ["1"],
      shared: false,
      schedule: null,
      next_run_at: null,
      timeout_seconds: 120,
      status: "active",
      url: `${t.url}/functions/scraper`,
    });
    expect(fork.body.function_id).not.toBe(id);
    expect(fork.body.variables).toEqual((await t.call("GET", `/functions/${id}/info`, { token: keyA })).body.variables);
    const forkCode = await t.call("GET", "/functions/scraper/versions/1", { token: keyB });
    expect(forkCode.body.code).toBe(ECHO_FN);

    const second = await t.call("POST", `/functions/${id}/fork`, { token: keyB });
    expect(second.body.name).toBe("scraper-fork");
    const third = await t.call("POST", `/functions/${id}/fork`, { token: keyB });
    expect(third.body.name).toBe("scraper-fork-2");
    const named = await t.call("POST", `/functions/${id}/fork`, { token: keyB, body: { name: "mine" } });
    expect(named.body.name).toBe("mine");
    expectError(await t.call("POST", `/functions/${id}/fork`, { token: keyB, body: { name: "mine" } }), 409, "function_exists");
    expectError(await t.call("POST", `/functions/${id}/fork`, { token: keyB, body: { name: "Bad Name" } }), 400, "invalid_name");

    const names = (await t.call("GET", "/functions", { token: keyB })).body.items.map((i: { name: string }) => i.name);
    expect(names).toEqual(["mine", "scraper", "scraper-fork", "scraper-fork-2"]);
    // The source is untouched, and A's list shows only A's function.
    expect((await t.call("GET", "/functions", { token: keyA })).body.items.map((i: { name: string }) => i.name)).toEqual(["scraper"]);

    await t.call("PATCH", "/functions/scraper", { token: keyA, body: { shared: false } });
    expectError(await t.call("POST", `/functions/${id}/fork`, { token: keyB }), 404, "function_not_found");
    expectError(await t.call("GET", `/functions/${id}/info`, { token: keyB }), 404, "function_not_found");
  });

  it("lets an account fork its own function", async () => {
    const own = await t.call("POST", "/functions", { token: keyA, body: { name: "mine", code: ECHO_FN } });
    const fork = await t.call("POST", `/functions/${own.body.function_id}/fork`, { token: keyA });
    expect(fork.status).toBe(201);
    expect(fork.body).toMatchObject({ name: "mine-fork", reference_workflow_id: own.body.function_id });
  });
});

describe("API keys", () => {
  it("shows a secret once, stores no secret, lists and revokes keys", async () => {
    const created = await t.call("POST", "/api-keys", { token: keyA, body: { name: "ci" } });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^bfn_[A-Za-z0-9_-]{43}$/);
    expect(created.body).toMatchObject({ name: "ci", account: "alice", admin: false, plan: "free" });
    expect(created.body.key.startsWith(created.body.prefix)).toBe(true);

    const viaNew = await t.call("GET", "/functions", { token: created.body.key });
    expect(viaNew.status).toBe(200);
    expect(viaNew.body.items.map((i: { name: string }) => i.name)).toContain("scraper");

    const list = await t.call("GET", "/api-keys", { token: keyA });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(2);
    expect(list.text).not.toContain(created.body.key);
    for (const item of list.body.items) expect(Object.keys(item).sort()).toEqual(["account", "admin", "created_at", "key_id", "name", "prefix"]);

    // B cannot see or revoke A's key.
    expect((await t.call("GET", "/api-keys", { token: keyB })).body.items.map((k: { key_id: string }) => k.key_id)).not.toContain(created.body.key_id);
    expectError(await t.call("DELETE", `/api-keys/${created.body.key_id}`, { token: keyB }), 404, "key_not_found");

    expect((await t.call("DELETE", `/api-keys/${created.body.key_id}`, { token: keyA })).status).toBe(204);
    expectError(await t.call("GET", "/functions", { token: created.body.key }), 401, "invalid_token");
    expectError(await t.call("DELETE", `/api-keys/${created.body.key_id}`, { token: keyA }), 404, "key_not_found");
  });

  it("lets only an admin key create admin keys or keys for other accounts", async () => {
    expectError(await t.call("POST", "/api-keys", { token: keyA, body: { account: "bob" } }), 403, "forbidden");
    expectError(await t.call("POST", "/api-keys", { token: keyA, body: { admin: true } }), 403, "forbidden");
    expectError(await t.call("POST", "/api-keys", { token: keyA, body: { plan: "pro" } }), 403, "forbidden");
    expectError(await t.call("POST", "/api-keys", { body: { account: "carol", plan: "platinum" } }), 400, "invalid_request");

    const carol = await t.call("POST", "/api-keys", { body: { account: "carol", plan: "pro" } });
    expect(carol.status).toBe(201);
    expect(carol.body).toMatchObject({ account: "carol", plan: "pro", admin: false });
    expect((await t.call("GET", "/functions", { token: carol.body.key })).body.items).toEqual([]);
    // pro allows 900 s; free would not.
    const long = await t.call("POST", "/functions", { token: carol.body.key, body: { name: "long", code: ECHO_FN, timeout_seconds: 900 } });
    expect(long.status).toBe(201);

    // A fork into a smaller plan is fitted to that plan's caps.
    await t.call("PATCH", "/functions/long", { token: carol.body.key, body: { shared: true, memory_mb: 8192 } });
    const fitted = await t.call("POST", `/functions/${long.body.function_id}/fork`, { token: keyA });
    expect(fitted.body).toMatchObject({ timeout_seconds: 300, memory_mb: 2048, name: "long" });

    const admin = await t.call("POST", "/api-keys", { body: { admin: true, name: "second admin" } });
    expect(admin.body).toMatchObject({ account: "local", admin: true });
    expect((await t.call("POST", "/api-keys", { token: admin.body.key, body: { account: "dave" } })).status).toBe(201);
  });
});
