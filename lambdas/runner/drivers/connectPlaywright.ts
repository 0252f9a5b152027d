import fs from "node:fs";
import type { Browser } from "playwright-core";
import type { CdpMux } from "./cdpMux";

/**
 * Connects Playwright (playwright-core, loaded on first use: a run that never asks for it does
 * not pay for it) to the run's browser over a connection of its own on the pipe. `artifactsDir`
 * is the runtime's downloads folder: Playwright makes no folder of its own (a worker may write
 * none), and what its pages download lands there, where the host keeps every download anyway.
 */
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

export async function connectPlaywright(mux: CdpMux, artifactsDir: string | undefined): Promise<Browser> {
  existsSyncAnswersFalseWhenDenied();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { chromium } = require("playwright-core") as typeof import("playwright-core");
  const transport = await mux.openConnection();
  // `artifactsDir` is an option of the server side that the client passes on (not in its typings).
  const options = { isLocal: true, ...(artifactsDir ? { artifactsDir } : {}) };
  return chromium.connectOverCDP(transport, options);
}
