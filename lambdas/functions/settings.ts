import type { ServiceConfig } from "../config/serviceConfig";
import type { Principal } from "../identity/identity";
import { checkPlanCaps } from "./planCaps";
import { nextRunAt, validateTimezone } from "./schedule";
import type { FunctionSettings } from "./types";
import { normalizeWebhooks, type WebhookRequest } from "../webhooks/normalizeWebhooks";
import { type RetrySettings, retriesFromInput } from "../retries/retrySettings";
import { DEFAULT_RECORDING } from "../recording/recordingMode";
import type { z } from "zod";
import { type ProxyInput, proxyFromInput } from "../proxy/proxySettings";
import { profilesFromInput } from "../profiles/profileSettings";

type ProxyInputValue = z.infer<typeof ProxyInput>;

export const DEFAULT_TIMEOUT_SECONDS = 300;
export const DEFAULT_MEMORY_MB = 1024;

export const DEFAULT_SETTINGS: FunctionSettings = {
  description: null,
  schedule: null,
  schedule_timezone: "UTC",
  schedule_params: null,
  next_run_at: null,
  timeout_seconds: DEFAULT_TIMEOUT_SECONDS,
  memory_mb: DEFAULT_MEMORY_MB,
  shared: false,
  webhooks: [],
  retries: null,
  recording: DEFAULT_RECORDING,
  proxy: null,
  profiles: [],
};

/** Settings a create or update asks for; absent fields keep their current value. */
export type SettingsPatch = Partial<Omit<FunctionSettings, "next_run_at" | "schedule_timezone" | "webhooks" | "retries" | "proxy">> & {
  /** `null` removes it (ProxyInput: checked by the body's schema). */
  proxy?: ProxyInputValue;
  schedule_timezone?: string;
  webhooks?: readonly WebhookRequest[];
  /** `null` removes the setting; absent fields of an object take their defaults. */
  retries?: Partial<RetrySettings> | null;
};

/**
 * Applies a patch to settings and validates the result as a whole: schedule and time
 * zone (next_run_at recomputed), and the plan's caps on timeout and memory.
 */
export function applySettings(
  current: FunctionSettings,
  patch: SettingsPatch,
  principal: Principal,
  config: ServiceConfig,
  now: Date,
): FunctionSettings {
  const next: FunctionSettings = { ...current };
  for (const key of ["description", "schedule", "schedule_timezone", "schedule_params", "timeout_seconds", "memory_mb", "shared", "recording"] as const) {
    if (patch[key] !== undefined) Object.assign(next, { [key]: patch[key] });
  }
  if (patch.proxy !== undefined) next.proxy = proxyFromInput(patch.proxy);
  if (patch.profiles !== undefined) next.profiles = profilesFromInput(patch.profiles);
  if (patch.retries !== undefined) next.retries = patch.retries === null ? null : retriesFromInput(patch.retries);
  if (patch.webhooks !== undefined) next.webhooks = normalizeWebhooks(patch.webhooks, config.allowLocalNetwork ?? false);
  validateTimezone(next.schedule_timezone);
  next.next_run_at = next.schedule === null ? null : nextRunAt(next.schedule, next.schedule_timezone, now);
  // Caps apply to what this request asks for: settings made under an earlier plan stay valid.
  checkPlanCaps(config.plans, principal.plan, patch.timeout_seconds, patch.memory_mb);
  return next;
}
