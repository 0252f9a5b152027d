/**
 * Requests at and just over the API's size limits (parameters, bodies, code), against a real
 * local service: the one at the limit is taken whole, the one over it refused with its code;
 * afterwards the table holds exactly what the successful requests made.
 */
import { checkAnswer, fromFetch } from "../helpers/fuzzChecks";
import { CODE_AT_LIMIT, CODE_OVER_LIMIT } from "../helpers/fuzzFunctionInputs";
import { type Expected, expectStoreHolds } from "../helpers/fuzzStore";
import { startTestService, type TestService } from "../helpers/localService";

let t: TestService;
const expected: Expected = { accounts: new Set(["local"]), keys: 1, everCreated: new Set(), functions: new Set() };

beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.destroy());

describe("parameters at the limit", () => {
  it("records a run whole with 240 KB of parameters (kept in parts), a result just under the inline limit and full logs (it stayed queued after a 200 with 250 KB of parameters)", async () => {
    const fn = await t.deploy("bulky", `export default async function run(a: string) {
  console.log("l".repeat(70000));
  return "r".repeat(299990);
}
`);
    expected.everCreated.add(fn.function_id);
    expected.functions.add("local/bulky");
    const limit = 245_760;
    const atLimit = JSON.stringify({ a: "p".repeat(limit - 8) });
    expect(Buffer.byteLength(atLimit)).toBe(limit);
    const answer = await t.call("POST", "/functions/bulky", { body: atLimit });
    expect(answer.status).toBe(200);
    const run = await t.call("GET", `/runs/${answer.headers.get("x-run-id")}`);
    expect([run.body.status, run.body.params.a.length, run.body.result.length]).toEqual(["succeeded", limit - 8, 299_990]);
    const over = await t.call("POST", "/functions/bulky", { body: JSON.stringify({ a: "p".repeat(limit - 7) }) });
    expect(checkAnswer(`parameters of ${limit + 1} bytes`, fromFetch(over), ["invalid_parameters"])).toBe("invalid_parameters");
    expect(over.body.error.details).toEqual({ parameters: [], bytes: limit + 1, limit });
  });
});

describe("bodies at and over the limits", () => {
  it("takes a body of exactly 6 MB and refuses one byte more with 413; code of 256 KB but not one byte more", async () => {
    const bodyOf = (bytes: number) => {
      const head = '{"name":"huge","code":"export default async () => 1;//';
      return `${head}${"x".repeat(bytes - head.length - 2)}"}`;
    };
    checkAnswer("6 MB body", fromFetch(await t.call("POST", "/functions", { body: bodyOf(6_291_456) })), ["invalid_code"]);
    checkAnswer("6 MB + 1 body", fromFetch(await t.call("POST", "/functions", { body: bodyOf(6_291_457) })), ["payload_too_large"]);
    const over = await t.call("POST", "/functions", { body: { name: "at-limit", code: CODE_OVER_LIMIT } });
    expect(checkAnswer("code of 262,145 bytes", fromFetch(over), ["invalid_code"])).toBe("invalid_code");
    expect(over.body.error.details).toEqual({ bytes: 262_145, limit: 262_144 });
    const at = await t.call("POST", "/functions", { body: { name: "at-limit", code: CODE_AT_LIMIT } });
    expect(at.status).toBe(201);
    expected.everCreated.add(at.body.function_id);
    expected.functions.add("local/at-limit");
    expect((await t.call("GET", "/functions/at-limit/versions/1")).body.code).toBe(CODE_AT_LIMIT);
    const invoke = await t.call("POST", "/functions/target", { body: `{"text":"${"x".repeat(6_291_456)}"}` });
    checkAnswer("invocation body over 6 MB", fromFetch(invoke), ["payload_too_large"]);
  });
});

describe("the store afterwards", () => {
  it("holds exactly what the successful requests made, each function whole", async () => {
    await expectStoreHolds(t, expected, { local: t.adminKey });
  });
});
