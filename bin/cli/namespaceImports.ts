import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Loader, Plugin, PluginBuild } from "esbuild";
import ts from "typescript";

/**
 * esbuild bundles a namespace object whole when a module hands it on under a name:
 * zod/mini's entry is `import * as z from "./external.js"; export * from …; export { z }`, so
 * `import { z } from "zod/mini"` bundles every schema (428 KB) where `import * as z from
 * "zod/mini"` bundles only those used (14 KB). Rollup and webpack shake the first form too;
 * esbuild does not.
 *
 * This plugin rewrites such imports in the user's own files (not in node_modules): an imported
 * name that the imported module binds to a namespace (`export { z }` or `export { z as default }`
 * of an `import * as z from "S"`, or `export * as z from "S"`) becomes `import * as z from S`,
 * S resolved to its file. It is the same object, so nothing changes but what esbuild can see;
 * `import "<module>"` stays, so the module still runs (esbuild drops it when the package says it
 * has no side effects). Each rewrite stays on its line.
 */
export function namespaceImports(isProvided: (specifier: string) => boolean): Plugin {
  return {
    name: "browserfn-namespace-imports",
    setup(build) {
      const namespacesOf = new Map<string, Promise<Map<string, string>>>();
      const namespaces = (file: string) => {
        let found = namespacesOf.get(file);
        if (!found) namespacesOf.set(file, (found = namespaceExports(build, file)));
        return found;
      };
      build.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, async ({ path: file }) => {
        if (file.split(path.sep).includes("node_modules")) return undefined;
        const source = await readFile(file, "utf8");
        const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, scriptKind(file));
        const edits: { start: number; end: number; text: string }[] = [];
        for (const statement of sf.statements) {
          if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
          const clause = statement.importClause;
          const specifier = statement.moduleSpecifier.text;
          if (!clause || clause.isTypeOnly || isProvided(specifier)) continue;
          const imported = importedNames(clause);
          if (imported.length === 0) continue;
          const resolved = await build.resolve(specifier, { kind: "import-statement", resolveDir: path.dirname(file), importer: file });
          if (resolved.errors.length > 0 || resolved.external || resolved.namespace !== "file" || !resolved.path) continue;
          const byName = await namespaces(resolved.path);
          const rewrites = (binding: ImportedName) => !binding.typeOnly && byName.has(binding.name);
          const rewritten = imported.filter(rewrites);
          if (rewritten.length === 0) continue;
          const kept = imported.filter((binding) => !rewrites(binding)).map((binding) => binding.text);
          const from = JSON.stringify(specifier);
          const parts = [kept.length > 0 ? `import { ${kept.join(", ")} } from ${from};` : `import ${from};`];
          const bindings = clause.namedBindings;
          if (bindings && ts.isNamespaceImport(bindings)) parts.push(`import * as ${bindings.name.text} from ${from};`); // `import x, * as ns from …`
          for (const { name, local } of rewritten) parts.push(`import * as ${local} from ${JSON.stringify(byName.get(name))};`);
          edits.push({ start: statement.getStart(sf), end: statement.getEnd(), text: parts.join(" ") });
        }
        if (edits.length === 0) return undefined;
        let contents = source;
        for (const edit of edits.reverse()) contents = contents.slice(0, edit.start) + edit.text + contents.slice(edit.end);
        return { contents, loader: loaderFor(file) };
      });
    },
  };
}

interface ImportedName {
  /** The name the module exports (`default` for a default import). */
  name: string;
  local: string;
  typeOnly: boolean;
  /** The element as written in a `{ … }` list. */
  text: string;
}

/** The bindings of an import clause: `x` (as `default as x`), `{ a, b as c, type T }`; a namespace import is left alone. */
function importedNames(clause: ts.ImportClause): ImportedName[] {
  const names: ImportedName[] = [];
  if (clause.name) names.push({ name: "default", local: clause.name.text, typeOnly: false, text: `default as ${clause.name.text}` });
  const bindings = clause.namedBindings;
  if (bindings && ts.isNamedImports(bindings)) {
    for (const element of bindings.elements) {
      const property = element.propertyName;
      const name = (property ?? element.name).text;
      const as = property ? `${ts.isIdentifier(property) ? name : JSON.stringify(name)} as ` : "";
      names.push({ name, local: element.name.text, typeOnly: element.isTypeOnly, text: `${element.isTypeOnly ? "type " : ""}${as}${element.name.text}` });
    }
  }
  return names;
}

/** The names a module exports that are namespace objects of other modules, with those modules' files. */
async function namespaceExports(build: PluginBuild, file: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  let source: string;
  try {
    source = await readFile(file, "utf8");
  } catch {
    return found;
  }
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, scriptKind(file));
  const imported = new Map<string, string>(); // local name of `import * as X from "S"` → S
  for (const statement of sf.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) imported.set(bindings.name.text, statement.moduleSpecifier.text);
  }
  const specifiers = new Map<string, string>(); // exported name → S
  for (const statement of sf.statements) {
    if (!ts.isExportDeclaration(statement) || statement.isTypeOnly || !statement.exportClause) continue;
    const clause = statement.exportClause;
    if (ts.isNamespaceExport(clause) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      specifiers.set(clause.name.text, statement.moduleSpecifier.text);
    } else if (ts.isNamedExports(clause) && !statement.moduleSpecifier) {
      for (const element of clause.elements) {
        const from = imported.get((element.propertyName ?? element.name).text);
        if (from !== undefined && !element.isTypeOnly) specifiers.set(element.name.text, from);
      }
    }
  }
  for (const [name, specifier] of specifiers) {
    const resolved = await build.resolve(specifier, { kind: "import-statement", resolveDir: path.dirname(file), importer: file });
    if (resolved.errors.length === 0 && !resolved.external && resolved.namespace === "file" && resolved.path) found.set(name, resolved.path);
  }
  return found;
}

function scriptKind(file: string): ts.ScriptKind {
  if (/\.tsx$/.test(file)) return ts.ScriptKind.TSX;
  if (/\.[cm]?ts$/.test(file)) return ts.ScriptKind.TS;
  return /\.jsx$/.test(file) ? ts.ScriptKind.JSX : ts.ScriptKind.JS;
}

function loaderFor(file: string): Loader {
  if (/\.tsx$/.test(file)) return "tsx";
  if (/\.[cm]?ts$/.test(file)) return "ts";
  return /\.jsx$/.test(file) ? "jsx" : "js";
}
