import ts from "typescript";
import { unwrapExpression } from "./literalToJson";
import { MAX_WARNINGS, type Warning } from "./warnings";

/**
 * Calls that give no promise, by the name of the method called: built-in array, string and
 * number methods, and puppeteer's synchronous getters (`page.url()`, `response.status()`, …).
 * A call of any other name may give one.
 */
const SYNC_METHODS = new Set([
  // Array, String, Number, Date, JSON
  "at", "charAt", "concat", "endsWith", "entries", "every", "filter", "find", "findIndex", "findLast",
  "findLastIndex", "flat", "flatMap", "forEach", "includes", "indexOf", "join", "keys", "lastIndexOf",
  "localeCompare", "map", "match", "matchAll", "normalize", "padEnd", "padStart", "parse", "reduce",
  "reduceRight", "repeat", "replace", "replaceAll", "reverse", "slice", "some", "sort", "split", "startsWith",
  "stringify", "substring", "toFixed", "toISOString", "toJSON", "toLocaleString", "toLowerCase", "toReversed",
  "toSorted", "toString", "toUpperCase", "trim", "trimEnd", "trimStart", "values",
  // puppeteer-core
  "browser", "browserContext", "frames", "headers", "isClosed", "mainFrame", "ok", "status", "statusText",
  "target", "url", "viewport", "workers",
]);

/** Functions and namespaces whose calls give no promise: `String(x)`, `Math.max(…)`, `Object.keys(…)`. */
const SYNC_GLOBALS = new Set([
  "Array", "BigInt", "Boolean", "Buffer", "Date", "JSON", "Math", "Number", "Object", "Reflect", "RegExp", "String",
  "Symbol", "URL", "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "isFinite", "isNaN",
  "parseFloat", "parseInt", "structuredClone",
]);

/** The leftmost name of a callee: `JSON` in `JSON.stringify`, `String` in `String`. */
function rootName(node: ts.Expression): string | undefined {
  if (ts.isIdentifier(node)) return node.text;
  if (ts.isPropertyAccessExpression(node)) return rootName(node.expression);
  return undefined;
}

/** A call whose value may be a promise, judged by syntax alone (no type checker runs at deploy). */
function mayBePromise(expression: ts.Expression): boolean {
  const node = unwrapExpression(ts.isNonNullExpression(expression) ? expression.expression : expression);
  if (ts.isConditionalExpression(node)) return mayBePromise(node.whenTrue) || mayBePromise(node.whenFalse);
  if (ts.isNewExpression(node)) return ts.isIdentifier(node.expression) && node.expression.text === "Promise";
  if (!ts.isCallExpression(node)) return false;
  const callee = node.expression;
  if (ts.isIdentifier(callee)) return !SYNC_GLOBALS.has(callee.text);
  if (ts.isPropertyAccessExpression(callee)) {
    const root = rootName(callee);
    return !(SYNC_METHODS.has(callee.name.text) || (root !== undefined && SYNC_GLOBALS.has(root) && ts.isIdentifier(callee.expression)));
  }
  return true;
}

function isAwaitUsing(list: ts.VariableDeclarationList): boolean {
  return (list.flags & ts.NodeFlags.BlockScoped) === ts.NodeFlags.AwaitUsing;
}

function declaredName(list: ts.VariableDeclarationList, sf: ts.SourceFile): string | undefined {
  const last = list.declarations[list.declarations.length - 1];
  return last?.name.getText(sf);
}

/**
 * The name of the innermost `await using` declaration that is in force at `node` within its own
 * function: declared earlier in an enclosing block, or as the variable of an enclosing
 * `for (await using … of …)`. A function boundary ends the search (its returns are its own).
 */
function awaitUsingInScope(node: ts.Node, sf: ts.SourceFile): string | undefined {
  let child = node;
  for (let parent = node.parent; parent && !ts.isFunctionLike(parent) && !ts.isClassStaticBlockDeclaration(parent); parent = parent.parent) {
    if (ts.isBlock(parent) || ts.isCaseClause(parent) || ts.isDefaultClause(parent)) {
      const index = parent.statements.indexOf(child as ts.Statement);
      for (let i = index - 1; i >= 0; i--) {
        const statement = parent.statements[i];
        if (statement && ts.isVariableStatement(statement) && isAwaitUsing(statement.declarationList)) {
          return declaredName(statement.declarationList, sf);
        }
      }
    }
    if (ts.isForOfStatement(parent) && child === parent.statement) {
      const initializer = parent.initializer;
      if (ts.isVariableDeclarationList(initializer) && isAwaitUsing(initializer)) return declaredName(initializer, sf);
    }
    child = parent;
  }
  return undefined;
}

