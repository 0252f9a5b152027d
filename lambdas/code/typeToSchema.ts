import ts from "typescript";
import { propertyHints } from "./jsDocHints";
import { acceptsAnything, setOwn, type JsonSchema, type LiteralValue, type SchemaType } from "./jsonSchema";
import { acceptsUndefined, isUndefinedType, literalExpressionValue, literalsOf, literalValue } from "./literalTypes";
import { propertyName } from "./objectMembers";
import { everyPropertyRequired, isObjectSchema, mergeObjects } from "./objectSchemas";
import { SchemaBudget, SchemaBudgetExceeded } from "./schemaBudget";

export { MAX_SCHEMA_NODES } from "./schemaBudget";

/** How deeply types may nest (objects in arrays in objects …) before the rest becomes `{}`. */
export const MAX_SCHEMA_DEPTH = 24;

const TOO_LARGE = "the parameter types are too large to describe";

type LocalDeclaration = ts.InterfaceDeclaration | ts.TypeAliasDeclaration | ts.EnumDeclaration;

/**
 * Turns TypeScript type syntax into JSON Schema, by syntax alone (no type checker runs, imports
 * are not resolved). Interfaces, type aliases and enums declared at the top level of the same
 * module are followed; of the global generics, `Array`, `ReadonlyArray`, `Record`, `Readonly`,
 * `Partial` and `Required` are known. What has no JSON Schema form — other generics, imported or
 * global types, mapped, conditional and function types, `any`/`unknown`, recursive types —
 * becomes `{}` (any value), and `notes` says where and why.
 */
export class TypeToSchema {
  /** One line per place that became `{}`: `path: why`. */
  readonly notes: string[] = [];
  private readonly declarations = new Map<string, LocalDeclaration>();
  private readonly resolving = new Set<string>();
  private readonly budget = new SchemaBudget();

