/**
 * Concurrent changes, property-based: batches of creates, updates, deletes and forks racing on
 * a few names. Every answer is a success or a 4xx in the error shape; afterwards each name
 * exists exactly when its 201 creates outnumber its 204 deletes, and the table holds every
 * function whole and no version or code part of a function that is gone.
 */
import fc from "fast-check";
import { checkAnswer, fetchAnswer, fuzzSettings, fuzzTimeout, writeTallies } from "../helpers/fuzzChecks";
import { BAD_CODES, CODES } from "../helpers/fuzzFunctionInputs";
import { objectText } from "../helpers/fuzzInputs";
import { type Expected, scanTable, tableProblems } from "../helpers/fuzzStore";
import { startTestService, type TestService } from "../helpers/localService";

let t: TestService;
const call = (method: string, path: string, options: { body?: string } = {}) => fetchAnswer(t.url, method, path, { ...options, token: t.adminKey });
const expected: Expected = { accounts: new Set(["local"]), keys: 1, everCreated: new Set(), functions: new Set() };

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  writeTallies();
  await t.destroy();
});

describe("concurrent changes", () => {
  it("create, update, delete and fork racing on a few names leave each name created once per delete, nothing half-written", async () => {
    const names = ["race-a", "race-b", "race-c"];
    const op = fc.oneof(
      fc.record({ kind: fc.constant("create" as const), name: fc.constantFrom(...names), code: fc.constantFrom(...CODES) }),
      fc.record({ kind: fc.constant("update" as const), name: fc.constantFrom(...names), body: objectText({ code: fc.constantFrom(...CODES, ...BAD_CODES), description: fc.string({ maxLength: 10 }), timeout_seconds: fc.integer({ min: 1, max: 300 }) }) }),
      fc.record({ kind: fc.constant("delete" as const), name: fc.constantFrom(...names) }),
      fc.record({ kind: fc.constant("fork" as const), name: fc.constantFrom(...names) }),
    );
    const balance = new Map<string, number>(names.map((n) => [n, 0]));
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 2, maxLength: 8 }), async (ops) => {
        const ids = new Map<string, string>();
        for (const name of names) {
          const info = await call("GET", `/functions/${name}/info`);
          if (info.status === 200) ids.set(name, info.body.function_id);
        }
        const answers = await Promise.all(
          ops.map(async (o) => {
            switch (o.kind) {
              case "create":
                return call("POST", "/functions", { body: JSON.stringify({ name: o.name, code: o.code }) });
              case "update":
                return call("PATCH", `/functions/${o.name}`, { body: o.body });
              case "delete":
                return call("DELETE", `/functions/${o.name}`);
              case "fork":
                return call("POST", `/functions/${ids.get(o.name) ?? "fn_00000000000000000000000000"}/fork`, { body: "{}" });
            }
          }),
        );
        // Account for every success first, then check the answers, so one bad answer leaves the books right.
        ops.forEach((o, i) => {
          const answer = answers[i]!;
          if (answer.status === 201) {
            expected.everCreated.add(answer.body.function_id);
            expected.functions.add(`local/${answer.body.name}`);
            // A fork takes the source's name when it is free (the source was deleted meanwhile).
            const made: string = answer.body.name;
            if (balance.has(made)) balance.set(made, (balance.get(made) ?? 0) + 1);
          }
          if (answer.status === 204) balance.set(o.name, (balance.get(o.name) ?? 0) - 1);
        });
        ops.forEach((o, i) => {
          const codes = ["function_exists", "function_not_found", "invalid_code", "invalid_request", "update_conflict"];
          checkAnswer(`${o.kind} ${o.name}`, answers[i]!, codes, [200, 201, 204], "concurrent changes");
        });
        for (const name of names) {
          const exists = (await call("GET", `/functions/${name}/info`)).status === 200;
          if (balance.get(name) !== (exists ? 1 : 0)) {
            const seen = ops.map((o, i) => `${o.kind} ${o.name} → ${answers[i]!.status} ${answers[i]!.text.slice(0, 120)}`);
            throw new Error(`${name}: ${balance.get(name)} creates not undone by a delete, but it ${exists ? "exists" : "does not exist"}:\n${seen.join("\n")}`);
          }
          if (exists) expected.functions.add(`local/${name}`);
          else expected.functions.delete(`local/${name}`);
        }
      }),
      // Each case starts from the store the previous ones left: shrinking would replay on another state.
      { ...fuzzSettings(30), endOnFailure: true },
    );
    expect(tableProblems(await scanTable(t.service), expected)).toEqual([]);
  }, fuzzTimeout(30, 500));
});
