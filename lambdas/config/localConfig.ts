import { availableParallelism } from "node:os";
import path from "node:path";
import { z } from "zod";
import { DEFAULT_PLANS, PlanSchema, type Plans } from "./plans";

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
  /** Worker processes: per function, in all, and how long an idle one is kept. */
  workers: { perFunction: number; total: number; idleSeconds: number };
}

/** Browser CPU caps throughput: two warm workers per core by default. */
const DEFAULT_WORKERS = Math.max(2, availableParallelism() * 2);

const port = z.coerce.number().int().min(0).max(65535);

const EnvSchema = z.object({
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: port.default(8787),
  BROWSERFN_DATA_DIR: z.string().min(1).default("./.browserfn"),
  BROWSERFN_BOOTSTRAP_KEY: z
    .string()
    .regex(/^bfn_[A-Za-z0-9_-]{16,}$/, "must start with bfn_ and have at least 16 more characters of [A-Za-z0-9_-]")
    .optional(),
  BROWSERFN_SYNC_WAIT_SECONDS: z.coerce.number().positive().max(900).default(25),
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
  BROWSERFN_WORKER_IDLE_SECONDS: z.coerce.number().positive().max(86_400).default(60),
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
    tablePrefix: e.BROWSERFN_TABLE_PREFIX,
    plans: e.BROWSERFN_PLANS,
    requestLog: e.BROWSERFN_REQUEST_LOG === "1",
    workers: {
      total: e.BROWSERFN_MAX_WORKERS ?? DEFAULT_WORKERS,
      perFunction: e.BROWSERFN_MAX_WORKERS_PER_FUNCTION ?? e.BROWSERFN_MAX_WORKERS ?? DEFAULT_WORKERS,
      idleSeconds: e.BROWSERFN_WORKER_IDLE_SECONDS,
    },
  };
}
