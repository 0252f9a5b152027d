import { z } from "zod";

/**
 * A point in time as the service writes it: ISO 8601 in UTC with milliseconds
 * (`Date.toISOString()`, e.g. `2026-11-22T19:23:06.106Z`), typed `format: date-time` in the
 * OpenAPI document. For answers only: the format is documented, not checked (answers are not
 * parsed, and a request field of a point in time would need a check of its own).
 */
export const DateTime = z.string().meta({ format: "date-time" });
