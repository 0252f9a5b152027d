import { RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Node } from "constructs";
import { z } from "zod";
import { DEFAULT_PLAN, DEFAULT_PLANS, PlanSchema, type Plans } from "../lambdas/config/plans";
import { DEFAULT_RUN_RETENTION_DAYS } from "../lambdas/store/store";
import { type ConcurrencySetting, ConcurrencySettingSchema, DEFAULT_CONCURRENCY_PLAN } from "./concurrencyPlan";

/** The deployment's settings: each from the stack props, else the CDK context (`-c key=value`, cdk.json), else the default. */
export interface StackSettings {
  /** Prefix of every physical name (tables, handler Lambdas, schedule group); default `browserfn`. */
  prefix: string;
  /** API Gateway stage; `$default` serves the API at the root of its URL. */
  stageName: string;
  plans: Plans;
  /** The plan of an account created by its first OAuth access token. */
  defaultPlan: string;
  /**
   * How long an invocation waits for its run before answering 202, counted from API Gateway's
   * receipt of the request (so cold starts are inside it): at most 27, leaving API Gateway's 30 s
   * three seconds for the answer (docs/deploy.md, "Sync window headroom").
   */
  syncWaitSeconds: number;
  /** Name prefix of the per-function Lambdas; the handlers may manage only functions with this prefix. */
  functionPrefix: string;
  /** Runs, logs and schedule claims expire (DynamoDB TTL) after this many days. */
  runRetentionDays: number;
  /** `retain` (default) keeps the tables when the stack is deleted; `destroy` deletes them. */
  tableRemovalPolicy: "retain" | "destroy";
  /** Retention of the handler and API access log groups, in days (a CloudWatch Logs value). */
  logRetentionDays: number;
  /** Cognito hosted domain prefix (unique per region); default `<prefix>-<account id>`. */
  cognitoDomainPrefix: string | null;
  /** Where the authorization-code client may redirect after sign-in. */
  oauthCallbackUrls: string[];
  /** The API stage's steady request rate (per second, all callers together); past it, 429. */
  throttleRatePerSecond: number;
  /** The API stage's burst of requests above the steady rate. */
  throttleBurst: number;
  /**
   * The most memory (MB) a function's Lambda may have in this AWS account, when it is known
   * (Lambda has no API that says so); null: inferred from GetAccountSettings (see docs/deploy.md).
   */
  functionMaxMemoryMb: number | null;
  /** Days runs' artifacts are kept (the run bucket's lifecycle, and their records' TTL). */
  artifactRetentionDays: number;
  /** Reserved concurrency of the stack's own Lambdas (lib/concurrencyPlan.ts), or `off`. */
  reservedConcurrency: ConcurrencySetting;
  /**
   * The ARN of a secrets key kept by an earlier stack of this prefix (its table reattached):
   * used instead of a new key, so the secrets sealed in that table still open. Null: a new key.
   */
  secretsKeyArn: string | null;
}

export const SETTING_NAMES = [
  "prefix",
  "stageName",
  "plans",
  "defaultPlan",
  "syncWaitSeconds",
  "functionPrefix",
  "runRetentionDays",
  "tableRemovalPolicy",
  "logRetentionDays",
  "cognitoDomainPrefix",
  "oauthCallbackUrls",
  "throttleRatePerSecond",
  "throttleBurst",
  "functionMaxMemoryMb",
  "artifactRetentionDays",
  "reservedConcurrency",
  "secretsKeyArn",
] as const satisfies readonly (keyof StackSettings)[];

const RETENTION_VALUES = new Set(Object.values(RetentionDays).filter((value) => typeof value === "number"));

/** The longest sync window: API Gateway answers 503 at 30 s, and the 202 after the window needs a read and the answer's way back. */
export const MAX_SYNC_WAIT_SECONDS = 27;

/** Context values given with `-c` arrive as text: JSON objects and lists may be written as text too. */
const jsonText = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value, ctx) => {
    if (typeof value !== "string") return value;
    try {
      return JSON.parse(value);
    } catch {
      ctx.addIssue({ code: "custom", message: "not valid JSON" });
      return z.NEVER;
    }
  }, schema);

