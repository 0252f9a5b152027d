import { z } from "zod";
import { ApiError } from "../http/errors";
import { limitParam } from "../http/limit";
import { RunStatus, RunTrigger } from "./runSchemas";

/** `GET /functions?limit=&cursor=`. */
export const ListFunctionsQuery = z.object({
  limit: limitParam(100, 50),
  cursor: z.string().optional().describe("next_cursor of the previous page"),
});
export type ListFunctionsQuery = z.infer<typeof ListFunctionsQuery>;

/** `GET /functions/{ref}/logs?limit=`. */
export const LogsQuery = z.object({ limit: limitParam(1000, 50) });

/** `GET /functions/{ref}/deliveries?limit=`. */
export const DeliveriesQuery = z.object({ limit: limitParam(500, 50) });

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/** `GET /usage?month=YYYY-MM`; another month is 400 `invalid_request` with `details.field: "month"`. */
export const UsageQuery = z.object({
  month: z
    .string()
    .optional()
    .transform((month) => {
      if (month !== undefined && !MONTH.test(month)) throw new ApiError("invalid_request", `month must be YYYY-MM, not '${month}'`, { field: "month" });
      return month;
    })
    .pipe(z.string().regex(MONTH).optional())
    .describe("The month, YYYY-MM (UTC); default: the current month"),
});

/** `GET /runs?function=&status=&trigger=&limit=&cursor=`: any other parameter is 400 `invalid_request`. */
export const RunListQuery = z.strictObject({
  function: z.string().min(1).max(64).optional().describe("Only this function's runs: its name or its function_id"),
  // Inline enums (a query parameter's schema has no $ref to the shared one).
  status: z.enum(RunStatus.options).optional().describe("Only runs with this status"),
  trigger: z.enum(RunTrigger.options).optional().describe("Only runs started this way"),
  limit: limitParam(100, 50),
  cursor: z.string().optional().describe("next_cursor of the previous page (400 invalid_cursor for anything else)"),
});
export type RunListQuery = z.infer<typeof RunListQuery>;
