import ts from "typescript";
import { ApiError } from "../http/errors";
import { findDefaultExport } from "./findDefaultExport";
import { inferTypeFromDefault, literalToJson } from "./literalToJson";
import { acceptsUndefined } from "./literalTypes";
import { objectMembers } from "./objectMembers";
import { readingCode } from "./readingCode";

/** One call parameter of the user's default-exported function. */
export interface ParameterInfo {
  name: string;
  /** The declared type as written (whitespace collapsed), or inferred from a literal default, or "unknown". */
  type: string;
  /** JSON text of the default value; absent when there is none or it is not a JSON literal. */
  default?: string;
  required: boolean;
  /** Why (part of) this parameter's JSON Schema is `{}`, any value (a type that JSON Schema cannot express). */
  schema_note?: string;
}

/** Largest accepted module source, in UTF-8 bytes. */
export const MAX_CODE_BYTES = 262144;

function reject(message: string, details: Record<string, unknown> = {}): never {
  throw new ApiError("invalid_code", message, details);
}

export function checkCodeSize(source: string): void {
  const bytes = Buffer.byteLength(source, "utf8");
  if (bytes > MAX_CODE_BYTES) {
    reject(`Code is ${bytes} bytes; the limit is ${MAX_CODE_BYTES}`, { bytes, limit: MAX_CODE_BYTES });
  }
}

/** Parses the module (syntax only) and rejects it on the first syntax error. */
export function parseModule(source: string): ts.SourceFile {
  // Always parsed as TypeScript: plain JavaScript modules parse the same way.
  const sf = ts.createSourceFile("index.ts", source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  // parseDiagnostics is not in the public typings, but it is the parser's own error list and
  // needs no Program or type checker (ts.transpileModule's diagnostics build a whole Program).
  const diagnostics = (sf as unknown as { parseDiagnostics?: readonly ts.DiagnosticWithLocation[] }).parseDiagnostics;
  const first = diagnostics?.[0];
  if (first) {
    const position = sf.getLineAndCharacterOfPosition(first.start);
    const line = position.line + 1;
    const column = position.character + 1;
    const text = ts.flattenDiagnosticMessageText(first.messageText, "\n");
    reject(`Syntax error at line ${line}:${column}: ${text}`, { line, column });
  }
  return sf;
}

function typeText(node: ts.TypeNode, sf: ts.SourceFile): string {
  return node.getText(sf).replace(/\s+/g, " ");
}

interface Declared {
  name: string;
  typeNode: ts.TypeNode | undefined;
  /** Marked `?`, typed `… | undefined`, or made optional by its object type (`Partial<…>`). */
  optional: boolean;
  initializer: ts.Expression | undefined;
}

function toInfo(d: Declared, sf: ts.SourceFile): ParameterInfo {
  const info: ParameterInfo = {
    name: d.name,
    type: d.typeNode ? typeText(d.typeNode, sf) : d.initializer ? inferTypeFromDefault(d.initializer) : "unknown",
    required: !d.initializer && !d.optional,
  };
  // A default that is not a JSON literal (Date.now(), an identifier, `undefined`, ...) still makes
  // the parameter optional, but there is no value to report, so `default` stays absent.
  const json = d.initializer ? literalToJson(d.initializer) : undefined;
  if (json !== undefined) info.default = json;
  return info;
}

function propertyNameText(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

function fromObjectPattern(param: ts.ParameterDeclaration, pattern: ts.ObjectBindingPattern, sf: ts.SourceFile) {
  const members = objectMembers(param.type, sf);
  // When the whole object may be omitted (`= {}` or `?`), none of its properties is required.
  const wholeOptional = !!param.initializer || !!param.questionToken;
  return pattern.elements.map((element): ParameterInfo => {
    const bindingText = element.name.getText(sf);
    if (element.dotDotDotToken) {
      reject(`The destructured parameter has a rest element \`...${bindingText}\`; list each property instead`);
    }
    const nameNode = element.propertyName ?? element.name;
    const name = ts.isIdentifier(nameNode) ? nameNode.text : ts.isPropertyName(nameNode) ? propertyNameText(nameNode) : undefined;
    if (name === undefined) {
      reject(`The destructured parameter has a computed property name \`${nameNode.getText(sf)}\`; use plain names`);
    }
    if (!ts.isIdentifier(element.name)) {
      reject(`The destructured property \`${name}\` is itself destructured; nested patterns are not supported`);
    }
    // A property the type does not show (an imported type's) is taken as required, unless the
    // type makes whatever it does not show optional (`Partial<Imported>`).
    const member = members.byName.get(name);
    return toInfo(
      {
        name,
        typeNode: member?.signature.type,
        optional: wholeOptional || (member ? member.optional : members.rest === "optional"),
        initializer: element.initializer,
      },
      sf,
    );
  });
}

/**
 * How the runner passes parameters: "positional" calls `fn(a, b)` in declaration order,
 * "object" calls `fn({ a, b })` (the single destructured-object form).
 */
export type ParameterStyle = "positional" | "object";

/** The default export's call parameters and the form in which it takes them. */
export interface Signature {
  variables: ParameterInfo[];
  style: ParameterStyle;
}

/**
 * The call parameters of a module's default-exported function, either positional
 * (`run(url: string, max = 10)`) or one destructured object (`run({ url, max = 10 }: {...})`).
 * Syntax only: no type checker runs. Throws ApiError("invalid_code") when the module is too
 * large, does not parse, has no function as default export, or uses another parameter form.
 */
export function extractParameters(source: string): ParameterInfo[] {
  return extractSignature(source).variables;
}

/**
 * Like extractParameters, and also says the parameter style: a single destructured object
 * parameter is "object", anything else (including no parameters) is "positional".
 */
export function extractSignature(source: string): Signature {
  checkCodeSize(source);
  return readingCode(() => signatureOf(parseModule(source)));
}

/** extractSignature of a module parsed already (parseModule). */
export function signatureOf(sf: ts.SourceFile): Signature {
  const fn = findDefaultExport(sf);
  // A TypeScript `this` parameter is erased at runtime; it is not a call parameter.
  const params = fn.parameters.filter((p) => !(ts.isIdentifier(p.name) && p.name.text === "this"));

  params.forEach((param, index) => {
    if (param.dotDotDotToken) {
      reject(`Parameter \`...${param.name.getText(sf)}\` is a rest parameter; declare each parameter by name`);
    }
    if (ts.isArrayBindingPattern(param.name)) {
      reject(`Parameter ${index + 1} uses array destructuring; use named parameters or one destructured object`);
    }
    if (ts.isObjectBindingPattern(param.name) && params.length > 1) {
      reject(
        `Parameter ${index + 1} is a destructured object among ${params.length} parameters; ` +
          "a destructured object must be the only parameter",
      );
    }
  });

  const only = params[0];
  if (only && params.length === 1 && ts.isObjectBindingPattern(only.name)) {
    return { variables: fromObjectPattern(only, only.name, sf), style: "object" };
  }
  const variables = params.map((param) =>
    toInfo(
      {
        name: param.name.getText(sf),
        typeNode: param.type,
        optional: !!param.questionToken || acceptsUndefined(param.type),
        initializer: param.initializer,
      },
      sf,
    ),
  );
  return { variables, style: "positional" };
}
