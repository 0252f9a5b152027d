/**
 * Launch options of `chromium.launch()` / `puppeteer.launch()` that cannot apply to a script run
 * as it is (the run's browser is the runtime's warm, sandboxed one): they are ignored at run
 * time, and the deploy answer lists each one the code passes as a warning (see
 * lambdas/code/analysis). Shared by both so that the list is one.
 */
export const IGNORED_LAUNCH_OPTIONS: Readonly<Record<string, string>> = {
  executablePath: "the run uses browserfn's own Chromium",
  channel: "the run uses browserfn's own Chromium",
  headless: "the run's browser is always headless",
  args: "the run's browser takes no extra command-line flags",
  ignoreDefaultArgs: "the run's browser takes no extra command-line flags",
  userDataDir: "each launch is a fresh, isolated context (use a profile for a login kept between runs)",
  devtools: "the run's browser is always headless",
  debuggingPort: "no DevTools port listens in the sandbox",
  pipe: "the run's browser is always driven over its own pipe",
  browserWSEndpoint: "only the run's own browser can be reached",
};

/** True when `value` for `option` asks for something the run cannot give (`headless: false`, not `headless: true`). */
export function ignoredOption(option: string, value: unknown): boolean {
  if (!Object.hasOwn(IGNORED_LAUNCH_OPTIONS, option)) return /(^|[^a-z])(remote-?)?debugging-?port/i.test(option);
  if (option === "headless") return value === false;
  if (option === "pipe") return value === false;
  if (option === "devtools") return value === true;
  return value !== undefined;
}
