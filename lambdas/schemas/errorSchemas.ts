import { z } from "zod";
import { ERROR_STATUS } from "../http/errors";

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS]),
      message: z.string(),
      request_id: z.string(),
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .meta({ id: "Error" });
