import { availableParallelism } from "node:os";
import path from "node:path";
import { z } from "zod";
import { DEFAULT_ARTIFACT_RETENTION_DAYS } from "../artifacts/artifacts";
import { DEFAULT_JWT_ALGORITHMS, JWT_ALGORITHMS } from "../identity/jwtVerifier";
import { DEFAULT_PLAN, DEFAULT_PLANS, PlanSchema, type Plans } from "./plans";
import { DEFAULT_RETRY_BASE_MS } from "../webhooks/retrySchedule";
import { DEFAULT_CONNECTION_GUARDS } from "../local/requestGuards/connectionGuards";
import { DEFAULT_RUN_RETENTION_DAYS } from "../store/store";
import { type AnalysisBudget, DEFAULT_ANALYSIS_BUDGET, DEFAULT_ANALYSIS_WORKERS } from "../code/analysis/codeAnalysis";

/** Settings of the local service (`npm start`), read from the environment once at start-up. */
export interface LocalConfig {
  host: string;
  port: number;
  dataDir: string;
  bootstrapKey: string | null;
  syncWaitSeconds: number;
  tablePrefix: string;
  plans: Plans;
  /** Write one line per request to stdout. */
  requestLog: boolean;
  /** Requests per second and burst per API key (per process). */
  rateLimit: { perSecond: number; burst: number };
  /**
   * Deploys (code read: a create, an update with code, a fork) per second and burst per account
   * (per process); absent: none. A deploy costs the service far more than a call (its body, its
   * reading, its records): one account deploying without pause held every other account's calls.
   */
  deployRate?: { perSecond: number; burst: number };
  /** Worker processes: per function, in all, and how long an idle one is kept. */
  workers: { perFunction: number; total: number; idleSeconds: number };
  /** OAuth 2.0 access tokens (JWTs) accepted beside API keys; absent or null: API keys only. */
  oauth?: LocalOAuthConfig | null;
  /** How long a store request may stay unanswered before it fails (503); default 10 s. */
  storeTimeoutMs?: number;
  /** How runs are isolated (shared/DESIGN.md, "The local sandbox"); default `auto`. */
  sandbox?: "auto" | "namespaces" | "process";
  /** Automations may reach the host's loopback and private addresses; default false. */
  allowLocalNetwork?: boolean;
  /** On SIGTERM/SIGINT, how long runs in progress may go on before they are stopped; default 10 s. */
  shutdownGraceSeconds?: number;
  /** Days runs' artifacts are kept; default 7. */
  artifactRetentionDays?: number;
  /** Days runs (their record, result, logs and artifacts) are kept; default 30. */
  runRetentionDays?: number;
  /** Connections one client address may hold open at once (default 256), and how long a request body may stall (default 10 s). */
  connections?: { maxPerClient: number; bodyIdleSeconds: number };
  /** Webhook deliveries: the retry schedule's base delay (default 5 s) and how often due ones are looked for (default 1 s). */
  webhooks?: { retryBaseMs?: number; pollMs?: number };
  /** What reading one deploy's code may take (default 5 s, 512 MB), and on how many worker threads at most (default 2). */
  deployAnalysis?: AnalysisBudget & { workers: number };
}

export interface LocalOAuthConfig {
  issuer: string;
  jwksUrl: string;
  audience: string[];
  clientIds: string[];
  algorithms: string[];
}

/** Browser CPU caps throughput: two warm workers per core by default. */
const DEFAULT_WORKERS = Math.max(2, availableParallelism() * 2);

const port = z.coerce.number().int().min(0).max(65535);

/** "a, b,,c" → ["a", "b", "c"]; unset → undefined. */
const commaList = z
  .string()
  .optional()
  .transform((text) => text?.split(",").map((item) => item.trim()).filter((item) => item !== ""));

