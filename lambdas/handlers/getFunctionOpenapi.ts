import { inputSchemaOf } from "../functions/inputSchemaOf";
import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { functionOpenapiDocument } from "../schemas/functionOpenapiDocument";

/**
 * GET /functions/{ref}/openapi.json: a one-operation OpenAPI 3.1 document for invoking the
 * function (its latest version), to import as a tool. Visible like /info: the caller's own
 * functions, or another account's shared one by function_id.
 */
export const getFunctionOpenapi = defineRoute({}, async ({ params, principal, baseUrl }, deps) => {
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "", true);
  // The output schema is kept with the version only (the record carries the input schema).
  const version = await deps.store.versions.meta(fn.function_id, fn.latest_version);
  const document = functionOpenapiDocument(
    {
      name: fn.name,
      description: fn.description,
      latest_version: fn.latest_version,
      input_schema: inputSchemaOf(fn),
      output_schema: version?.output_schema ?? {},
    },
    baseUrl,
  );
  return json(200, document);
});
