import { spawn } from "node:child_process";
import { processTreeMb, TreeMeter, watchMemory } from "../../lambdas/runtime/local/processTree";

/**
 * A small Node process (the root) whose child fills `mb` of memory, then prints its pid and
 * waits. Measured on its own root, not this test's process, whose memory moves with jest's.
 */
function parentOfHog(mb: number) {
  const hog = `const b = Buffer.alloc(${mb} * 1024 * 1024, 1); process.stdout.write(String(process.pid) + "\\n"); setInterval(() => b[0]++, 1000);`;
  const parent = `require("node:child_process").spawn(process.execPath, ["-e", ${JSON.stringify(hog)}], { stdio: ["ignore", "inherit", "inherit"] }); setInterval(() => {}, 1000);`;
  const root = spawn(process.execPath, ["-e", parent], { stdio: ["ignore", "pipe", "inherit"] });
  const hogPid = new Promise<number>((resolve) => root.stdout.once("data", (line) => resolve(Number(String(line).trim()))));
  const exited = new Promise((resolve) => root.once("exit", resolve));
  const stop = async () => {
    // The hog first: killing its parent alone would leave it running.
    const pid = await Promise.race([hogPid, new Promise<number>((resolve) => setTimeout(() => resolve(0), 1000))]);
    if (pid > 0) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // killed already
      }
    }
    root.kill("SIGKILL");
    await exited;
  };
  return { root, hogPid, stop };
}

describe("the memory of a process tree (the Lambda runner's peak)", () => {
  it("counts a process's descendants, and the sampled peak outlives them", async () => {
    const tree = parentOfHog(150);
    const pid = tree.root.pid ?? 0;
    const sampler = watchMemory(() => processTreeMb(pid), 20);
    try {
      const hogPid = await tree.hogPid;
      const withHog = await processTreeMb(pid);
      expect(withHog).toBeGreaterThan(150);
      await new Promise((resolve) => setTimeout(resolve, 100)); // a few samples while the hog is there
      process.kill(hogPid, "SIGKILL");
      await new Promise((resolve) => setTimeout(resolve, 200)); // reaped by its parent
      expect(await processTreeMb(pid)).toBeLessThan(withHog - 120);
      sampler.stop();
      expect(sampler.peak).toBeGreaterThan(150);
    } finally {
      sampler.stop(); // also when an expectation failed: its timer must not outlive the test
      await tree.stop();
    }
  });

  it("is 0 for a process that does not exist", async () => {
    expect(await processTreeMb(2 ** 22 + 1)).toBe(0);
  });
});

describe("TreeMeter: exact reads spread over samples", () => {
  it("estimates between exact reads from RSS, and sees memory a process gains at once", async () => {
    const tree = parentOfHog(100);
    const pid = tree.root.pid ?? 0;
    let now = 0;
    const meter = new TreeMeter(pid, 1000, () => now);
    try {
      const hogPid = await tree.hogPid;
      const exact = await meter.sample(true);
      expect(exact).toBeGreaterThan(100);
      // Within the second: an estimate, close to the exact read.
      now = 500;
      expect(Math.abs((await meter.sample()) - exact)).toBeLessThan(10);
      // The hog ends: its memory leaves the estimate at once (its process is gone from the tree).
      process.kill(hogPid, "SIGKILL");
      await new Promise((resolve) => setTimeout(resolve, 200));
      now = 700;
      const after = await meter.sample();
      expect(after).toBeLessThan(exact - 90);
      expect(Math.abs(after - (await processTreeMb(pid)))).toBeLessThan(10);
    } finally {
      await tree.stop();
    }
  });

  it("counts what a process allocates between exact reads", async () => {
    // A process that allocates 120 MB one second after it starts.
    const script = `setTimeout(() => { globalThis.b = Buffer.alloc(120 * 1024 * 1024, 1); process.stdout.write("grown\\n"); }, 1000); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    const grown = new Promise((resolve) => child.stdout.once("data", resolve));
    let now = 0;
    const meter = new TreeMeter(child.pid ?? 0, 1000, () => now);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const before = await meter.sample(true);
      await grown;
      now = 100; // no exact read due: an estimate
      expect(await meter.sample()).toBeGreaterThan(before + 110);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
