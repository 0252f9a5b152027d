import { spawn } from "node:child_process";
import { processTreeMb, samplePeakMemory } from "../../lambdas/runtime/local/processTree";

/** A child that fills `mb` of memory, says so, and waits to be killed. */
function memoryHog(mb: number) {
  const script = `const b = Buffer.alloc(${mb} * 1024 * 1024, 1); process.stdout.write("full\\n"); setInterval(() => b[0]++, 1000);`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const full = new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return { child, full, kill: async () => void (child.kill("SIGKILL"), await exited) };
}

describe("the memory of a process tree (the Lambda runner's peak)", () => {
  it("counts a process's descendants, and the peak outlives them", async () => {
    const own = await processTreeMb(process.pid);
    expect(own).toBeGreaterThan(10);
    const sampler = samplePeakMemory(process.pid, 20);
    const hog = memoryHog(150);
    try {
      await hog.full;
      expect(await processTreeMb(process.pid)).toBeGreaterThan(own + 120);
      await new Promise((resolve) => setTimeout(resolve, 100)); // a few samples while it is there
    } finally {
      await hog.kill();
    }
    expect(await processTreeMb(process.pid)).toBeLessThan(own + 100);
    expect(await sampler.stop()).toBeGreaterThan(own + 120);
  });

  it("is 0 for a process that does not exist", async () => {
    expect(await processTreeMb(2 ** 22 + 1)).toBe(0);
  });
});