const EnvSchema = z.object({
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: port.default(8787),
  BROWSERFN_DATA_DIR: z.string().min(1).default("./.browserfn"),
  BROWSERFN_BOOTSTRAP_KEY: z
    .string()
    .regex(/^bfn_[A-Za-z0-9_-]{16,}$/, "must start with bfn_ and have at least 16 more characters of [A-Za-z0-9_-]")
    .optional(),
  BROWSERFN_SYNC_WAIT_SECONDS: z.coerce.number().positive().max(900).default(25),
  BROWSERFN_SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).max(900).default(10),
  BROWSERFN_ARTIFACT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(DEFAULT_ARTIFACT_RETENTION_DAYS),
  BROWSERFN_RUN_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(DEFAULT_RUN_RETENTION_DAYS),
  BROWSERFN_MAX_CONNECTIONS_PER_CLIENT: z.coerce.number().int().min(1).max(100_000).default(DEFAULT_CONNECTION_GUARDS.maxConnectionsPerClient),
  BROWSERFN_BODY_IDLE_SECONDS: z.coerce.number().positive().max(3_600).default(DEFAULT_CONNECTION_GUARDS.bodyIdleMs / 1000),
  BROWSERFN_TABLE_PREFIX: z.string().regex(/^[A-Za-z0-9_.-]{1,200}$/).default("browserfn"),
  BROWSERFN_PLANS: z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return DEFAULT_PLANS;
      try {
        return z.record(z.string(), PlanSchema).parse(JSON.parse(text));
      } catch (error) {
        ctx.addIssue({ code: "custom", message: `not a JSON object of plans: ${(error as Error).message}` });
        return z.NEVER;
      }
    }),
  BROWSERFN_REQUEST_LOG: z.enum(["0", "1"]).default("1"),
  BROWSERFN_MAX_WORKERS: z.coerce.number().int().min(1).max(1000).optional(),
  BROWSERFN_MAX_WORKERS_PER_FUNCTION: z.coerce.number().int().min(1).max(1000).optional(),
  BROWSERFN_RATE_LIMIT_PER_SECOND: z.coerce.number().min(0).max(1_000_000).default(100),
  BROWSERFN_RATE_LIMIT_BURST: z.coerce.number().int().min(1).max(1_000_000).default(200),
  BROWSERFN_DEPLOY_RATE_PER_MINUTE: z.coerce.number().min(0).max(1_000_000).default(60),
  BROWSERFN_DEPLOY_BURST: z.coerce.number().int().min(1).max(1_000_000).default(50),
  BROWSERFN_WORKER_IDLE_SECONDS: z.coerce.number().positive().max(86_400).default(60),
  BROWSERFN_STORE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  BROWSERFN_SANDBOX: z.enum(["auto", "namespaces", "process"]).default("auto"),
  BROWSERFN_ALLOW_LOCAL_NETWORK: z.enum(["true", "false", "1", "0"]).default("false"),
  BROWSERFN_WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).max(3_600_000).default(DEFAULT_RETRY_BASE_MS),
  BROWSERFN_WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  BROWSERFN_DEPLOY_ANALYSIS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_ANALYSIS_BUDGET.timeoutMs),
  BROWSERFN_DEPLOY_ANALYSIS_MEMORY_MB: z.coerce.number().int().min(128).max(16_384).default(DEFAULT_ANALYSIS_BUDGET.memoryMb),
  BROWSERFN_DEPLOY_ANALYSIS_WORKERS: z.coerce.number().int().min(1).max(64).default(DEFAULT_ANALYSIS_WORKERS),
  BROWSERFN_OAUTH_ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  BROWSERFN_OAUTH_JWKS_URL: z.url({ protocol: /^https?$/ }).optional(),
  BROWSERFN_OAUTH_AUDIENCE: commaList,
  BROWSERFN_OAUTH_CLIENT_IDS: commaList,
  BROWSERFN_OAUTH_ALGORITHMS: commaList.pipe(z.array(z.enum(JWT_ALGORITHMS)).min(1).optional()),
}).superRefine((e, ctx) => {
  const issue = (variable: string, message: string) => ctx.addIssue({ code: "custom", path: [variable], message });
  if (e.BROWSERFN_OAUTH_ISSUER === undefined) {
    for (const variable of ["BROWSERFN_OAUTH_JWKS_URL", "BROWSERFN_OAUTH_AUDIENCE", "BROWSERFN_OAUTH_CLIENT_IDS", "BROWSERFN_OAUTH_ALGORITHMS"] as const) {
      if (e[variable] !== undefined) issue(variable, "is set but BROWSERFN_OAUTH_ISSUER is not");
    }
    return;
  }
  if (!e.BROWSERFN_OAUTH_AUDIENCE?.length && !e.BROWSERFN_OAUTH_CLIENT_IDS?.length) {
    issue("BROWSERFN_OAUTH_ISSUER", "needs BROWSERFN_OAUTH_AUDIENCE or BROWSERFN_OAUTH_CLIENT_IDS (or both)");
  }
  if (e.BROWSERFN_PLANS && !(DEFAULT_PLAN in e.BROWSERFN_PLANS)) {
    issue("BROWSERFN_OAUTH_ISSUER", `accounts created by a token get plan '${DEFAULT_PLAN}', which BROWSERFN_PLANS does not define`);
  }
});

