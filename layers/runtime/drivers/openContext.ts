import type { RunState } from "../runContext";
import type { ContextSetup, Driver, DriverContext } from "./driverContext";
import { openPlaywrightContext } from "./playwrightContext";
import { openPuppeteerContext } from "./puppeteerContext";

const DRIVERS: readonly Driver[] = ["puppeteer", "playwright"];

/** The driver `Session.start` was asked for (default puppeteer); a clear error for any other. */
export function parseDriver(driver: unknown): Driver {
  if (driver === undefined) return "puppeteer";
  if (typeof driver === "string" && (DRIVERS as readonly string[]).includes(driver)) return driver as Driver;
  throw new Error(`driver must be "puppeteer" or "playwright", got ${JSON.stringify(driver)}`);
}

/** Opens a fresh, isolated browser context of the run's browser with `driver`, set up by `setup`. */
export async function openContext<D extends Driver>(run: RunState, driver: D, setup: ContextSetup): Promise<DriverContext<D>> {
  const opened = (driver === "playwright" ? await openPlaywrightContext(run, setup) : await openPuppeteerContext(run, setup)) as DriverContext<D>;
  if (setup.onOpen) {
    try {
      await setup.onOpen(opened);
    } catch (error) {
      await opened.close().catch(() => undefined);
      throw error;
    }
  }
  return opened;
}
