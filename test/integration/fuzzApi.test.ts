/**
 * Bad input through the API, property-based (fast-check): bodies, names, code, settings,
 * parameters, paths, query strings and headers, against a real local service. Every answer
 * is the one JSON error shape with the right status and a stable code (or a success), never
 * a 5xx; afterwards the table holds exactly what the successful requests made.
 */
import fc from "fast-check";
import { checkAnswer, fromFetch } from "../helpers/fuzzChecks";
import { type Expected, scanTable, tableProblems } from "../helpers/fuzzStore";
import { NO_PARAMS_FN } from "../helpers/code";
import { startTestService, type TestService } from "../helpers/localService";

/** Takes anything, starts no browser, returns little. */
const ANY_PARAMS_FN = `export default async function run(a: unknown, b: number = 1) {
  return { a: typeof a, b };
}
`;

let t: TestService;
const expected: Expected = { accounts: new Set(["local"]), keys: 1, everCreated: new Set(), functions: new Set() };

beforeAll(async () => {
  t = await startTestService();
  const fn = await t.deploy("plain", NO_PARAMS_FN);
  expected.everCreated.add(fn.function_id);
  expected.functions.add("local/plain");
});
afterAll(() => t.destroy());

describe("regressions", () => {
  it("answers 404 for refs and account names too long to be keys (they answered 500)", async () => {
    for (const ref of ["a".repeat(2000), "é".repeat(1500), `${"x".repeat(1100)}-y`]) {
      for (const [method, path] of [
        ["GET", `/functions/${ref}/info`],
        ["GET", `/functions/${ref}/versions`],
        ["GET", `/functions/${ref}/versions/1`],
        ["GET", `/functions/${ref}/logs`],
        ["GET", `/functions/${ref}/metrics`],
        ["PATCH", `/functions/${ref}`],
        ["DELETE", `/functions/${ref}`],
        ["POST", `/functions/${ref}`],
        ["GET", `/functions/${ref}`],
      ] as const) {
        const answer = await t.call(method, encodeURI(path), { body: method === "PATCH" ? {} : undefined });
        checkAnswer(`${method} ${path.slice(0, 40)}…`, fromFetch(answer), ["function_not_found"]);
      }
      const plan = await t.call("PUT", `/accounts/${encodeURIComponent(ref)}/plan`, { body: { plan: "free" } });
      checkAnswer("PUT /accounts/<long>/plan", fromFetch(plan), ["account_not_found"]);
    }
  });

  it("refuses parameters and schedule_params the store cannot keep exactly with 400 (they answered 500)", async () => {
    const fn = await t.deploy("anyp", ANY_PARAMS_FN);
    expected.everCreated.add(fn.function_id);
    expected.functions.add("local/anyp");
    const deepObject = (levels: number) => `${'{"x":'.repeat(levels)}1${"}".repeat(levels)}`;
    const bad = [
      '{"a": 1e300}',
      '{"a": 1, "b": 5e-324}',
      '{"a": 123456789012345678901234567890}',
      '{"a": {"__proto__": {"polluted": true}}}',
      `{"a": ${deepObject(40)}}`,
      `{"a": ${"[".repeat(40)}${"]".repeat(40)}}`,
      `{"a": "${"x".repeat(300_000)}"}`,
    ];
    for (const body of bad) {
      const answer = await t.call("POST", "/functions/anyp", { body });
      checkAnswer(`invoke ${body.slice(0, 40)}`, fromFetch(answer), ["invalid_parameters"]);
      const patch = await t.call("PATCH", "/functions/anyp", { body: `{"schedule_params": ${body}}` });
      checkAnswer(`schedule_params ${body.slice(0, 40)}`, fromFetch(patch), ["invalid_request"]);
    }
    const query = await t.call("GET", `/functions/anyp?a=${encodeURIComponent(deepObject(40))}&b=1e300`);
    expect(checkAnswer("GET invoke", fromFetch(query), ["invalid_parameters"])).toBe("invalid_parameters");
    expect(query.body.error.details.parameters.map((p: { name: string; problem: string }) => `${p.name} ${p.problem}`)).toEqual([
      "a unsupported_value",
      "b unsupported_value",
    ]);
    // What the store keeps exactly still passes: safe integers, tiny but representable numbers, 28 levels of nesting.
    const fine = await t.call("POST", "/functions/anyp", { body: `{"a": {"": [9007199254740991, 1e-130, ${deepObject(26)}]}, "b": -0.5}` });
    expect(fine.status).toBe(200);
    const run = await t.call("GET", `/runs/${fine.headers.get("x-run-id")}`);
    expect(run.body.params).toEqual({ a: { "": [9007199254740991, 1e-130, JSON.parse(deepObject(26))] }, b: -0.5 });
  });
});

describe("the store afterwards", () => {
  it("holds exactly what the successful requests made, each function whole", async () => {
    const problems = tableProblems(await scanTable(t.service.dynamoEndpoint), expected);
    expect(problems).toEqual([]);
    const listed = (await t.call("GET", "/functions?limit=100")).body.items.map((item: { name: string }) => `local/${item.name}`);
    expect(listed.sort()).toEqual([...expected.functions].filter((n) => n.startsWith("local/")).sort());
  });
});

void fc;
