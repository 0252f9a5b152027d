import Ajv2020 from "ajv/dist/2020";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const DOCUMENT_ID = "https://browserfn.test/openapi.json";

/** RFC 3339 date-time, as JSON Schema's `format: date-time` means it (a zone is required). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Checks values against the schemas of an OpenAPI 3.1 document (JSON Schema 2020-12, with
 * `$ref`s to `#/components/schemas/…` resolved inside it), formats included: `date-time` is
 * checked, not just named. Answers the problems ajv finds (none: []).
 */
export function documentChecker(document: Json): (schema: Json, value: unknown) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat("date-time", { type: "string", validate: (text: string) => DATE_TIME.test(text) && !Number.isNaN(Date.parse(text)) });
  ajv.addSchema({ $id: DOCUMENT_ID, components: document.components }, DOCUMENT_ID);
  return (schema, value) => {
    const validate = ajv.compile(rebased(schema));
    return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message ?? ""} (${error.schemaPath})`);
  };
}

/** The schema with its document-local `$ref`s pointing into the document added under DOCUMENT_ID. */
function rebased(schema: Json): Json {
  return JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', `"$ref":"${DOCUMENT_ID}#/`)) as Json;
}

/** The schema of an operation's answer of a status (application/json). */
export function answerSchema(document: Json, path: string, method: string, status: number): Json {
  const answer = document.paths?.[path]?.[method.toLowerCase()]?.responses?.[String(status)];
  const schema = answer?.content?.["application/json"]?.schema;
  if (!schema) throw new Error(`the document has no JSON answer ${status} of ${method} ${path}`);
  return schema as Json;
}
