/**
 * The AWS handlers' bundles (#23.12): for each entry of lambdas/aws/entries, built as the stack
 * builds it (esbuild, minified ES module, the SDK bundled), its size, the AWS SDK clients in it,
 * and the CPU time a fresh `node` takes to load it (its own user + system time, read inside the
 * child, beside `node -e 0`'s in the same loop). Sizes and clients do not depend on the
 * machine's load; the CPU times do a little less than wall times would.
 *
 *   npx tsx bench/handlerBundles.ts [entry …]    (default: every entry; LOADS=5 loads each)
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { ENTRIES_DIR, HANDLER_BANNER, HANDLER_EXTERNAL_MODULES, PROJECT_ROOT } from "../lib/handlerFunction";
import { round, summary } from "./stats";

/** The child's own CPU time (ms) after importing `file` (nothing: `node -e 0`'s figure). */
function loadCpuMs(file: string | null): number {
  const script = `${file ? `await import(${JSON.stringify(file)});` : ""} const u = process.cpuUsage(); console.log((u.user + u.system) / 1000);`;
  return Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }).trim());
}

async function main(): Promise<void> {
  const all = (await readdir(ENTRIES_DIR)).filter((file) => file.endsWith(".ts")).map((file) => file.slice(0, -3)).sort();
  const entries = process.argv.length > 2 ? process.argv.slice(2) : all;
  const loads = Number(process.env.LOADS ?? 5);
  const outdir = await mkdtemp(path.join(tmpdir(), "bfn-bundles-"));
  try {
    const result = await build({
      entryPoints: Object.fromEntries(entries.map((entry) => [entry, path.join(ENTRIES_DIR, `${entry}.ts`)])),
      absWorkingDir: PROJECT_ROOT,
      outdir,
      outExtension: { ".js": ".mjs" },
      bundle: true,
      minify: true,
      metafile: true,
      platform: "node",
      format: "esm",
      target: "node22",
      mainFields: ["module", "main"],
      external: [...HANDLER_EXTERNAL_MODULES],
      banner: { js: HANDLER_BANNER },
      logLevel: "error",
    });
    const rows = [];
    for (const [file, output] of Object.entries(result.metafile.outputs)) {
      if (!output.entryPoint) continue;
      const clients = new Set<string>();
      for (const input of Object.keys(output.inputs)) {
        const match = /node_modules\/@aws-sdk\/(client-[a-z0-9-]+)\//.exec(input);
        if (match?.[1]) clients.add(match[1].slice("client-".length));
      }
      const bundle = path.join(PROJECT_ROOT, file);
      const base: number[] = [];
      const load: number[] = [];
      for (let i = 0; i < loads; i++) {
        base.push(loadCpuMs(null));
        load.push(loadCpuMs(bundle));
      }
      rows.push({
        entry: path.basename(output.entryPoint, ".ts"),
        kb: round(output.bytes / 1024),
        clients: [...clients].sort().join(","),
        load_cpu_ms_p50: round(summary(load).p50),
        node_e_0_cpu_ms_p50: round(summary(base).p50),
      });
    }
    console.table(rows.sort((a, b) => a.entry.localeCompare(b.entry)));
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
}

void main();
