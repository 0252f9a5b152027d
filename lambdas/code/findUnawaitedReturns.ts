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
  let root = node;
  while (ts.isPropertyAccessExpression(root)) root = root.expression;
  return ts.isIdentifier(root) ? root.text : undefined;
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
  // `inScope`: the innermost `await using` in force here within its own function (one declared
  // earlier in an enclosing block, or the variable of an enclosing `for (await using … of …)`),
  // carried down the tree: one pass, however many statements and returns a block holds.
  const visit = (node: ts.Node, inScope: string | undefined): void => {
    if (ts.isReturnStatement(node) && node.expression && inScope !== undefined && mayBePromise(node.expression)) {
      warnings.push(warningFor(node, node.expression, inScope, sf));
    }
    if (ts.isFunctionLike(node) || ts.isClassStaticBlockDeclaration(node)) {
      ts.forEachChild(node, (child) => visit(child, undefined)); // its returns are its own
    } else if (ts.isBlock(node) || ts.isCaseClause(node) || ts.isDefaultClause(node)) {
      if (ts.isCaseClause(node)) visit(node.expression, inScope);
      let current = inScope;
      for (const statement of node.statements) {
        visit(statement, current);
        if (ts.isVariableStatement(statement) && isAwaitUsing(statement.declarationList)) current = declaredName(statement.declarationList, sf);
      }
    } else if (ts.isForOfStatement(node)) {
      visit(node.initializer, inScope);
      visit(node.expression, inScope);
      const declared = ts.isVariableDeclarationList(node.initializer) && isAwaitUsing(node.initializer) ? declaredName(node.initializer, sf) : undefined;
      visit(node.statement, declared ?? inScope);
    } else {
      ts.forEachChild(node, (child) => visit(child, inScope));
    }
  };
  visit(sf, undefined);
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
