import ts from "typescript";
import { ApiError } from "../http/errors";
import { unwrapExpression } from "./literalToJson";

export type ExportedFunction = ts.FunctionDeclaration | ts.FunctionExpression | ts.ArrowFunction;

const HINT = "export an async function as default";

function reject(message: string, details: Record<string, unknown> = {}): never {
  throw new ApiError("invalid_code", message, details);
}

function hasModifier(node: ts.Node, kind: ts.SyntaxKind): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);
}

function isDefaultExportDeclaration(node: ts.Statement): boolean {
  return hasModifier(node, ts.SyntaxKind.ExportKeyword) && hasModifier(node, ts.SyntaxKind.DefaultKeyword);
}

function snippet(node: ts.Node, sf: ts.SourceFile): string {
  const text = node.getText(sf).replace(/\s+/g, " ");
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** What a non-function default export is, in words: "a number (`42`)", "a class", ... */
function describe(node: ts.Node, sf: ts.SourceFile): string {
  if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) return "a class";
  if (ts.isNumericLiteral(node) || ts.isPrefixUnaryExpression(node)) return `a number (\`${snippet(node, sf)}\`)`;
  if (ts.isStringLiteral(node) || ts.isTemplateLiteral(node)) return `a string (\`${snippet(node, sf)}\`)`;
  if (node.kind === ts.SyntaxKind.TrueKeyword || node.kind === ts.SyntaxKind.FalseKeyword) return "a boolean";
  if (node.kind === ts.SyntaxKind.NullKeyword) return "null";
  if (ts.isObjectLiteralExpression(node)) return "an object literal";
  if (ts.isArrayLiteralExpression(node)) return "an array";
  if (ts.isCallExpression(node) || ts.isNewExpression(node)) return `the result of \`${snippet(node, sf)}\``;
  if (ts.isInterfaceDeclaration(node)) return "an interface";
  return `\`${snippet(node, sf)}\``;
}

function checkFunction(fn: ExportedFunction): ExportedFunction {
  if (!ts.isArrowFunction(fn) && fn.asteriskToken) {
    reject(`The default export is a generator function, not a function that returns a result; ${HINT}`);
  }
  return fn;
}

function functionFromExpression(expr: ts.Expression, sf: ts.SourceFile): ExportedFunction {
  const node = unwrapExpression(expr);
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) return checkFunction(node);
  if (ts.isIdentifier(node)) return resolveIdentifier(node.text, sf);
  return reject(`The default export is ${describe(node, sf)}, not a function; ${HINT}`);
}

/** Follows `export default run` to the top-level declaration of `run`. */
function resolveIdentifier(name: string, sf: ts.SourceFile): ExportedFunction {
  for (const statement of sf.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name?.text === name && statement.body) {
      return checkFunction(statement); // with overloads, the declaration that has a body
    }
    if (ts.isClassDeclaration(statement) && statement.name?.text === name) {
      reject(`The default export \`${name}\` is a class, not a function; ${HINT}`);
    }
    if (ts.isVariableStatement(statement)) {
      const list = statement.declarationList;
      for (const declaration of list.declarations) {
        if (!ts.isIdentifier(declaration.name) || declaration.name.text !== name) continue;
        const isConst = (list.flags & ts.NodeFlags.BlockScoped) === ts.NodeFlags.Const;
        if (!isConst) reject(`The default export \`${name}\` must be declared with const, not let or var`);
        if (!declaration.initializer) reject(`The default export \`${name}\` has no value`);
        const init = unwrapExpression(declaration.initializer);
        if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return checkFunction(init);
        reject(`The default export \`${name}\` is ${describe(init, sf)}, not a function; ${HINT}`);
      }
    }
    if (ts.isImportDeclaration(statement) && importsName(statement, name)) {
      reject(`The default export \`${name}\` is imported from another module; define the function in this module`);
    }
  }
  return reject(`The default export \`${name}\` is not declared at the top level of the module`);
}

function importsName(statement: ts.ImportDeclaration, name: string): boolean {
  const clause = statement.importClause;
  if (!clause) return false;
  if (clause.name?.text === name) return true;
  const bindings = clause.namedBindings;
  if (!bindings) return false;
  if (ts.isNamespaceImport(bindings)) return bindings.name.text === name;
  return bindings.elements.some((element) => element.name.text === name);
}

/** The function the module exports as default, or an invalid_code ApiError saying why there is none. */
export function findDefaultExport(sf: ts.SourceFile): ExportedFunction {
  for (const statement of sf.statements) {
    if (ts.isExportAssignment(statement)) {
      if (statement.isExportEquals) reject(`The module uses \`export =\`; ${HINT}`);
      return functionFromExpression(statement.expression, sf);
    }
    if (isDefaultExportDeclaration(statement)) {
      if (ts.isFunctionDeclaration(statement)) {
        if (!statement.body) continue; // an overload signature; the implementation follows
        return checkFunction(statement);
      }
      reject(`The default export is ${describe(statement, sf)}, not a function; ${HINT}`);
    }
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) {
        if (element.name.text !== "default") continue;
        if (statement.moduleSpecifier) {
          reject(`The default export is re-exported from another module; define the function in this module`);
        }
        return resolveIdentifier((element.propertyName ?? element.name).text, sf);
      }
    }
  }
  return reject(`The module has no default export; ${HINT}`);
}
