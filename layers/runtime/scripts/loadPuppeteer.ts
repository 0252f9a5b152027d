/**
 * puppeteer-core, loaded on first use. A worker process serves one run (workerMain), and a run
 * that never touches the browser (no `getBrowser()`, no `require("puppeteer-core")`) never needs
 * it: evaluating puppeteer-core's modules was about half of a fresh worker's start-up CPU
 * (≈ 37 of ≈ 70 ms, docs/benchmarks.md, "Round 4, session 12"). A runner that uses the browser
 * loads it when it first connects (before the run, when its host warms the browser ahead).
 *
 * `require` (not `import from`): the bundle then holds puppeteer-core's CommonJS build only,
 * the same one automations get from `require("puppeteer-core")`, not both builds; esbuild still
 * bundles it (a literal name), and evaluates it only when this is first called.
 */
let loaded: typeof import("puppeteer-core") | undefined;

export function loadPuppeteer(): typeof import("puppeteer-core") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require("puppeteer-core") as typeof import("puppeteer-core");
  return loaded;
}
