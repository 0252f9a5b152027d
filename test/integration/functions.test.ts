import { ECHO_FN, NO_PARAMS_FN, TITLE_FN } from "../helpers/code";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.destroy());

describe("the function lifecycle", () => {
  it("creates, reads, lists, updates, versions and deletes a function", async () => {
    const created = await t.call("POST", "/functions", {
      body: { name: "title", code: TITLE_FN, description: "Reads a title", timeout_seconds: 60, memory_mb: 512 },
    });
    expect(created.status).toBe(201);
    // The code's warnings (TITLE_FN awaits its calls: none), which /info answers too.
    const record = created.body;
    expect(record.warnings).toEqual([]);
    expect(record).toMatchObject({
      name: "title",
      description: "Reads a title",
      url: `${t.url}/functions/title`,
      status: "active",
      status_reason: null,
      latest_version: "1",
      versions: ["1"],
      variables: [
        { name: "url", type: "string", required: true },
        { name: "max_items", type: "number", default: "10", required: false },
      ],
      schedule: null,
      schedule_timezone: "UTC",
      next_run_at: null,
      timeout_seconds: 60,
      memory_mb: 512,
      shared: false,
      reference_workflow_id: null,
    });
    expect(record.function_id).toMatch(/^fn_[0-9a-z]{26}$/);
    expect(record.workflow_id).toBe(record.function_id);
    expect(Date.parse(record.created_at)).not.toBeNaN();
    expect(record.updated_at).toBe(record.created_at);
    expect(created.headers.get("location")).toBe(`${t.url}/functions/title/info`);
    expect(Object.keys(record)).not.toContain("code_sha256");
    expect(Object.keys(record)).not.toContain("account_id");

    const byName = await t.call("GET", "/functions/title/info");
    expect(byName.status).toBe(200);
    expect(byName.body).toEqual(record);
    const byId = await t.call("GET", `/functions/${record.function_id}/info`);
    expect(byId.body).toEqual(record);

    const list = await t.call("GET", "/functions");
    expect(list.status).toBe(200);
    expect(list.body.next_cursor).toBeNull();
    expect(list.body.items).toEqual([
      expect.objectContaining({ name: "title", url: record.url, function_id: record.function_id, latest_version: "1" }),
    ]);

    const settings = await t.call("PATCH", "/functions/title", { body: { description: null, shared: true } });
    expect(settings.status).toBe(200);
    expect(settings.body).toMatchObject({ description: null, shared: true, latest_version: "1", versions: ["1"] });
    expect(Date.parse(settings.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(record.updated_at));

    const recoded = await t.call("PATCH", `/functions/${record.function_id}`, { body: { code: ECHO_FN } });
    expect(recoded.status).toBe(200);
    expect(recoded.body).toMatchObject({
      latest_version: "2",
      versions: ["1", "2"],
      shared: true,
      status: "active",
      variables: [
        { name: "message", type: "string", required: true },
        { name: "times", type: "number", default: "1", required: false },
      ],
    });

    const same = await t.call("PATCH", "/functions/title", { body: { code: ECHO_FN } });
    expect(same.body.latest_version).toBe("2");

    const versions = await t.call("GET", "/functions/title/versions");
    expect(versions.status).toBe(200);
    expect(versions.body.items.map((v: { version: string }) => v.version)).toEqual(["1", "2"]);
    expect(versions.body.items[0].variables).toEqual(record.variables);
    expect(versions.body.items[1].code_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(versions.body.items[0].code_sha256).not.toBe(versions.body.items[1].code_sha256);

    const v1 = await t.call("GET", "/functions/title/versions/1");
    expect(v1.status).toBe(200);
    expect(v1.body).toMatchObject({ version: "1", code: TITLE_FN, code_sha256: versions.body.items[0].code_sha256 });
    expectError(await t.call("GET", "/functions/title/versions/3"), 404, "version_not_found");
    expectError(await t.call("GET", "/functions/title/versions/x"), 404, "version_not_found");

    const deleted = await t.call("DELETE", "/functions/title");
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    expectError(await t.call("GET", "/functions/title/info"), 404, "function_not_found");
    expectError(await t.call("GET", `/functions/${record.function_id}/info`), 404, "function_not_found");
    expectError(await t.call("DELETE", "/functions/title"), 404, "function_not_found");
    expect((await t.call("GET", "/functions")).body.items).toEqual([]);

    const again = await t.call("POST", "/functions", { body: { name: "title", code: NO_PARAMS_FN } });
    expect(again.status).toBe(201);
    expect(again.body.function_id).not.toBe(record.function_id);
    expect(again.body.latest_version).toBe("1");
    expect(again.body.variables).toEqual([]);
    await t.call("DELETE", "/functions/title");
  });

  it("lists in name order across pages with an opaque cursor", async () => {
    const names = ["delta", "alpha", "echo", "charlie", "bravo"];
    for (const name of names) {
      expect((await t.call("POST", "/functions", { body: { name, code: NO_PARAMS_FN } })).status).toBe(201);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { items: { name: string }[]; next_cursor: string | null } } = await t.call(
        "GET",
        `/functions?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((item) => item.name));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...names].sort());
    expectError(await t.call("GET", "/functions?cursor=%21%21"), 400, "invalid_request");
    for (const name of names) await t.call("DELETE", `/functions/${name}`);
  });

  it("computes next_run_at for a schedule in its time zone and removes it with null", async () => {
    const created = await t.call("POST", "/functions", {
      body: { name: "nightly", code: NO_PARAMS_FN, schedule: "30 2 * * *", schedule_timezone: "Europe/Berlin" },
    });
    expect(created.status).toBe(201);
    const next = new Date(created.body.next_run_at);
    const berlin = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit" });
    expect(berlin.format(next)).toBe("02:30");
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(24 * 3600 * 1000);

    const hourly = await t.call("PATCH", "/functions/nightly", { body: { schedule: "@hourly" } });
    expect(hourly.body).toMatchObject({ schedule: "@hourly", schedule_timezone: "Europe/Berlin" });
    expect(new Date(hourly.body.next_run_at).getUTCMinutes()).toBe(0);

    const removed = await t.call("PATCH", "/functions/nightly", { body: { schedule: null } });
    expect(removed.body).toMatchObject({ schedule: null, next_run_at: null });
    await t.call("DELETE", "/functions/nightly");
  });
});

describe("runtimes that hold settings", () => {
  it("get a settings-only change of memory or timeout through configure, and nothing else", async () => {
    await t.call("POST", "/functions", { body: { name: "configured", code: NO_PARAMS_FN } });
    const calls: { memory_mb: number; timeout_seconds: number }[] = [];
    // The local runtime reads settings per run; an AWS-like runtime must be told (Lambda cannot run here).
    const runtime = t.service.deps.runtime as { configure?: (fn: { memory_mb: number; timeout_seconds: number }) => Promise<unknown> };
    runtime.configure = async (fn) => {
      calls.push({ memory_mb: fn.memory_mb, timeout_seconds: fn.timeout_seconds });
      return { status: "failed", status_reason: "test: configuration rejected" };
    };
    try {
      await t.call("PATCH", "/functions/configured", { body: { description: "no runtime change" } });
      expect(calls).toEqual([]);
      const changed = await t.call("PATCH", "/functions/configured", { body: { memory_mb: 2048 } });
      expect(calls).toEqual([{ memory_mb: 2048, timeout_seconds: 300 }]);
      expect(changed.body).toMatchObject({ memory_mb: 2048, status: "failed", status_reason: "test: configuration rejected" });
    } finally {
      delete runtime.configure;
      await t.call("DELETE", "/functions/configured");
    }
  });
});
