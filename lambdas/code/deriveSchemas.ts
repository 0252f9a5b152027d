import ts from "typescript";
import { ApiError } from "../http/errors";
import type { ParameterInfo, Signature } from "./extractParameters";
import { findDefaultExport, type ExportedFunction } from "./findDefaultExport";
import { functionParamTags, parameterHints, propertyHints } from "./jsDocHints";
import { inferTypeFromDefault } from "./literalToJson";
import { inputSchema, setOwn, type InputSchema, type JsonSchema } from "./jsonSchema";
import { TypeToSchema } from "./typeToSchema";

/** Largest input (or output) schema kept, in bytes of JSON; past it, the largest parameters' schemas become `{}`. */
export const MAX_SCHEMA_BYTES = 64 * 1024;

export interface DerivedSchemas {
  /** The call parameters as one object schema (draft 2020-12). */
  input_schema: InputSchema;
  /** The declared return type's schema (`Promise<T>`: T's); `{}` when undeclared or not expressible. */
  output_schema: JsonSchema;
  /** The parameters with `schema_note` set on those (partly) described as `{}`. */
  variables: ParameterInfo[];
}

/**
 * Derives the JSON Schema of a module's call parameters from their TypeScript types (syntax
 * only, see TypeToSchema), with JSDoc descriptions, `@integer` hints and literal defaults.
 * `signature` is signatureOf(sf): the parameters, and whether they are positional or the
 * properties of one destructured object.
 */
export function deriveSchemas(sf: ts.SourceFile, signature: Signature): DerivedSchemas {
  const fn = findDefaultExport(sf);
  const params = fn.parameters.filter((p) => !(ts.isIdentifier(p.name) && p.name.text === "this"));
  const converter = new TypeToSchema(sf, functionParamTags(fn));
  const schemas =
    signature.style === "object" && params[0]
      ? objectStyle(converter, params[0], signature.variables, functionParamTags(fn))
      : params.map((param, i) => positional(converter, param, signature.variables[i]?.name ?? `arg${i}`));
  const properties: Record<string, JsonSchema> = {};
  const notes = new Map<string, string[]>();
  signature.variables.forEach((variable, i) => {
    const schema = { ...(schemas[i] ?? {}) }; // a copy: converted schemas may be shared (Record<"a" | "b", T>)
    if (variable.default !== undefined) schema.default = JSON.parse(variable.default) as unknown;
    setOwn(properties, variable.name, schema);
  });
  const names = new Set(signature.variables.map((v) => v.name));
  for (const note of converter.notes) {
    const owner = noteOwner(note, names);
    if (owner === undefined) continue;
    const lines = notes.get(owner);
    if (lines) lines.push(note);
    else notes.set(owner, [note]);
  }
  if (!fitSize(properties, notes)) {
    throw new ApiError(
      "invalid_code",
      `The default export's ${signature.variables.length} parameters do not fit a ${MAX_SCHEMA_BYTES}-byte schema even when each accepts any value; take fewer parameters (one object parameter, for example)`,
      { parameters: signature.variables.length, limit: MAX_SCHEMA_BYTES },
    );
  }
  const variables = signature.variables.map((variable) => {
    const lines = notes.get(variable.name);
    return lines ? { ...variable, schema_note: lines.join("; ") } : variable;
  });
  const required = signature.variables.filter((v) => v.required).map((v) => v.name);
  return { input_schema: inputSchema(properties, required), output_schema: outputSchema(sf, fn), variables };
}

/**
 * The parameter a note is about: a note names its place first (`url: …`, `opts.page: …`,
 * `tags[]: …`), so its owner is the shortest of `names` that it starts with, followed by one of
 * `:`, `.`, `[` or a space. Found by looking up each such prefix (never every name per note).
 */
function noteOwner(note: string, names: ReadonlySet<string>): string | undefined {
  for (let i = 0; i < note.length; i++) {
    if (!":.[ ".includes(note.charAt(i))) continue;
    const name = note.slice(0, i);
    if (names.has(name)) return name;
  }
  return undefined;
}

