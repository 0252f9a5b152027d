import type * as AjvModule from "ajv/dist/2020";
import type { default as Ajv2020, ErrorObject, ValidateFunction } from "ajv/dist/2020";
import { getOwn, type JsonSchema } from "../code/jsonSchema";

/** How many compiled parameter schemas a checker keeps (least recently used go first). */
const CACHE_ENTRIES = 500;

/** Where and how a value does not fit its schema: the first problem ajv reports. */
export interface SchemaMismatch {
  problem: "wrong_type" | "required" | "unknown";
  /** The JSON Pointer segments, from the value's root to the problem (a missing or unknown property's name last). */
  segments: string[];
  /** The schema the value at `segments` was checked against (a missing property's own schema). */
  schema: JsonSchema;
  /** The value at `segments` (undefined for a missing property). */
  data: unknown;
}

/**
 * Checks values against JSON Schemas (draft 2020-12) with ajv, compiling each distinct schema
 * once. The schemas are browserfn's own derivations (jsonSchema.ts's keywords only: no
 * `pattern`, `$ref` or formats), so compiling them is bounded by their size, which deploy caps.
 */
export class SchemaChecker {
  private readonly ajv = newAjv();
  private readonly compiled = new Map<string, { schema: JsonSchema; validate: ValidateFunction }>();

  /** The first place where `value` does not fit `schema`, or undefined when it fits. */
  check(schema: JsonSchema, value: unknown): SchemaMismatch | undefined {
    const validate = this.validator(schema);
    if (validate(value)) return undefined;
    const error = validate.errors?.[validate.errors.length - 1];
    if (!error) return { problem: "wrong_type", segments: [], schema, data: value };
    return toMismatch(error);
  }

  private validator(schema: JsonSchema): ValidateFunction {
    const key = JSON.stringify(schema);
    const hit = this.compiled.get(key);
    if (hit) {
      this.compiled.delete(key);
      this.compiled.set(key, hit);
      return hit.validate;
    }
    // Compiled from a private copy: ajv keeps the object it compiled as its cache key.
    const own = JSON.parse(key) as JsonSchema;
    const validate = this.ajv.compile(own);
    this.compiled.set(key, { schema: own, validate });
    if (this.compiled.size > CACHE_ENTRIES) {
      const [oldestKey, oldest] = this.compiled.entries().next().value as [string, { schema: JsonSchema }];
      this.compiled.delete(oldestKey);
      this.ajv.removeSchema(oldest.schema);
    }
    return validate;
  }
}

let shared: SchemaChecker | undefined;

/** The process's checker (compiled validators are pure), made at its first use. */
export function sharedSchemaChecker(): SchemaChecker {
  return (shared ??= new SchemaChecker());
}

/**
 * ajv, required when the first checker is made (at the first invocation), not at start-up:
 * the service starts without it. A static require, which tsx compiles and esbuild bundles.
 */
function newAjv(): Ajv2020 {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { default: Ajv } = require("ajv/dist/2020") as typeof AjvModule;
  return new Ajv({
    allErrors: false,
    verbose: true, // errors carry the failing schema and value: `expected` and `received` come from them
    strict: false, // annotations (description, default) and every keyword combination are fine
    strictNumbers: true, // NaN and ±Infinity are not numbers
    validateFormats: false,
    logger: false,
  });
}

function toMismatch(error: ErrorObject): SchemaMismatch {
  const segments = error.instancePath === "" ? [] : error.instancePath.slice(1).split("/").map(unescapePointer);
  const parent = (error.parentSchema ?? {}) as JsonSchema;
  if (error.keyword === "required") {
    const name = String((error.params as { missingProperty: string }).missingProperty);
    return { problem: "required", segments: [...segments, name], schema: getOwn(parent.properties, name) ?? {}, data: undefined };
  }
  if (error.keyword === "additionalProperties") {
    const name = String((error.params as { additionalProperty: string }).additionalProperty);
    const data = error.data as Record<string, unknown>;
    return { problem: "unknown", segments: [...segments, name], schema: {}, data: getOwn(data, name) };
  }
  return { problem: "wrong_type", segments, schema: parent, data: error.data };
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}
