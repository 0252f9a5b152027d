import type { z } from "zod";
import { ApiError, type ErrorCode } from "./errors";

/** Picks the error code of a failed field; `invalid_request` unless a field says otherwise. */
export type IssueCode = (issue: z.core.$ZodIssue) => ErrorCode | undefined;

/** Parses a value with a zod schema; failures become one ApiError listing every issue. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, what: string, issueCode?: IssueCode): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    field: issue.path.join(".") || what,
    message: issue.code === "unrecognized_keys" ? `unknown field(s): ${issue.keys.join(", ")}` : issue.message,
  }));
  const code = result.error.issues.map((issue) => issueCode?.(issue)).find((c) => c !== undefined) ?? "invalid_request";
  const summary = issues.map((i) => `${i.field}: ${i.message}`).join("; ");
  return throwError(code, `Invalid ${what}: ${summary}`, { issues });
}

function throwError(code: ErrorCode, message: string, details: Record<string, unknown>): never {
  throw new ApiError(code, message, details);
}