function positional(converter: TypeToSchema, param: ts.ParameterDeclaration, name: string): JsonSchema {
  const hints = parameterHints(param);
  // Without a declared type, ParameterInfo says `unknown` (or `unknown[]` for an array default):
  // the notes say so too, as they do for code that declares those types (the CLI's bundles do).
  const schema = param.type
    ? converter.convert(param.type, name, hints.integer)
    : fromDefault(converter, name, param.initializer) ?? converter.anyValue(name, "of type `unknown`");
  if (hints.description !== undefined) schema.description = hints.description;
  return schema;
}

/**
 * The destructured object's properties, each from its member of the declared type (what
 * TypeToSchema makes of it: a literal, local interfaces and aliases, intersections, `Partial` …).
 * Which are required, signatureOf decided from the same type (see objectMembers).
 */
function objectStyle(
  converter: TypeToSchema,
  param: ts.ParameterDeclaration,
  variables: ParameterInfo[],
  paramTags: readonly ts.JSDocParameterTag[],
): JsonSchema[] {
  const whole = param.type ? converter.convert(param.type, "") : undefined;
  const wholeNote = converter.notes.find((note) => note.startsWith(": "));
  if (wholeNote) converter.notes.splice(converter.notes.indexOf(wholeNote), 1);
  const pattern = param.name as ts.ObjectBindingPattern;
  return variables.map((variable) => {
    const member = whole?.properties && Object.hasOwn(whole.properties, variable.name) ? whole.properties[variable.name] : undefined;
    if (member) return member;
    const element = pattern.elements.find((e) => (e.propertyName ?? e.name).getText() === variable.name);
    const inferred = param.type ? undefined : fromDefault(converter, variable.name, element?.initializer);
    const why = wholeNote
      ? wholeNote.slice(2).replace(/; any value is accepted$/, "")
      : param.type
        ? "not a member of the declared object type"
        : "of type `unknown`";
    const schema = inferred ?? converter.anyValue(variable.name, why);
    const { description } = propertyHints(undefined, variable.name, paramTags);
    return description === undefined ? schema : { ...schema, description };
  });
}

/** The schema of an undeclared parameter, from the type its literal default gives it (inferTypeFromDefault). */
function fromDefault(converter: TypeToSchema, name: string, initializer: ts.Expression | undefined): JsonSchema | undefined {
  if (!initializer) return undefined;
  const type = inferTypeFromDefault(initializer);
  if (type === "number" || type === "string" || type === "boolean") return { type };
  if (type === "unknown[]") {
    converter.anyValue(`${name}[]`, "of type `unknown`");
    return { type: "array" };
  }
  return undefined;
}

/** The declared return type, without its Promise; `{}` when there is none or it has no JSON form. */
function outputSchema(sf: ts.SourceFile, fn: ExportedFunction): JsonSchema {
  let node = fn.type;
  if (!node) return {};
  if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && node.typeName.text === "Promise" && node.typeArguments?.length === 1) {
    node = node.typeArguments[0];
  }
  if (!node) return {};
  if (node.kind === ts.SyntaxKind.VoidKeyword || node.kind === ts.SyntaxKind.UndefinedKeyword) return { type: "null" };
  const schema = new TypeToSchema(sf).convert(node, "result");
  return JSON.stringify(schema).length > MAX_SCHEMA_BYTES ? {} : schema;
}

/**
 * Replaces the largest parameter schemas by `{}` (with a note) until the whole fits
 * MAX_SCHEMA_BYTES; false when it does not fit even then (the parameters' names alone are too
 * long). Linear after one sort: each schema's size is measured once, and replacing one by `{}`
 * (2 bytes) shrinks the whole by exactly its size less 2 (its name stays).
 */
function fitSize(properties: Record<string, JsonSchema>, notes: Map<string, string[]>): boolean {
  let total = Buffer.byteLength(JSON.stringify(properties));
  if (total <= MAX_SCHEMA_BYTES) return true;
  const sizes = Object.entries(properties).map(([name, schema]) => ({ name, bytes: Buffer.byteLength(JSON.stringify(schema)) }));
  sizes.sort((a, b) => b.bytes - a.bytes);
  for (const { name, bytes } of sizes) {
    if (total <= MAX_SCHEMA_BYTES || bytes <= 2) break;
    setOwn(properties, name, {});
    total -= bytes - 2;
    notes.set(name, [`${name}: its schema is larger than ${MAX_SCHEMA_BYTES} bytes of JSON; any value is accepted`]);
  }
  return total <= MAX_SCHEMA_BYTES;
}