/** Like jsonText, but a bare word (`off`) given with `-c` stays a word. */
const jsonTextOrWord = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value, ctx) => {
    if (typeof value !== "string" || !value.trim().startsWith("{")) return value;
    try {
      return JSON.parse(value);
    } catch {
      ctx.addIssue({ code: "custom", message: "not valid JSON" });
      return z.NEVER;
    }
  }, schema);

const SettingsSchema = z.object({
  prefix: z.string().regex(/^[a-z][a-z0-9-]{0,23}$/, "1-24 characters of [a-z0-9-], starting with a letter").default("browserfn"),
  stageName: z.string().regex(/^(\$default|[A-Za-z0-9_-]{1,128})$/).default("$default"),
  plans: jsonText(z.record(z.string(), PlanSchema)).default(DEFAULT_PLANS),
  defaultPlan: z.string().min(1).default(DEFAULT_PLAN),
  syncWaitSeconds: z.coerce.number().positive().max(MAX_SYNC_WAIT_SECONDS).default(25),
  functionPrefix: z.string().regex(/^[A-Za-z0-9_-]{1,30}$/, "1-30 characters of [A-Za-z0-9_-]").optional(),
  runRetentionDays: z.coerce.number().int().min(1).max(3650).default(DEFAULT_RUN_RETENTION_DAYS),
  tableRemovalPolicy: z.enum(["retain", "destroy"]).default("retain"),
  logRetentionDays: z.coerce
    .number()
    .refine((days) => RETENTION_VALUES.has(days), "must be a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, 60, 90, …)")
    .default(30),
  cognitoDomainPrefix: z
    .string()
    .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/)
    .nullable()
    .default(null),
  oauthCallbackUrls: z
    .preprocess((value) => (typeof value === "string" ? value.split(",").map((url) => url.trim()) : value), z.array(z.url()).min(1))
    .default(["http://localhost:8787/callback"]),
  // API Gateway's own account-wide ceiling is 10,000 a second (bursts of 5,000).
  throttleRatePerSecond: z.coerce.number().positive().max(10_000).default(1000),
  throttleBurst: z.coerce.number().int().min(1).max(5000).default(2000),
  functionMaxMemoryMb: z.coerce.number().int().min(128).max(10240).nullable().default(null),
  artifactRetentionDays: z.coerce.number().int().min(1).max(3650).default(7),
  reservedConcurrency: jsonTextOrWord(ConcurrencySettingSchema).default(DEFAULT_CONCURRENCY_PLAN),
  secretsKeyArn: z
    .string()
    .regex(/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[0-9a-f-]{36}$/, "the ARN of a KMS key (arn:aws:kms:<region>:<account>:key/<key id>)")
    .nullable()
    .default(null),
});

/** Settings from props, else context, else defaults; throws one message naming every bad value. */
export function resolveStackSettings(node: Node, props: Partial<StackSettings>): StackSettings {
  const raw = Object.fromEntries(SETTING_NAMES.map((name) => [name, props[name] ?? node.tryGetContext(name)]));
  const result = SettingsSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".") || "settings"}: ${issue.message}`);
    throw new Error(`Invalid browserfn stack settings (props or -c context):\n  ${problems.join("\n  ")}`);
  }
  const settings = { ...result.data, functionPrefix: result.data.functionPrefix ?? `${result.data.prefix}-fn-` };
  if (!settings.plans[settings.defaultPlan]) {
    throw new Error(`Invalid browserfn stack settings: defaultPlan '${settings.defaultPlan}' is not one of the plans`);
  }
  return settings;
}

/**
 * Fails when the function prefix would cover one of the stack's own Lambdas: the handlers may
 * create, update and delete every function whose name starts with it.
 */
export function checkFunctionPrefix(functionPrefix: string, ownFunctionNames: string[]): void {
  const covered = ownFunctionNames.filter((name) => name.toLowerCase().startsWith(functionPrefix.toLowerCase()));
  if (covered.length > 0) {
    throw new Error(`functionPrefix '${functionPrefix}' covers the stack's own Lambdas (${covered.join(", ")}); choose another`);
  }
}
