import { z } from "zod";
import type { CompiledCode, Warning } from "../compileCode";
import type { ErrorCode } from "../../http/errors";

// What the service and an analysis worker (analysisWorker.ts) say to each other, over its port.

export type AnalysisOp = "compile" | "warnings";

/** Service → worker: analyse `source`. */
export interface AnalysisRequest {
  id: number;
  op: AnalysisOp;
  source: string;
}

/**
 * Worker → service: `ready` once the compiler is loaded (with its Linux thread id, whose CPU time
 * the budget counts; null elsewhere); per request its answer as JSON text (a
 * tree: nothing shared, so reading it back costs what it weighs), a rejection (an ApiError's code,
 * message and details), or a failure of the worker's own code (a bug: 500).
 */
export type AnalysisReply =
  | { type: "ready"; threadId: number | null }
  | { type: "answer"; id: number; json: string }
  | { type: "rejected"; id: number; code: ErrorCode; message: string; details: Record<string, unknown> }
  | { type: "failed"; id: number; message: string };

const ParameterInfo = z.object({
  name: z.string(),
  type: z.string(),
  default: z.string().optional(),
  required: z.boolean(),
  schema_note: z.string().optional(),
});
const Warning = z.object({ code: z.enum(["unawaited_return_in_session", "ignored_launch_option"]), message: z.string(), line: z.number().int() });
const Schema = z.record(z.string(), z.unknown());

const Compiled = z.object({
  js: z.string(),
  variables: z.array(ParameterInfo),
  input_schema: Schema,
  output_schema: Schema,
  parameter_style: z.enum(["positional", "object"]),
  code_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  warnings: z.array(Warning),
  profile_names: z.array(z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/)).max(100),
  // Absent from a worker built before the field: none.
  profile_writes: z.array(z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/)).max(100).default([]),
});

/** A compile answer read back; throws when it is not one. */
export function compiledFromJson(json: string): CompiledCode {
  return Compiled.parse(JSON.parse(json)) as CompiledCode;
}

/** A warnings answer read back; throws when it is not one. */
export function warningsFromJson(json: string): Warning[] {
  return z.array(Warning).parse(JSON.parse(json));
}
