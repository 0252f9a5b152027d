import { setOwn, type JsonSchema } from "./jsonSchema";

/**
 * How many nodes one function's schemas may hold, counted as their JSON is written out: a
 * schema used in several places (a `Record`'s value, once per key) counts once per place, and an
 * `enum` once per value. Past it, the parameter being described becomes `{}`.
 */
export const MAX_SCHEMA_NODES = 5000;

/** Thrown by SchemaBudget.spend past MAX_SCHEMA_NODES; TypeToSchema.convert turns it into `{}`. */
export class SchemaBudgetExceeded extends Error {
  constructor() {
    super(`more than ${MAX_SCHEMA_NODES} schema nodes`);
  }
}

/**
 * The node count of one function's schemas (see MAX_SCHEMA_NODES). Every schema it hands out
 * is a tree of its own (no object is shared by two places), so the count is the size of the
 * JSON written, and nothing downstream can expand what was not counted.
 */
export class SchemaBudget {
  private spent = 0;

  /** True once spend has thrown: whatever is described next is `{}` at once. */
  get exhausted(): boolean {
    return this.spent > MAX_SCHEMA_NODES;
  }

  /** Counts `nodes` more; throws SchemaBudgetExceeded past the cap. */
  spend(nodes: number): void {
    this.spent += nodes;
    if (this.spent > MAX_SCHEMA_NODES) throw new SchemaBudgetExceeded();
  }

  /** A deep copy of `schema` (a tree this budget built, so its depth is bounded), each node counted. */
  copy(schema: JsonSchema): JsonSchema {
    this.spend(1 + (schema.enum?.length ?? 0));
    const copy: JsonSchema = { ...schema };
    if (schema.properties) {
      const properties: Record<string, JsonSchema> = {};
      for (const [name, value] of Object.entries(schema.properties)) setOwn(properties, name, this.copy(value));
      copy.properties = properties;
    }
    if (schema.items) copy.items = this.copy(schema.items);
    if (schema.additionalProperties) copy.additionalProperties = this.copy(schema.additionalProperties);
    if (schema.not) copy.not = this.copy(schema.not);
    if (schema.prefixItems) copy.prefixItems = schema.prefixItems.map((item) => this.copy(item));
    if (schema.anyOf) copy.anyOf = schema.anyOf.map((member) => this.copy(member));
    return copy;
  }
}
