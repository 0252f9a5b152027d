import type { ServiceConfig } from "./config/serviceConfig";
import type { RateLimiter } from "./http/rateLimiter";
import type { Identity } from "./identity/identity";
import type { Runtime } from "./runtime/runtime";
import type { Scheduler } from "./schedule/scheduler";
import type { Store } from "./store/store";

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Everything a handler uses, built once at the edge (Lambda entry or local server). */
export interface Deps {
  store: Store;
  identity: Identity;
  runtime: Runtime;
  scheduler: Scheduler;
  /** Per-key request limits (absent: none). */
  rateLimiter?: RateLimiter;
  clock: Clock;
  config: ServiceConfig;
  /** Where handlers write diagnostic lines (never secrets). */
  log: (line: string) => void;
}