  /**
   * @param rootParamTags the function's `@param` tags: they describe the properties of the
   * top-level object type (the destructured parameter's), under `path` "".
   */
  constructor(
    private readonly sf: ts.SourceFile,
    private readonly rootParamTags: readonly ts.JSDocParameterTag[] = [],
  ) {
    for (const statement of sf.statements) {
      if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) || ts.isEnumDeclaration(statement)) {
        // The first declaration wins (interface merging is not followed).
        if (!this.declarations.has(statement.name.text)) this.declarations.set(statement.name.text, statement);
      }
    }
  }

  /**
   * The schema of `node` at `path` (a parameter's name, `opts.url`, `tags[]`); `integer` makes
   * `number` an integer. `{}` as a whole once the function's schemas hold MAX_SCHEMA_NODES nodes.
   */
  convert(node: ts.TypeNode, path: string, integer = false): JsonSchema {
    if (this.budget.exhausted) return this.anyValue(path, TOO_LARGE);
    try {
      return this.schemaOf(node, path, integer, 0);
    } catch (error) {
      if (!(error instanceof SchemaBudgetExceeded)) throw error;
      return this.anyValue(path, TOO_LARGE);
    }
  }

  private schemaOf(node: ts.TypeNode, path: string, integer: boolean, depth: number): JsonSchema {
    this.budget.spend(1);
    if (depth > MAX_SCHEMA_DEPTH) return this.anyValue(path, `types nested more than ${MAX_SCHEMA_DEPTH} levels deep are not described`);
    const next = (child: ts.TypeNode, childPath = path) => this.schemaOf(child, childPath, integer, depth + 1);
    switch (node.kind) {
      case ts.SyntaxKind.StringKeyword:
        return { type: "string" };
      case ts.SyntaxKind.NumberKeyword:
        return { type: integer ? "integer" : "number" };
      case ts.SyntaxKind.BooleanKeyword:
        return { type: "boolean" };
      case ts.SyntaxKind.ObjectKeyword:
        return { type: "object" };
      case ts.SyntaxKind.UndefinedKeyword:
      case ts.SyntaxKind.VoidKeyword:
        return { not: {} }; // only absent: no JSON value is `undefined`
      case ts.SyntaxKind.AnyKeyword:
      case ts.SyntaxKind.UnknownKeyword:
        return this.anyValue(path, `of type \`${this.text(node)}\``);
    }
    if (ts.isParenthesizedTypeNode(node)) return this.schemaOf(node.type, path, integer, depth + 1);
    if (ts.isLiteralTypeNode(node)) {
      const value = literalValue(node);
      if (value === undefined) return this.anyValue(path, `the literal type \`${this.text(node)}\` has no JSON form`);
      return value === null ? { type: "null" } : { const: value };
    }
    if (ts.isTemplateLiteralTypeNode(node)) return { type: "string" };
    if (ts.isUnionTypeNode(node)) return this.union(node, path, integer, depth);
    if (ts.isArrayTypeNode(node)) return arrayOf(next(node.elementType, `${path}[]`));
    if (ts.isTypeOperatorNode(node) && node.operator === ts.SyntaxKind.ReadonlyKeyword) {
      return this.schemaOf(node.type, path, integer, depth + 1);
    }
    if (ts.isTupleTypeNode(node)) return this.tuple(node, path, integer, depth);
    if (ts.isTypeLiteralNode(node)) return this.object(node.members, path, depth);
    if (ts.isIntersectionTypeNode(node)) return this.intersection(node, path, integer, depth);
    if (ts.isTypeReferenceNode(node)) return this.reference(node, path, integer, depth);
    return this.anyValue(path, `${kindName(node)} \`${this.text(node)}\` cannot be expressed in JSON Schema`);
  }

  /** Records that `path` accepts any value, and why. */
  anyValue(path: string, why: string): JsonSchema {
    this.notes.push(`${path}: ${why}; any value is accepted`);
    return {};
  }

  private text(node: ts.Node): string {
    const start = node.getStart(this.sf);
    const text = this.sf.text.slice(start, Math.min(node.end, start + 400)).replace(/\s+/g, " ");
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  }

  private union(node: ts.UnionTypeNode, path: string, integer: boolean, depth: number): JsonSchema {
    const members = node.types.filter((t) => !isUndefinedType(t));
    if (members.length === 0) return { not: {} };
    if (members.length === 1 && members[0]) return this.schemaOf(members[0], path, integer, depth);
    const literals = members.map(literalsOf);
    const hasLiteral = members.some((m) => ts.isLiteralTypeNode(m) && m.literal.kind !== ts.SyntaxKind.NullKeyword);
    if (hasLiteral && literals.every((values): values is LiteralValue[] => values !== undefined)) {
      const values = [...new Set(literals.flat())];
      this.budget.spend(values.length);
      return { enum: values };
    }
    const schemas = members.map((member) => this.schemaOf(member, path, integer, depth + 1));
    if (schemas.some((schema) => Object.keys(schema).length === 0)) return {};
    const types = schemas.flatMap((schema) => (isPlainType(schema) ? [schema.type].flat() : []));
    if (types.length === schemas.length) return { type: mergeTypes(types as SchemaType[]) };
    return { anyOf: schemas };
  }

  private tuple(node: ts.TupleTypeNode, path: string, integer: boolean, depth: number): JsonSchema {
    const prefixItems: JsonSchema[] = [];
    let minItems = 0;
    let rest: JsonSchema | false = false;
    for (const [i, raw] of node.elements.entries()) {
      const element = ts.isNamedTupleMember(raw) ? raw.type : raw;
      const optional = ts.isOptionalTypeNode(element) || (ts.isNamedTupleMember(raw) && !!raw.questionToken);
      const isRest = ts.isRestTypeNode(element) || (ts.isNamedTupleMember(raw) && !!raw.dotDotDotToken);
      const inner = ts.isOptionalTypeNode(element) || ts.isRestTypeNode(element) ? element.type : element;
      if (isRest) {
        const items = this.schemaOf(inner, `${path}[]`, integer, depth + 1);
        rest = items.type === "array" && items.items !== undefined ? items.items : {};
        break;
      }
      prefixItems.push(this.schemaOf(inner, `${path}[${i}]`, integer, depth + 1));
      if (!optional) minItems = prefixItems.length;
    }
    const schema: JsonSchema = { type: "array", prefixItems, items: rest };
    if (minItems > 0) schema.minItems = minItems;
    if (rest === false) schema.maxItems = prefixItems.length;
    return schema;
  }

  /** An object type's members; closed (`additionalProperties: false`) unless it has an index signature or unknown members. */
  object(members: readonly ts.TypeElement[], path: string, depth: number): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    let additional: JsonSchema | false = false;
    for (const member of members) {
      if (ts.isIndexSignatureDeclaration(member)) {
        additional = member.type ? this.schemaOf(member.type, `${path}[key]`, false, depth + 1) : {};
        continue;
      }
      const name = member.name ? propertyName(member.name) : undefined;
      if (!ts.isPropertySignature(member) || name === undefined) {
        const memberName = member.name ? this.text(member.name) : "(member)";
        this.anyValue(path === "" ? memberName : `${path}.${memberName}`, "methods and computed names cannot be expressed");
        additional = {};
        continue;
      }
      const hints = propertyHints(member, name, path === "" ? this.rootParamTags : []);
      const memberPath = path === "" ? name : `${path}.${name}`;
      const schema = member.type ? this.schemaOf(member.type, memberPath, hints.integer, depth + 1) : this.anyValue(memberPath, "no declared type");
      if (hints.description !== undefined) schema.description = hints.description;
      setOwn(properties, name, schema);
      if (!member.questionToken && !acceptsUndefined(member.type)) required.push(name);
    }
    const schema: JsonSchema = { type: "object", properties, additionalProperties: additional };
    if (required.length > 0) schema.required = required;
    return schema;
  }

  private intersection(node: ts.IntersectionTypeNode, path: string, integer: boolean, depth: number): JsonSchema {
    const parts = node.types.map((t) => this.schemaOf(t, path, integer, depth + 1));
    if (!parts.every(isObjectSchema)) {
      return this.anyValue(path, `the intersection \`${this.text(node)}\` is only described when every part is an object type`);
    }
    return mergeObjects(parts);
  }

  /** `Partial<T>` or `Required<T>` of an object type; T's own note when T is not described. */
  private optionality(node: ts.TypeReferenceNode, inner: ts.TypeNode, path: string, integer: boolean, depth: number): JsonSchema {
    const schema = this.schemaOf(inner, path, integer, depth + 1);
    const required = ts.isIdentifier(node.typeName) && node.typeName.text === "Required";
    if (isObjectSchema(schema)) return everyPropertyRequired(schema, required);
    if (acceptsAnything(schema)) return schema;
    return this.anyValue(path, `\`${this.text(node)}\` is described only for object types`);
  }

  private reference(node: ts.TypeReferenceNode, path: string, integer: boolean, depth: number): JsonSchema {
    if (!ts.isIdentifier(node.typeName)) {
      return this.anyValue(path, `\`${this.text(node)}\` is not declared in this module`);
    }
    const name = node.typeName.text;
    const args = node.typeArguments ?? [];
    const [first, second] = args;
    if ((name === "Array" || name === "ReadonlyArray") && args.length === 1 && first) {
      return arrayOf(this.schemaOf(first, `${path}[]`, integer, depth + 1));
    }
    if (name === "Readonly" && args.length === 1 && first) return this.schemaOf(first, path, integer, depth + 1);
    if ((name === "Partial" || name === "Required") && args.length === 1 && first) return this.optionality(node, first, path, integer, depth);
    if (name === "Record" && args.length === 2 && first && second) return this.record(first, second, path, integer, depth);
    if (!this.declarations.has(name)) {
      return this.anyValue(path, `\`${name}\` is not declared in this module (imported and global types are not followed)`);
    }
    if (args.length > 0) return this.anyValue(path, `the generic type \`${this.text(node)}\` cannot be expressed`);
    return this.declared(name, path, integer, depth);
  }

  /** The schema of a type declared in this module, by name (`{}` with a note for generic and recursive ones). */
  private declared(name: string, path: string, integer: boolean, depth: number): JsonSchema {
    const declaration = this.declarations.get(name);
    if (!declaration) return this.anyValue(path, `\`${name}\` is not declared in this module`);
    if (!ts.isEnumDeclaration(declaration) && declaration.typeParameters) {
      return this.anyValue(path, `the generic type \`${name}\` cannot be expressed`);
    }
    if (this.resolving.has(name)) return this.anyValue(path, `the recursive type \`${name}\` is described only to its first level`);
    this.resolving.add(name);
    try {
      if (ts.isEnumDeclaration(declaration)) return this.enumeration(declaration, path);
      if (ts.isTypeAliasDeclaration(declaration)) return this.schemaOf(declaration.type, path, integer, depth + 1);
      return this.interface(declaration, path, depth);
    } finally {
      this.resolving.delete(name);
    }
  }

  private record(key: ts.TypeNode, value: ts.TypeNode, path: string, integer: boolean, depth: number): JsonSchema {
    const values = this.schemaOf(value, `${path}[key]`, integer, depth + 1);
    if (key.kind === ts.SyntaxKind.StringKeyword) return { type: "object", additionalProperties: values };
    const names = literalsOf(key);
    if (!names?.every((n) => typeof n === "string")) {
      return this.anyValue(path, `\`Record\` with keys \`${this.text(key)}\` cannot be expressed`);
    }
    // Each key gets a copy of its own, counted: 100 keys of 100 keys of … expand as they would be written.
    const properties: Record<string, JsonSchema> = {};
    names.forEach((name, i) => setOwn(properties, name as string, i === 0 ? values : this.budget.copy(values)));
    return { type: "object", properties, required: names as string[], additionalProperties: false };
  }

  private interface(declaration: ts.InterfaceDeclaration, path: string, depth: number): JsonSchema {
    const inherited: JsonSchema[] = [];
    let open = false;
    for (const clause of declaration.heritageClauses ?? []) {
      for (const base of clause.types) {
        const local = ts.isIdentifier(base.expression) && !base.typeArguments && this.declarations.has(base.expression.text);
        const schema = local ? this.declared(base.expression.getText(this.sf), path, false, depth + 1) : undefined;
        if (schema && isObjectSchema(schema)) inherited.push(schema);
        else {
          if (!schema) this.notes.push(`${path}: the base type \`${this.text(base)}\` is not declared in this module; its members are not checked`);
          open = true;
        }
      }
    }
    const own = this.object(declaration.members, path, depth);
    return inherited.length === 0 && !open ? own : mergeObjects([...inherited, own], open);
  }

  private enumeration(declaration: ts.EnumDeclaration, path: string): JsonSchema {
    const values: (string | number)[] = [];
    let next = 0;
    for (const member of declaration.members) {
      const init = member.initializer;
      if (!init) {
        values.push(next++);
        continue;
      }
      const value = literalExpressionValue(init);
      if (typeof value === "string") values.push(value);
      else if (typeof value === "number") {
        values.push(value);
        next = value + 1;
      } else return this.anyValue(path, `the enum \`${declaration.name.text}\` has computed members`);
    }
    this.budget.spend(values.length);
    return { enum: values };
  }
}

function arrayOf(items: JsonSchema): JsonSchema {
  return Object.keys(items).length === 0 ? { type: "array" } : { type: "array", items };
}

function isPlainType(schema: JsonSchema): schema is JsonSchema & { type: SchemaType | SchemaType[] } {
  return schema.type !== undefined && Object.keys(schema).length === 1;
}

function mergeTypes(types: SchemaType[]): SchemaType | SchemaType[] {
  const unique = [...new Set(types)].filter((t, _, all) => !(t === "integer" && all.includes("number")));
  return unique.length === 1 ? (unique[0] as SchemaType) : unique;
}

function kindName(node: ts.TypeNode): string {
  if (ts.isFunctionTypeNode(node) || ts.isConstructorTypeNode(node)) return "the function type";
  if (ts.isConditionalTypeNode(node)) return "the conditional type";
  if (ts.isMappedTypeNode(node)) return "the mapped type";
  if (ts.isTypeQueryNode(node)) return "the typeof type";
  if (ts.isIndexedAccessTypeNode(node)) return "the indexed access type";
  if (ts.isTypeOperatorNode(node)) return "the type operator";
  return "the type";
}
