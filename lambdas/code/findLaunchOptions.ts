import ts from "typescript";
import { IGNORED_LAUNCH_OPTIONS, ignoredOption } from "../../layers/runtime/scripts/launchOptions";
import type { Warning } from "./warnings";

/** The browser libraries a script run as it is imports (they resolve to browserfn's own modules). */
const BROWSER_MODULES = new Set(["playwright", "playwright-core", "puppeteer", "puppeteer-core"]);
const LAUNCHES = new Set(["launch", "launchPersistentContext"]);

/** Whether the module imports (or requires) one of BROWSER_MODULES. */
function importsBrowserLibrary(sf: ts.SourceFile): boolean {
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found = BROWSER_MODULES.has(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "require") {
      const [first] = node.arguments;
      found = first !== undefined && ts.isStringLiteral(first) && BROWSER_MODULES.has(first.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const reference = node.moduleReference.expression;
      found = ts.isStringLiteral(reference) && BROWSER_MODULES.has(reference.text);
    }
    if (!found) ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** A literal's value as far as the warning needs it: `false`, `true`, or something else. */
function literalValue(node: ts.Expression): unknown {
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  return node;
}

function propertyName(name: ts.PropertyName): string | undefined {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : undefined;
}

/**
 * Scripts as they are: each launch option that cannot apply on browserfn (an `executablePath`,
 * `headless: false`, extra `args`, a `userDataDir`, a debugging port; see launchOptions.ts) in
 * a `launch({ … })` or `launchPersistentContext(dir, { … })` of a module that imports playwright
 * or puppeteer, as a deploy warning (`ignored_launch_option`). Syntax only: options built at
 * run time are ignored all the same, unnamed.
 */
export function findLaunchOptions(sf: ts.SourceFile): Warning[] {
  if (!importsBrowserLibrary(sf)) return [];
  const warnings: Warning[] = [];
  const warn = (node: ts.Node, option: string, why: string) => {
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    warnings.push({ code: "ignored_launch_option", line, message: `Line ${line}: the launch option \`${option}\` is ignored on browserfn: ${why}.` });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && LAUNCHES.has(node.expression.name.text)) {
      const persistent = node.expression.name.text === "launchPersistentContext";
      if (persistent && node.arguments[0]) warn(node.arguments[0], "userDataDir", IGNORED_LAUNCH_OPTIONS.userDataDir as string);
      const options = node.arguments[persistent ? 1 : 0];
      if (options && ts.isObjectLiteralExpression(options)) {
        for (const property of options.properties) {
          if (!ts.isPropertyAssignment(property) && !ts.isShorthandPropertyAssignment(property)) continue;
          const name = propertyName(property.name);
          if (name === undefined) continue;
          const value = ts.isPropertyAssignment(property) ? literalValue(property.initializer) : property;
          if (!ignoredOption(name, value)) continue;
          warn(property, name, IGNORED_LAUNCH_OPTIONS[name] ?? "no DevTools port listens in the sandbox");
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return warnings;
}
