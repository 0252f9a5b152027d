/**
 * Issue #26: one account deploying without pause (each deploy a body of up to 256 KB, a reading,
 * records written and a record answered) took the service's request thread and store from every
 * other account's calls. Deploys are limited per account: a burst, then a steady rate; past it
 * 429 `rate_limited` with Retry-After, nothing read or written. Calls, settings-only updates and
 * other accounts are not limited by it.
 */
import { request } from "node:http";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";

const CODE = "export default async (n: number = 1) => ({ n });";

describe("deploys per account", () => {
  let t: TestService;
  beforeAll(async () => {
    // Three at once, then one a minute: the fourth within the test is refused.
    t = await startTestService({ config: { deployRate: { perSecond: 1 / 60, burst: 3 } } });
  }, 60_000);
  afterAll(() => t?.destroy());

  it("are refused past the burst with 429 rate_limited and Retry-After, nothing written, for every key of the account", async () => {
    const key = await t.newAccount("deployer");
    // A second key of the same account shares its deploys.
    const second = await t.newAccount("deployer");
    expect((await t.call("POST", "/functions", { token: key, body: { name: "one", code: CODE } })).status).toBe(201);
    expect((await t.call("PATCH", "/functions/one", { token: key, body: { code: CODE.replace("1", "2") } })).status).toBe(200);
    const shared = await t.call("POST", "/functions", { token: key, body: { name: "shared", code: CODE, shared: true } });
    expect(shared.status).toBe(201);

    const refused = await t.call("POST", "/functions", { token: second, body: { name: "two", code: CODE } });
    const error = expectError(refused, 429, "rate_limited");
    expect(error.message).toBe("Too many deploys: at most 1 a minute (bursts of 3) per account");
    expect(error.details).toEqual({ per_second: 1 / 60, burst: 3 });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expectError(await t.call("GET", "/functions/two", { token: key }), 404, "function_not_found");
    // An update with code and a fork are deploys too; the function keeps its version.
    expectError(await t.call("PATCH", "/functions/one", { token: key, body: { code: CODE.replace("1", "3") } }), 429, "rate_limited");
    expect((await t.call("GET", "/functions/one/info", { token: key })).body).toMatchObject({ latest_version: "2" });
    expectError(await t.call("POST", `/functions/${String(shared.body.function_id)}/fork`, { token: key }), 429, "rate_limited");

    // Calls and settings-only updates are not deploys.
    expect((await t.call("POST", "/functions/one", { token: key, body: { n: 5 } })).status).toBe(200);
    expect((await t.call("PATCH", "/functions/one", { token: key, body: { description: "still" } })).status).toBe(200);
  }, 60_000);

  it("are refused on the request's head, before its body is read: a deploy whose body never comes is answered 429 at once", async () => {
    const key = await t.newAccount("head-deployer");
    for (let i = 0; i < 3; i++) expect((await t.call("POST", "/functions", { token: key, body: { name: `h${i}`, code: CODE } })).status).toBe(201);
    // 200 KB announced, 10 bytes sent, the rest never: only an answer on the head comes before the 10 s stall cut.
    const answer = await new Promise<{ status: number; body: string; ms: number }>((resolve, reject) => {
      const started = Date.now();
      const sent = request(`${t.url}/functions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": String(200 * 1024) },
      });
      sent.on("response", (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body, ms: Date.now() - started }));
      });
      sent.on("error", reject);
      sent.write('{"name": "');
    });
    expect(answer.status).toBe(429);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "rate_limited" } });
    expect(answer.ms).toBeLessThan(5_000);
    // The same holds for a fork.
    const shared = await t.newAccount("head-sharer");
    const original = await t.call("POST", "/functions", { token: shared, body: { name: "orig", code: CODE, shared: true } });
    const fork = await new Promise<number>((resolve, reject) => {
      const sent = request(`${t.url}/functions/${String(original.body.function_id)}/fork`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": "1000" },
      });
      sent.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      sent.on("error", reject);
      sent.write("{");
    });
    expect(fork).toBe(429);
    // A settings-only update is no deploy: its body is read and it goes through.
    expect((await t.call("PATCH", "/functions/h0", { token: key, body: { description: "still" } })).status).toBe(200);
  }, 60_000);

  it("are counted per account: another account deploys while one is refused", async () => {
    const busy = await t.newAccount("busy-deployer");
    const calm = await t.newAccount("calm-deployer");
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await t.call("POST", "/functions", { token: busy, body: { name: `f${i}`, code: CODE } })).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
    expect((await t.call("POST", "/functions", { token: calm, body: { name: "f0", code: CODE } })).status).toBe(201);
  }, 60_000);
});
