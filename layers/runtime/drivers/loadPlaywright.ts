import fs from "node:fs";

/**
 * Node 20's permission model makes `fs.existsSync` throw on a path the process may not read
 * (later Node versions answer false, as existsSync's contract says); playwright-core asks about
 * /proc and /run files while it loads (is-wsl, is-docker). The worker's existsSync answers false
 * for them, as it would for any file it cannot see.
 */
function existsSyncAnswersFalseWhenDenied(): void {
  const original = fs.existsSync;
  if ((original as { browserfnDenied?: true }).browserfnDenied) return;
  const patched = (path: fs.PathLike): boolean => {
    try {
      return original(path);
    } catch {
      return false;
    }
  };
  (patched as { browserfnDenied?: true }).browserfnDenied = true;
  fs.existsSync = patched;
}

/** playwright-core (the runner's bundled copy), loaded on first use: a run that never asks for it does not pay for it. */
export function loadPlaywright(): typeof import("playwright-core") {
  existsSyncAnswersFalseWhenDenied();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require("playwright-core") as typeof import("playwright-core");
}
