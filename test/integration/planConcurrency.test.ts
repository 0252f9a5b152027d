/**
 * The plan's `concurrency` measured from inside the runs (issue #17): each run returns the
 * time it entered and left the function, and at no instant are more of them inside than the
 * plan allows, on a function's first round (cold: its workers start during the round) as on
 * later ones.
 */
import { startTestService, type TestService } from "../helpers/localService";
import { peakOverlap } from "../helpers/peakOverlap";

let t: TestService;
beforeAll(async () => {
  // Room for more workers per function than the plan allows runs: only the plan limits them.
  t = await startTestService({ config: { workers: { perFunction: 4, total: 8, idleSeconds: 60 } } });
});
afterAll(() => t.destroy());

const STAMPED = `export default async (ms: number) => {
  const entered = Date.now();
  await new Promise((r) => setTimeout(r, ms));
  return { entered, left: Date.now() };
}`;

interface Span {
  entered: number;
  left: number;
}

/** The most runs inside the function at one instant. */
const peakInside = (spans: Span[]) => peakOverlap(spans.map(({ entered, left }) => ({ from: entered, to: left })));

/** `calls` parallel invocations of `name`; all must answer 200 (the 25 s sync window holds them all). */
async function round(key: string, name: string, calls: number, ms: number): Promise<Span[]> {
  const answers = await Promise.all(Array.from({ length: calls }, () => t.call("POST", `/functions/${name}`, { token: key, body: { ms } })));
  expect(answers.map((answer) => answer.status)).toEqual(Array(calls).fill(200));
  return answers.map((answer) => answer.body as Span);
}

describe("the plan's concurrency, measured inside the runs", () => {
  it("never has more than the free plan's two runs inside the function, in a new function's first round or later", async () => {
    const key = await t.newAccount("two-at-a-time", "free");
    for (const name of ["cold-a", "cold-b"]) {
      await t.deploy(name, STAMPED, {}, key);
      const first = await round(key, name, 20, 300);
      expect(peakInside(first)).toBe(2);
      const warm = await round(key, name, 6, 300);
      expect(peakInside(warm)).toBe(2);
    }
    // Every invocation was admitted once (none refunded, none counted twice).
    const usage = (await t.call("GET", "/usage", { token: key })).body;
    expect(usage.remaining.invocations).toBe(1000 - 2 * (20 + 6));
  }, 60_000);
});
