import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { openapiDocument } from "../schemas/openapiDocument";

/** GET /openapi.json: the OpenAPI 3.1 document of every route (open). */
export const openapi = defineRoute({ auth: false }, async ({ baseUrl }) => json(200, openapiDocument(baseUrl)));
