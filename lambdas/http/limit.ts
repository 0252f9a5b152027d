import { z } from "zod";
import { ApiError } from "./errors";

/** Parses a `limit` query value: an integer in 1..max, `fallback` when absent; else 400 `invalid_limit`. */
export function parseLimit(value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const limit = /^\d{1,7}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new ApiError("invalid_limit", `limit must be an integer from 1 to ${max}, not '${value}'`, { min: 1, max });
  }
  return limit;
}

/**
 * The `limit` query parameter of a listing, as a query schema's field: parsed by parseLimit (400
 * `invalid_limit`, `details: {min, max}`), documented as an integer in 1..max with its default.
 */
export function limitParam(max: number, fallback: number) {
  return z
    .string()
    .optional()
    .transform((value) => parseLimit(value, fallback, max))
    .pipe(z.int().min(1).max(max))
    .meta({ default: fallback, description: `How many items at most: 1..${max}, default ${fallback}` });
}
