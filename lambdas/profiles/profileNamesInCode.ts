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
  return literalProfileCalls(sf).names;
}

/**
 * Of profileNamesInCode's names, those a call may open as its writer: its options have a
 * `persist` that is not the literal `false` (a computed one counts). The AWS run pipeline takes
 * their writer's lease before a run starts (its runner cannot ask for one mid-run).
 */
export function persistedProfileNamesInCode(sf: ts.SourceFile): string[] {
  return literalProfileCalls(sf).persisted;
}

function literalProfileCalls(sf: ts.SourceFile): { names: string[]; persisted: string[] } {
  const names = new Set<string>();
  const persisted = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (names.size >= MAX_NAMES) return;
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === "start") {
      const options = node.arguments[0];
      if (options && ts.isObjectLiteralExpression(options)) {
        let name: string | undefined;
        let persist = false;
        for (const property of options.properties) {
          const key = property.name?.getText(sf);
          if (key === "persist") persist = !ts.isPropertyAssignment(property) || property.initializer.kind !== ts.SyntaxKind.FalseKeyword;
          if (!ts.isPropertyAssignment(property) || key !== "profile") continue;
          const value = property.initializer;
          if ((ts.isStringLiteral(value) || ts.isNoSubstitutionTemplateLiteral(value)) && PROFILE_NAME.test(value.text)) name = value.text;
        }
        if (name !== undefined) {
          names.add(name);
          if (persist) persisted.add(name);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { names: [...names].sort(), persisted: [...persisted].sort() };
}