/** Parses the environment; throws one message naming every bad variable. */
export function readLocalConfig(env: NodeJS.ProcessEnv, cwd = process.cwd()): LocalConfig {
  const result = EnvSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  const e = result.data;
  return {
    host: e.HOST,
    port: e.PORT,
    dataDir: path.resolve(cwd, e.BROWSERFN_DATA_DIR),
    bootstrapKey: e.BROWSERFN_BOOTSTRAP_KEY ?? null,
    syncWaitSeconds: e.BROWSERFN_SYNC_WAIT_SECONDS,
    shutdownGraceSeconds: e.BROWSERFN_SHUTDOWN_GRACE_SECONDS,
    artifactRetentionDays: e.BROWSERFN_ARTIFACT_RETENTION_DAYS,
    runRetentionDays: e.BROWSERFN_RUN_RETENTION_DAYS,
    connections: { maxPerClient: e.BROWSERFN_MAX_CONNECTIONS_PER_CLIENT, bodyIdleSeconds: e.BROWSERFN_BODY_IDLE_SECONDS },
    tablePrefix: e.BROWSERFN_TABLE_PREFIX,
    plans: e.BROWSERFN_PLANS,
    requestLog: e.BROWSERFN_REQUEST_LOG === "1",
    rateLimit: { perSecond: e.BROWSERFN_RATE_LIMIT_PER_SECOND, burst: e.BROWSERFN_RATE_LIMIT_BURST },
    deployRate: { perSecond: e.BROWSERFN_DEPLOY_RATE_PER_MINUTE / 60, burst: e.BROWSERFN_DEPLOY_BURST },
    workers: {
      total: e.BROWSERFN_MAX_WORKERS ?? DEFAULT_WORKERS,
      perFunction: e.BROWSERFN_MAX_WORKERS_PER_FUNCTION ?? e.BROWSERFN_MAX_WORKERS ?? DEFAULT_WORKERS,
      idleSeconds: e.BROWSERFN_WORKER_IDLE_SECONDS,
    },
    storeTimeoutMs: e.BROWSERFN_STORE_TIMEOUT_MS,
    sandbox: e.BROWSERFN_SANDBOX,
    allowLocalNetwork: e.BROWSERFN_ALLOW_LOCAL_NETWORK === "true" || e.BROWSERFN_ALLOW_LOCAL_NETWORK === "1",
    webhooks: { retryBaseMs: e.BROWSERFN_WEBHOOK_RETRY_BASE_MS, pollMs: e.BROWSERFN_WEBHOOK_POLL_MS },
    deployAnalysis: {
      timeoutMs: e.BROWSERFN_DEPLOY_ANALYSIS_TIMEOUT_MS,
      memoryMb: e.BROWSERFN_DEPLOY_ANALYSIS_MEMORY_MB,
      workers: e.BROWSERFN_DEPLOY_ANALYSIS_WORKERS,
    },
    oauth: e.BROWSERFN_OAUTH_ISSUER
      ? {
          issuer: e.BROWSERFN_OAUTH_ISSUER,
          jwksUrl: e.BROWSERFN_OAUTH_JWKS_URL ?? `${e.BROWSERFN_OAUTH_ISSUER.replace(/\/+$/, "")}/.well-known/jwks.json`,
          audience: e.BROWSERFN_OAUTH_AUDIENCE ?? [],
          clientIds: e.BROWSERFN_OAUTH_CLIENT_IDS ?? [],
          algorithms: e.BROWSERFN_OAUTH_ALGORITHMS ?? DEFAULT_JWT_ALGORITHMS,
        }
      : null,
  };
}
