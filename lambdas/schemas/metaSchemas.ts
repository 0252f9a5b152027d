import { z } from "zod";

/** `GET /health`. */
export const Health = z.object({ status: z.literal("ok") }).meta({ id: "Health" });

/** `GET /openapi.json`: an OpenAPI 3.1 document (described by the OpenAPI specification, not here). */
export const OpenApiDocument = z
  .looseObject({ openapi: z.string(), info: z.record(z.string(), z.unknown()), paths: z.record(z.string(), z.unknown()) })
  .meta({ id: "OpenApiDocument" });
