import type { Browser } from "playwright-core";
import type { CdpMux } from "./cdpMux";
import { loadPlaywright } from "../../../layers/runtime/drivers/loadPlaywright";

/**
 * Connects Playwright (playwright-core, loaded on first use: a run that never asks for it does
 * not pay for it) to the run's browser over a connection of its own on the pipe. `artifactsDir`
 * is the runtime's downloads folder: Playwright makes no folder of its own (a worker may write
 * none), and what its pages download lands there, where the host keeps every download anyway.
 */
export async function connectPlaywright(mux: CdpMux, artifactsDir: string | undefined): Promise<Browser> {
  const { chromium } = loadPlaywright();
  const transport = await mux.openConnection();
  // `artifactsDir` is an option of the server side that the client passes on (not in its typings).
  const options = { isLocal: true, ...(artifactsDir ? { artifactsDir } : {}) };
  return chromium.connectOverCDP(transport, options);
}
