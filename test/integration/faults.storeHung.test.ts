import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";
import { processesWith } from "../helpers/processes";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let t: TestService;
let stopped: number[] = [];
beforeAll(async () => {
  t = await startTestService({ config: { storeTimeoutMs: 300 } });
});
afterAll(async () => {
  for (const pid of stopped) process.kill(pid, "SIGCONT");
  await t.destroy();
});

describe("the store hangs (stopped, not dead)", () => {
  it("answers 503 service_unavailable within its request timeout, then recovers when it answers again", async () => {
    await t.deploy("quick", "export default async () => ({ ok: true });");
    expect((await t.call("POST", "/functions/quick")).status).toBe(200);
    stopped = processesWith("dynaliteChild.cjs").filter((pid) => processesWith(t.dataDir).includes(pid));
    expect(stopped).toHaveLength(1);
    for (const pid of stopped) process.kill(pid, "SIGSTOP");

    const started = Date.now();
    const answer = await t.call("GET", "/functions");
    expectError(answer, 503, "service_unavailable");
    expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(8_000); // three attempts of 300 ms and their backoff, not forever

    for (const pid of stopped) process.kill(pid, "SIGCONT");
    stopped = [];
    let recovered = await t.call("GET", "/functions");
    for (let i = 0; i < 100 && recovered.status !== 200; i++) {
      await sleep(50);
      recovered = await t.call("GET", "/functions");
    }
    expect(recovered.body.items.map((f: { name: string }) => f.name)).toEqual(["quick"]);
    expect((await t.call("POST", "/functions/quick")).body).toEqual({ ok: true });
  });
});
