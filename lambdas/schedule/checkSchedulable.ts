import type { ParameterInfo } from "../code/extractParameters";
import type { InputSchema } from "../code/jsonSchema";
import type { FunctionSettings } from "../functions/types";
import { ApiError } from "../http/errors";
import { validateParams } from "../invoke/validateParams";
import type { Scheduler } from "./scheduler";

/**
 * A schedule must be runnable as set: the scheduler adapter accepts the expression, and the
 * automation's parameters are complete with `schedule_params` (and its own defaults).
 */
export function checkSchedulable(
  scheduler: Scheduler,
  settings: FunctionSettings,
  variables: ParameterInfo[],
  schema: InputSchema | undefined,
): void {
  if (settings.schedule === null) return;
  scheduler.check(settings.schedule, settings.schedule_timezone);
  try {
    validateParams(variables, settings.schedule_params ?? {}, "json", schema);
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== "invalid_parameters") throw error;
    throw new ApiError(
      "invalid_schedule",
      `Scheduled runs would have bad parameters; set them in schedule_params: ${error.message}`,
      { schedule: settings.schedule, ...error.details },
    );
  }
}
