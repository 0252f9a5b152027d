import { setTimeout as sleep } from "node:timers/promises";
import { ECHO_FN } from "../helpers/code";
import {
  EMPTY_TUPLES_AT_LIMIT,
  STRINGS_AT_LIMIT,
  TOO_DEEP,
  emptyTupleParameters,
  nestedRecords,
  slowToParse,
} from "../helpers/hostileCode";
import { type ApiResponse, expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";

// Issue #26, items 1 and 9: one account's deploy must not stall the service or its neighbours.
// The service runs in this process (startTestService): while its thread is busy, nothing here
// runs either, so "the other request answered first" is what the tests measure, never a time.

let t: TestService;
let hostile: string;
let other: string;
let deploys = 0;

beforeAll(async () => {
  t = await startTestService();
  hostile = await t.newAccount("hostile");
  other = await t.newAccount("other");
  const third = await t.newAccount("third");
  // Two accounts deploy at once: both analysis workers are warm before the attacks.
  await Promise.all([t.deploy("echo", ECHO_FN, {}, other), t.deploy("echo", ECHO_FN, {}, third), t.deploy("target", ECHO_FN, {}, hostile)]);
  expect((await invokeEcho()).status).toBe(200); // its worker process is warm too
}, 120_000);
afterAll(() => t?.destroy(), 60_000);

function invokeEcho(): Promise<ApiResponse> {
  return t.call("POST", "/functions/echo", { token: other, body: { message: "still here" } });
}

/** Settles with `name` pushed onto `order`, so that the tests can say which request answered first. */
function noting<T>(order: string[], name: string, request: Promise<T>): Promise<T> {
  return request.then((value) => {
    order.push(name);
    return value;
  });
}

/**
 * The hostile account deploys `code`; `othersAfterMs` later (0: at once) the service is asked
 * for /health, the other account's invocation and (with `otherDeploy`) another account's deploy.
 * The answers, and the order in which they came.
 */
async function whileDeploying(code: string, othersAfterMs = 0, otherDeploy = false) {
  const order: string[] = [];
  const deploy = noting(order, "hostile", t.call("POST", "/functions", { token: hostile, body: { name: `attack-${++deploys}`, code } }));
  if (othersAfterMs > 0) await sleep(othersAfterMs);
  const [health, invoke, deployed] = await Promise.all([
    noting(order, "health", t.call("GET", "/health", { token: null })),
    noting(order, "invoke", invokeEcho()),
    otherDeploy ? noting(order, "deploy", t.call("POST", "/functions", { token: other, body: { name: `fine-${deploys}`, code: ECHO_FN } })) : undefined,
  ]);
  const answer = await deploy;
  expect(health.status).toBe(200);
  expect(invoke.status).toBe(200);
  expect(invoke.body).toEqual({ echo: ["still here"] });
  if (deployed) expect(deployed.status).toBe(201);
  return { answer, order };
}

describe("a deploy's code is read off the service's thread, within a time budget", () => {
  it("stops a module the parser needs minutes for at the budget (400 invalid_code), while /health, another account's invocation and deploy answer", async () => {
    // Half a second in, the deploy is being read (its reading takes the whole 5 s budget).
    const { answer, order } = await whileDeploying(slowToParse(), 500, true);
    const error = expectError(answer, 400, "invalid_code");
    expect(error.message).toMatch(/too complex to read within the deploy budget \(5000 ms of analysis\)/);
    expect(error.details).toEqual({ budget: "time", limit_ms: 5000 });
    expect(order.indexOf("health")).toBeLessThan(order.indexOf("hostile"));
    expect(order.indexOf("invoke")).toBeLessThan(order.indexOf("hostile"));
    expect(order.indexOf("deploy")).toBeLessThan(order.indexOf("hostile"));
    expect(order.at(-1)).toBe("hostile");
    // The worker it held was ended and replaced: the account's next deploy is read as usual.
    expect((await t.call("POST", "/functions", { token: hostile, body: { name: "after-budget", code: ECHO_FN } })).status).toBe(201);
  }, 180_000);
});

describe("parameter schemas (issue #26 item 1)", () => {
  it("deploys 3,000 parameters typed [] with the largest schemas trimmed, and the other account is answered first", async () => {
    const { answer, order } = await whileDeploying(emptyTupleParameters(3000));
    expect(answer.status).toBe(201);
    expect(answer.body.variables).toHaveLength(3000);
    const schema = (await t.call("GET", `/functions/${answer.body.name}/info`, { token: hostile })).body;
    expect(schema.variables[2999]).toMatchObject({ name: "p2999", type: "[]", required: true });
    expect(order.indexOf("health")).toBeLessThan(order.indexOf("hostile"));
    expect(order.indexOf("invoke")).toBeLessThan(order.indexOf("hostile"));
  }, 120_000);

  it.each([
    ["17,000 parameters typed string", STRINGS_AT_LIMIT],
    ["25,000 parameters typed []", EMPTY_TUPLES_AT_LIMIT],
  ])("refuses 256 KB of %s whose schema cannot fit 64 KB (400 invalid_code, not 500)", async (_, code) => {
    const { answer, order } = await whileDeploying(code());
    const error = expectError(answer, 400, "invalid_code");
    expect(error.message).toMatch(/parameters do not fit a 65536-byte schema even when each accepts any value/);
    expect(order.indexOf("health")).toBeLessThan(order.indexOf("hostile"));
  }, 180_000);

  it("counts a Record's value once per key: four levels of 100 keys (10^8 leaves) become {} with a note, not 2 GB of JSON", async () => {
    const { answer } = await whileDeploying(nestedRecords());
    expect(answer.status).toBe(201);
    expect(answer.body.variables).toEqual([
      { name: "x", type: "D", required: true, schema_note: "x: the parameter types are too large to describe; any value is accepted" },
    ]);
    const openapi = await t.call("GET", `/functions/${answer.body.name}/openapi.json`, { token: hostile });
    expect(openapi.status).toBe(200);
    expect(openapi.text.length).toBeLessThan(64 * 1024);
  }, 120_000);
});

describe("code nested too deeply to read (issue #26 item 9)", () => {
  it.each(Object.entries(TOO_DEEP))("answers 400 invalid_code for %s, on create and on update, not 500", async (_, code) => {
    const { answer } = await whileDeploying(code());
    const created = expectError(answer, 400, "invalid_code");
    expect(created.message).toMatch(/nested too deeply to read/);
    expect(created.details).toEqual({ reason: "nesting" });
    const updated = expectError(await t.call("PATCH", "/functions/target", { token: hostile, body: { code: code() } }), 400, "invalid_code");
    expect(updated.details).toEqual({ reason: "nesting" });
    expect((await t.call("GET", "/functions/target/info", { token: hostile })).body.latest_version).toBe("1");
  }, 120_000);
});
