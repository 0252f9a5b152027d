import ts from "typescript";
import { PROFILE_NAME } from "./profileSettings";

/** Names one module may name literally at most (more are left out: list them in the `profiles` setting). */
const MAX_NAMES = 100;

/**
 * The profile names a module passes literally to `Session.start({ profile: "name" })` (any
 * `….start({ profile: <string literal> })` call), sorted: what its runs may open besides its
 * function's `profiles` setting. Names computed at run time are not found here by design.
 */
export function profileNamesInCode(sf: ts.SourceFile): string[] {
  const names = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (names.size >= MAX_NAMES) return;
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === "start") {
      const options = node.arguments[0];
      if (options && ts.isObjectLiteralExpression(options)) {
        for (const property of options.properties) {
          if (!ts.isPropertyAssignment(property) || property.name.getText(sf) !== "profile") continue;
          const value = property.initializer;
          if ((ts.isStringLiteral(value) || ts.isNoSubstitutionTemplateLiteral(value)) && PROFILE_NAME.test(value.text)) names.add(value.text);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return [...names].sort();
}
