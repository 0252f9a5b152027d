import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const ROOT = path.resolve(__dirname, "../..");

/**
 * In a Node process of its own (esbuild's service is one per process): builds the host bundle
 * twice at once, then once more, and counts the esbuild processes it has as children (zombies
 * aside) while the first builds run and once each has ended.
 */
const SCRIPT = `
const { readdirSync, readFileSync } = require("node:fs");
const { buildHostBundle } = require("./lambdas/runner/buildWorkerBundle");
const esbuildChildren = () => readdirSync("/proc").filter((name) => {
  try {
    const stat = readFileSync("/proc/" + name + "/stat", "utf8");
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return stat.includes(" (esbuild) ") && state !== "Z" && Number(ppid) === process.pid;
  } catch {
    return false;
  }
}).length;
const settled = async () => {
  for (let i = 0; i < 200 && esbuildChildren() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  return esbuildChildren();
};
(async () => {
  const dir = process.argv[1];
  const both = Promise.all([buildHostBundle(dir + "/a"), buildHostBundle(dir + "/b")]);
  const during = esbuildChildren();
  const built = await both;
  const afterBoth = await settled();
  built.push(await buildHostBundle(dir + "/c"));
  const afterAgain = await settled();
  process.stdout.write(JSON.stringify({ during, afterBoth, afterAgain, built: built.map((file) => file.slice(dir.length)) }));
})();
`;

describe("bundleRunner", () => {
  it("stops esbuild's service process when its last build ends, and builds again after", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "bundle-runner-"));
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ["--require", "tsx/cjs", "-e", SCRIPT, dir], { cwd: ROOT, timeout: 60_000 });
      const counts = JSON.parse(stdout) as { during: number };
      // During the builds: esbuild's service (and tsx's own, when its compile cache missed, as on a fresh checkout).
      expect(counts.during).toBeGreaterThanOrEqual(1);
      expect(counts).toEqual({ during: counts.during, afterBoth: 0, afterAgain: 0, built: ["/a/host.cjs", "/b/host.cjs", "/c/host.cjs"] });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
