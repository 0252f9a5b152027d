import { ECHO_FN, NO_PARAMS_FN } from "../helpers/code";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
  expect((await t.call("POST", "/functions", { body: { name: "echo", code: ECHO_FN } })).status).toBe(201);
});
afterAll(() => t.destroy());

async function functionNames(): Promise<string[]> {
  return (await t.call("GET", "/functions")).body.items.map((item: { name: string }) => item.name);
}

describe("authentication", () => {
  it("answers 401 missing_token without a token and invalid_token for a bad one", async () => {
    expectError(await t.call("GET", "/functions", { token: null }), 401, "missing_token");
    expectError(await t.call("GET", "/functions", { token: "bfn_not-a-real-key-at-all-0000000000000" }), 401, "invalid_token");
    expectError(await t.call("GET", "/functions", { token: "eyJhbGciOiJub25lIn0.e30." }), 401, "invalid_token");
    expectError(await t.call("GET", "/functions", { token: null, headers: { authorization: "Basic abc" } }), 401, "invalid_token");
  });

  it("keeps /health and /openapi.json open", async () => {
    const health = await t.call("GET", "/health", { token: null });
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok" });
    expect((await t.call("GET", "/openapi.json", { token: null })).status).toBe(200);
  });
});

describe("bad input", () => {
  it("rejects malformed JSON and wrong field types with invalid_request", async () => {
    const malformed = expectError(await t.call("POST", "/functions", { body: "{not json" }), 400, "invalid_request");
    expect(malformed.message).toMatch(/not valid JSON/);
    const types = expectError(
      await t.call("POST", "/functions", { body: { name: "x", code: 5, timeout_seconds: "60" } }),
      400,
      "invalid_request",
    );
    expect(types.details.issues.map((i: { field: string }) => i.field).sort()).toEqual(["code", "timeout_seconds"]);
    expectError(await t.call("POST", "/functions", { body: [1, 2] }), 400, "invalid_request");
    expectError(await t.call("POST", "/functions", { body: "null" }), 400, "invalid_request");
    const unknown = expectError(
      await t.call("POST", "/functions", { body: { name: "x", code: NO_PARAMS_FN, timeout: 5 } }),
      400,
      "invalid_request",
    );
    expect(unknown.message).toContain("timeout");
    expectError(await t.call("POST", "/functions", { body: { name: "x", code: NO_PARAMS_FN, memory_mb: 64 } }), 400, "invalid_request");
    expectError(await t.call("POST", "/functions", { body: { name: "x", code: NO_PARAMS_FN, timeout_seconds: 901 } }), 400, "invalid_request");
    expectError(await t.call("PATCH", "/functions/echo", { body: { name: "renamed" } }), 400, "invalid_request");
    expect(await functionNames()).toEqual(["echo"]);
  });

  it("rejects bad names with invalid_name", async () => {
    for (const name of ["Upper", "1abc", "-x", "a_b", "a".repeat(64), "", "a/b", "ünï"]) {
      expectError(await t.call("POST", "/functions", { body: { name, code: NO_PARAMS_FN } }), 400, "invalid_name");
    }
    expect((await t.call("POST", "/functions", { body: { name: "a".repeat(63), code: NO_PARAMS_FN } })).status).toBe(201);
    await t.call("DELETE", `/functions/${"a".repeat(63)}`);
  });

  it("rejects bad code with invalid_code and a precise message", async () => {
    const syntax = expectError(
      await t.call("POST", "/functions", { body: { name: "bad", code: "export default async function (a {\n}" } }),
      400,
      "invalid_code",
    );
    expect(syntax.message).toMatch(/line 1:\d+/);
    const noDefault = expectError(
      await t.call("POST", "/functions", { body: { name: "bad", code: "export const x = 1;" } }),
      400,
      "invalid_code",
    );
    expect(noDefault.message).toMatch(/no default export/);
    const big = expectError(
      await t.call("POST", "/functions", { body: { name: "bad", code: `export default async () => 1;//${"x".repeat(262_144)}` } }),
      400,
      "invalid_code",
    );
    expect(big.message).toMatch(/262144/);
    expectError(await t.call("PATCH", "/functions/echo", { body: { code: "export default 42;" } }), 400, "invalid_code");
    expect(await functionNames()).toEqual(["echo"]);
    expect((await t.call("GET", "/functions/echo/info")).body.latest_version).toBe("1");
  });

  it("rejects bad schedules and time zones", async () => {
    const schedule = expectError(
      await t.call("POST", "/functions", { body: { name: "s", code: NO_PARAMS_FN, schedule: "61 * * * *" } }),
      400,
      "invalid_schedule",
    );
    expect(schedule.details.schedule).toBe("61 * * * *");
    expectError(await t.call("POST", "/functions", { body: { name: "s", code: NO_PARAMS_FN, schedule: "* * * *" } }), 400, "invalid_schedule");
    expectError(await t.call("POST", "/functions", { body: { name: "s", code: NO_PARAMS_FN, schedule: "@yearly-ish" } }), 400, "invalid_schedule");
    expectError(
      await t.call("POST", "/functions", { body: { name: "s", code: NO_PARAMS_FN, schedule: "@daily", schedule_timezone: "Mars/Base" } }),
      400,
      "invalid_timezone",
    );
    expectError(await t.call("PATCH", "/functions/echo", { body: { schedule_timezone: "Nowhere" } }), 400, "invalid_timezone");
    expect(await functionNames()).toEqual(["echo"]);
  });

  it("rejects settings above the plan's caps", async () => {
    const freeKey = await t.newAccount("capped", "free");
    const error = expectError(
      await t.call("POST", "/functions", { token: freeKey, body: { name: "x", code: NO_PARAMS_FN, timeout_seconds: 900 } }),
      400,
      "invalid_request",
    );
    expect(error.message).toMatch(/'free' plan's limit of 300/);
    expectError(
      await t.call("POST", "/functions", { token: freeKey, body: { name: "x", code: NO_PARAMS_FN, memory_mb: 4096 } }),
      400,
      "invalid_request",
    );
  });

  it("answers invalid_limit for a limit out of range", async () => {
    for (const limit of ["0", "101", "-1", "abc", "1.5", ""]) {
      expectError(await t.call("GET", `/functions?limit=${limit}`), 400, "invalid_limit");
    }
    expect((await t.call("GET", "/functions?limit=100")).status).toBe(200);
  });

  it("answers 413 payload_too_large for bodies over 6 MB", async () => {
    const code = `export default async () => 1;//${"x".repeat(6 * 1024 * 1024)}`;
    expectError(await t.call("POST", "/functions", { body: { name: "huge", code } }), 413, "payload_too_large");
    expect(await functionNames()).toEqual(["echo"]);
  });

  it("answers 409 function_exists for a taken name and leaves the original alone", async () => {
    const before = (await t.call("GET", "/functions/echo/info")).body;
    expectError(await t.call("POST", "/functions", { body: { name: "echo", code: NO_PARAMS_FN } }), 409, "function_exists");
    expect((await t.call("GET", "/functions/echo/info")).body).toEqual(before);
  });

  it("answers 404 for unknown functions, routes and keys, 405 for a wrong method", async () => {
    expectError(await t.call("GET", "/functions/nope/info"), 404, "function_not_found");
    expectError(await t.call("PATCH", "/functions/nope", { body: {} }), 404, "function_not_found");
    expectError(await t.call("GET", "/functions/nope/versions"), 404, "function_not_found");
    expectError(await t.call("POST", "/functions/fn_00000000000000000000000000/fork"), 404, "function_not_found");
    expectError(await t.call("POST", "/functions/echo/fork"), 404, "function_not_found");
    expectError(await t.call("GET", "/nowhere", { token: null }), 404, "route_not_found");
    expectError(await t.call("GET", "/functions/a/b/c/d"), 404, "route_not_found");
    expectError(await t.call("DELETE", "/api-keys/key_missing"), 404, "key_not_found");
    const wrong = await t.call("PUT", "/functions");
    expectError(wrong, 405, "method_not_allowed");
    expect(wrong.headers.get("allow")).toContain("POST");
  });
});

describe("request ids", () => {
  it("gives every response an X-Request-Id, unique per request", async () => {
    const a = await t.call("GET", "/health");
    const b = await t.call("GET", "/health");
    expect(a.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers.get("x-request-id")).not.toBe(b.headers.get("x-request-id"));
  });
});
