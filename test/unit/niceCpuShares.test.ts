/**
 * The CPU-share fallback where cgroups cannot be made: a new sandbox's first processes get
 * the nice level of its account's load, so many busy sandboxes of one account weigh about as
 * much as another account's one. Asserted on the kernel's nice levels, never on timing.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { getPriority } from "node:os";
import { SANDBOX_NICE, niceForLoad } from "../../lambdas/runtime/local/cpuShares/cpuShares";
import { NiceCpuShares } from "../../lambdas/runtime/local/cpuShares/niceCpuShares";

describe("nice levels by an account's load", () => {
  const children: ChildProcess[] = [];
  const sleeper = () => {
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    children.push(child);
    return child.pid as number;
  };
  afterAll(() => {
    for (const child of children) child.kill("SIGKILL");
  });

  it("makes n sandboxes of one account weigh together about as much as one at level 0", () => {
    expect(niceForLoad(1)).toBe(0);
    // CFS weighs each level 1.25x less than the one below: n sandboxes at level L weigh n / 1.25^L.
    for (const n of [2, 3, 4, 8, 16]) {
      const together = n / 1.25 ** niceForLoad(n);
      expect(together).toBeGreaterThan(0.85);
      expect(together).toBeLessThan(1.2);
    }
    expect(niceForLoad(10_000)).toBe(19);
  });

  it("sets a busy account's later sandboxes lower than a quiet account's one, and forgets a released one", async () => {
    const shares = new NiceCpuShares();
    const own = getPriority(process.pid);
    const hog = [sleeper(), sleeper(), sleeper(), sleeper()];
    const releases = [];
    for (const pid of hog) releases.push(await shares.place("hog", [pid]));
    const quiet = sleeper();
    await shares.place("quiet", [quiet]);
    // Every sandbox at SANDBOX_NICE at least: the service's own threads come first.
    expect(hog.map((pid) => getPriority(pid))).toEqual([1, 2, 3, 4].map((n) => Math.min(19, own + SANDBOX_NICE + niceForLoad(n))));
    expect(getPriority(quiet)).toBe(Math.min(19, own + SANDBOX_NICE));
    // Three of the hog's sandboxes gone: its next one starts at the level of two.
    for (const release of releases.slice(1)) await release();
    const next = sleeper();
    await shares.place("hog", [next]);
    expect(getPriority(next)).toBe(Math.min(19, own + SANDBOX_NICE + niceForLoad(2)));
  });
});
