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
