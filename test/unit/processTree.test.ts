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
  it("estimates between exact reads, keeps what a process that ended had until the next exact read, then drops it", async () => {
    const tree = parentOfHog(100);
    const pid = tree.root.pid ?? 0;
    let now = 0;
    const meter = new TreeMeter(pid, 1000, () => now);
    try {
      const hogPid = await tree.hogPid;
      const exact = await meter.sample(true);
      expect(exact).toBeGreaterThan(100);
      // Within the second: an estimate, close to the exact read (the processes are idle).
      now = 500;
      expect(Math.abs((await meter.sample()) - exact)).toBeLessThan(10);
      // The hog ends: an estimate never counts less for it (its pages could have gone to the others).
      process.kill(hogPid, "SIGKILL");
      await new Promise((resolve) => setTimeout(resolve, 200));
      now = 700;
      expect(await meter.sample()).toBeGreaterThan(exact - 10);
      // The next exact read, a second after the last, counts what is left.
      now = 1000;
      const after = await meter.sample();
      expect(after).toBeLessThan(exact - 90);
      expect(Math.abs(after - (await processTreeMb(pid)))).toBeLessThan(10);
    } finally {
      await tree.stop();
    }
  });

  it("counts pages a forked child stops sharing (copy-on-write) between exact reads, though its resident size does not change", async () => {
    // Perl (in every Debian: perl-base is essential) forks without exec: each child shares the
    // parent's 60 MB, is seen while it does, then writes to every page of it (a private copy,
    // same RSS) and ends 0.5 s later. Only the child's page faults show the copies.
    const script = `my $b = "a" x (60 * 1024 * 1024); sleep 1;
      for (1 .. 4) { if (!fork()) { select(undef, undef, undef, 0.4); for (my $i = 0; $i < length($b); $i += 4096) { substr($b, $i, 1) = "b"; } select(undef, undef, undef, 0.5); exit 0; } }
      1 while wait() != -1; sleep 5;`;
    const parent = spawn("perl", ["-e", script], { stdio: "ignore" });
    const meter = new TreeMeter(parent.pid ?? 0, 60_000, () => 1); // no periodic exact read in the test's time
    let highest = 0;
    try {
      await new Promise((resolve) => setTimeout(resolve, 700));
      await meter.sample(true);
      for (let i = 0; i < 25; i++) {
        highest = Math.max(highest, await meter.sample());
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // The parent's 60 MB and four private copies of it: about 300 MB at the peak.
      expect(highest).toBeGreaterThan(270);
    } finally {
      parent.kill("SIGKILL");
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

describe("what a meter counts (a sandbox's standby worker, its cgroup's members)", () => {
  it("leaves out the process it is told to exclude, and counts it again once told none", async () => {
    const tree = parentOfHog(150);
    try {
      const hog = await tree.hogPid;
      const meter = new TreeMeter(tree.root.pid ?? 0);
      const all = await meter.sample(true);
      // Outside any PID namespace of its own, a process's own pid is the one its parent knows.
      meter.exclude(hog);
      const without = await meter.sample(true);
      expect(without).toBeLessThan(all - 140);
      meter.exclude(0);
      expect(await meter.sample(true)).toBeGreaterThan(without + 140);
    } finally {
      await tree.stop();
    }
  });

  it("counts the processes its members list names (a cgroup's), whoever their parent is", async () => {
    const tree = parentOfHog(150);
    try {
      const hog = await tree.hogPid;
      const rootOnly = await new TreeMeter(tree.root.pid ?? 0, 1000, undefined, () => [tree.root.pid ?? 0]).sample(true);
      const both = await new TreeMeter(tree.root.pid ?? 0, 1000, undefined, () => [tree.root.pid ?? 0, hog]).sample(true);
      expect(both).toBeGreaterThan(rootOnly + 140);
      // A list that cannot be read: the tree is found from its root.
      expect(await new TreeMeter(tree.root.pid ?? 0, 1000, undefined, () => undefined).sample(true)).toBeGreaterThan(rootOnly + 140);
    } finally {
      await tree.stop();
    }
  });
});