function shortText(node: ts.Node, sf: ts.SourceFile): string {
  return cut(node.getText(sf));
}

/** Source text as a warning quotes it: one line, at most 60 characters. */
function cut(text: string): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}


/** `T` of `Promise<T>` or `PromiseLike<T>`; undefined for any other type. */
function promisedType(type: ts.TypeNode, sf: ts.SourceFile): string | undefined {
  if (!ts.isTypeReferenceNode(type) || !ts.isIdentifier(type.typeName)) return undefined;
  if (type.typeName.text !== "Promise" && type.typeName.text !== "PromiseLike") return undefined;
  const [only, ...more] = type.typeArguments ?? [];
  return only && more.length === 0 ? cut(only.getText(sf)) : undefined;
}

/**
 * What to write after `return` instead of `expression`: `await expression`. A type assertion is kept
 * outside the await, on the awaited value: `return x as T` becomes `return (await x) as T`
 * (`await x as Promise<T>` would assert a promise of a value that is not one: a type error, so
 * `x as Promise<T>` becomes `(await x) as T`). A conditional is awaited as a whole (`await a ?
 * b() : c()` would await `a`).
 */
function awaitedText(expression: ts.Expression, sf: ts.SourceFile): string {
  const node = ts.isParenthesizedExpression(expression) && !ts.isConditionalExpression(unwrapExpression(expression)) ? expression.expression : expression;
  if (ts.isAsExpression(node) || ts.isSatisfiesExpression(node) || ts.isTypeAssertionExpression(node)) {
    const keyword = ts.isSatisfiesExpression(node) ? "satisfies" : "as";
    const type = promisedType(node.type, sf) ?? cut(node.type.getText(sf));
    return `(await ${shortText(node.expression, sf)}) ${keyword} ${type}`;
  }
  const text = shortText(expression, sf);
  return `await ${ts.isConditionalExpression(unwrapExpression(expression)) && !ts.isParenthesizedExpression(expression) ? `(${text})` : text}`;
}

function warningFor(statement: ts.ReturnStatement, expression: ts.Expression, name: string, sf: ts.SourceFile): Warning {
  const line = sf.getLineAndCharacterOfPosition(statement.getStart(sf)).line + 1;
  const text = shortText(expression, sf);
  const awaited = awaitedText(expression, sf);
  name = cut(name);
  const closes = name === "session" ? "the session" : `\`${name}\``;
  return {
    code: "unawaited_return_in_session",
    message:
      `line ${line}: \`return ${text}\` returns a promise while \`await using ${name}\` closes ${closes} at the return: ` +
      `write \`return ${awaited}\``,
    line,
  };
}

/**
 * The classic trap of `await using`: `return page.title()` (a promise, not awaited) inside a
 * block that holds `await using session = …` disposes of the session at the return, before
 * the promise settles, and the call then fails ("Target closed"). Finds every `return <call>`
 * without `await` that an `await using` of its own function is in force for. Syntax only: a
 * call counts as a possible promise unless it is a well-known synchronous one (see SYNC_METHODS).
 */
export function findUnawaitedReturns(sf: ts.SourceFile): Warning[] {
  const warnings: Warning[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isReturnStatement(node) && node.expression && mayBePromise(node.expression)) {
      const name = awaitUsingInScope(node, sf);
      if (name !== undefined) warnings.push(warningFor(node, node.expression, name, sf));
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  if (warnings.length <= MAX_WARNINGS) return warnings;
  const [first] = warnings.slice(MAX_WARNINGS);
  return [
    ...warnings.slice(0, MAX_WARNINGS),
    {
      code: "unawaited_return_in_session",
      message: `${warnings.length - MAX_WARNINGS} more like these, from line ${first?.line ?? 0} on (only the first ${MAX_WARNINGS} are listed)`,
      line: first?.line ?? 0,
    },
  ];
}
