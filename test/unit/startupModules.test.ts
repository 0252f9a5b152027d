import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

const ROOT = path.resolve(__dirname, "../..");

/** Packages the local service needs only once an MCP request comes or a function is invoked. */
const ON_FIRST_USE = ["@modelcontextprotocol/sdk", "ajv"];
/** Packages the service's thread never loads: the compiler is loaded by the deploy analysis worker thread. */
const NEVER = ["typescript"];

/**
 * In a Node process of its own, as `npm start` runs it (tsx's CommonJS hook): requires the
 * local service and its routes, runs `then` (a script's text), and prints which of
 * ON_FIRST_USE are loaded, before and after.
 */
async function loadedPackages(then: string): Promise<{ before: string[]; after: string[] }> {
  const script = `
    const loaded = () => ${JSON.stringify([...ON_FIRST_USE, ...NEVER])}.filter((name) =>
      Object.keys(require.cache).some((file) => file.includes("/node_modules/" + name + "/")));
    require("./lambdas/local/localService");
    const before = loaded();
    (async () => {
      ${then}
      process.stdout.write(JSON.stringify({ before, after: loaded() }));
    })();`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--require", "tsx/cjs", "-e", script], { cwd: ROOT, timeout: 60_000 });
  return JSON.parse(stdout) as { before: string[]; after: string[] };
}

describe("the local service's start-up", () => {
  it("loads neither the TypeScript compiler, the MCP SDK nor ajv: POST /mcp and invocation do, and deploys load the compiler in their worker thread only", async () => {
    const { before, after } = await loadedPackages(`
      const { AnalysisPool } = require("./lambdas/code/analysis/analysisPool");
      const { sourceWorkerScript } = require("./lambdas/code/analysis/analysisWorkerScript");
      const pool = new AnalysisPool({ script: sourceWorkerScript(), budget: { timeoutMs: 60000, memoryMb: 512 }, maxWorkers: 1, log: () => undefined });
      const compiled = await pool.compile("export default async (n: number) => n", "local");
      if (compiled.variables[0].name !== "n") throw new Error("not compiled");
      await pool.close();
      new (require("./lambdas/invoke/schemaChecker").SchemaChecker)().check({ type: "number" }, 1);
      require("./lambdas/mcp/answerMcp");`);
    expect(before).toEqual([]);
    expect(after.sort()).toEqual([...ON_FIRST_USE].sort());
  });
});
