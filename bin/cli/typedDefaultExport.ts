import ts from "typescript";
import { MAX_CODE_BYTES, type ParameterInfo, type Signature, extractSignature, parseModule } from "../../lambdas/code/extractParameters";
import { type ExportedFunction, findDefaultExport } from "../../lambdas/code/findDefaultExport";
import { CliError } from "./args";

/**
 * Makes esbuild's bundle of an automation read, to the service, as the entry file does.
 *
 * The service reads the call parameters (names, declared types, defaults) from the source of the
 * default export. A minified JavaScript bundle has lost them all: `async function C(e,r=3)`. So
 * the bundle's `export { C as default }` is replaced by a function that declares the parameters
 * as the service read them from the entry file, and calls C with the same arguments (the
 * parameter list is written from the service's own reading, and the result is read back to
 * check that the service sees exactly the same parameters). Import declarations move to the
 * top: ES imports are hoisted, while the CommonJS the service compiles them to requires in place.
 *
 * `moved.offset` is set to where a character of the bundle (by its offset) is in the result;
 * undefined for one the result does not keep (a moved import, the export clause): what a
 * source map of the bundle needs to map the result.
 *
 * Throws the service's ApiError (invalid_code) when the entry file itself is one the service
 * refuses, as the service would.
 */
export function typedDefaultExport(bundle: string, entrySource: string, entryName: string, moved: { offset?: (at: number) => number | undefined } = {}): string {
  const signature = extractSignature(entrySource);
  const entry = parseModule(entrySource);
  const fn = findDefaultExport(entry);
  const isAsync = (ts.canHaveModifiers(fn) ? (ts.getModifiers(fn) ?? []) : []).some((m) => m.kind === ts.SyntaxKind.AsyncKeyword);

  const text = bundle.replace(/^#![^\n]*/, ""); // esbuild keeps the entry's hashbang; the module is not a script
  const sf = ts.createSourceFile("bundle.js", text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const imports: string[] = [];
  const edits: { start: number; end: number; text: string }[] = [];
  let target: string | undefined;
  for (const statement of sf.statements) {
    if (ts.isImportDeclaration(statement)) {
      imports.push(statement.getText(sf));
      edits.push({ start: statement.getStart(sf), end: statement.getEnd(), text: "" });
    } else if (ts.isExportDeclaration(statement) && !statement.moduleSpecifier && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      const elements = statement.exportClause.elements;
      const byDefault = elements.find((element) => element.name.text === "default");
      if (!byDefault) continue;
      target = (byDefault.propertyName ?? byDefault.name).text;
      const others = elements.filter((element) => element !== byDefault).map((element) => element.getText(sf));
      edits.push({ start: statement.getStart(sf), end: statement.getEnd(), text: others.length > 0 ? `export{${others.join(",")}};` : "" });
    }
  }
  if (target === undefined) throw new CliError(`Bundling ${entryName} lost its default export (esbuild's output has no \`export { … as default }\`)`, 2);
  let body = text;
  for (const edit of edits.reverse()) body = body.slice(0, edit.start) + edit.text + body.slice(edit.end);

  // The function's own name when it has one that the bundle does not use (stack traces show it).
  const name = functionName(fn);
  const named = name !== undefined && !new RegExp(`(^|[^\\w$.])${name.replace(/\$/g, "\\$")}($|[^\\w$])`).test(body) ? ` ${name}` : "";
  const wrapper =
    schemaSources(entry, fn) +
    `export default ${isAsync ? "async " : ""}function${named}(${parameterList(signature)}) {\n` +
    `  return ${target}.apply(this, arguments);\n` +
    `}\n`;
  const trimmed = body.trim();
  const prefix = imports.length > 0 ? `${imports.join("\n")}\n` : "";
  const code = `${prefix}${trimmed}\n${wrapper}`;
  const leading = body.length - body.trimStart().length;
  const sorted = [...edits].reverse(); // in text order again
  const hashbang = bundle.length - text.length;
  moved.offset = (inBundle) => {
    const at = inBundle - hashbang;
    if (at < 0) return undefined;
    let delta = 0;
    for (const edit of sorted) {
      if (at < edit.start) break;
      if (at < edit.end) return undefined;
      delta += edit.text.length - (edit.end - edit.start);
    }
    const inBody = at + delta - leading;
    return inBody < 0 || inBody >= trimmed.length ? undefined : prefix.length + inBody;
  };
  // Over the limit it is refused before it is sent (prepareCode), and the service's reading would refuse it for its size.
  if (Buffer.byteLength(code) <= MAX_CODE_BYTES && !sameSignature(extractSignature(code), signature)) {
    throw new CliError(`Bundling ${entryName} would change the parameters the service reads from it; deploy it without imports to bundle, and report this`, 2);
  }
  return code;
}

/**
 * What the service's input schema is derived from besides the parameter list, copied from the
 * entry file: its top-level interfaces and type aliases (the bundle has lost them; they are
 * types only, so they add no code and name no value), and the exported function's JSDoc (the
 * parameters' descriptions and `@param {integer}` hints).
 */
function schemaSources(entry: ts.SourceFile, fn: ExportedFunction): string {
  const types = entry.statements.filter((s) => ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s));
  const docs = ts.getJSDocCommentsAndTags(fn).filter(ts.isJSDoc);
  const texts = [...types.map((s) => s.getFullText(entry).trim()), ...docs.map((doc) => doc.getText(entry))];
  return texts.length > 0 ? `${texts.join("\n")}\n` : "";
}

function functionName(fn: ExportedFunction): string | undefined {
  if (ts.isFunctionDeclaration(fn) && fn.name) return fn.name.text;
  const parent = fn.parent;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isFunctionExpression(fn) && fn.name) return fn.name.text;
  return undefined;
}

/** A name as written in an object pattern or a type literal. */
function propertyName(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

/** A declaration that reads back as `info`: the declared type, the default when it is a literal, `?` when optional. */
function positional(info: ParameterInfo): string {
  if (info.required) return `${info.name}: ${info.type}`;
  return info.default !== undefined ? `${info.name}: ${info.type} = ${info.default}` : `${info.name}?: ${info.type}`;
}

/** The parameter list that the service reads as `signature`. */
export function parameterList(signature: Signature): string {
  if (signature.style === "positional") return signature.variables.map(positional).join(", ");
  const elements = signature.variables.map((info, i) => {
    const binding = /^[A-Za-z_$][\w$]*$/.test(info.name) && ts.identifierToKeywordKind(ts.factory.createIdentifier(info.name)) === undefined ? info.name : `${propertyName(info.name)}: _${i}`;
    return info.default !== undefined ? `${binding} = ${info.default}` : binding;
  });
  const members = signature.variables.map((info) => `${propertyName(info.name)}${info.required ? "" : "?"}: ${info.type}`);
  return `{ ${elements.join(", ")} }: { ${members.join("; ")} }`;
}

function sameSignature(a: Signature, b: Signature): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
