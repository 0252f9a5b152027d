import { readFile } from "node:fs/promises";
import { isBuiltin } from "node:module";
import path from "node:path";
import { build, type Message } from "esbuild";
import ts from "typescript";
import { CliError } from "./args";

/** Imports the runtime provides to every automation: they stay as they are. */
const PROVIDED = /^(browserfn\/runtime|puppeteer-core)(\/.*)?$/;

/** The name the bundled dependencies get in the deployed module. */
const DEPS = "__browserfn_deps";

export interface BundledAutomation {
  /** The module to deploy: the entry's own TypeScript, its imports rewritten to read DEPS. */
  code: string;
  /** Bytes of the entry after rewriting, and of the bundled dependency block. */
  entryBytes: number;
  dependencyBytes: number;
  /** The bundled import specifiers, in order. */
  modules: string[];
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

function isProvided(specifier: string): boolean {
  return PROVIDED.test(specifier) || isBuiltin(specifier);
}

function propertyText(name: ts.ModuleExportName): string {
  return ts.isIdentifier(name) ? name.text : JSON.stringify(name.text);
}

/** The `const …` declarations that replace one import declaration (empty for type-only imports). */
function replacement(clause: ts.ImportClause | undefined, ref: string): string {
  if (!clause) return "";
  const declarations: string[] = [];
  if (clause.name) declarations.push(`const ${clause.name.text} = ${ref}.default;`);
  const bindings = clause.namedBindings;
  if (bindings && ts.isNamespaceImport(bindings)) declarations.push(`const ${bindings.name.text} = ${ref};`);
  if (bindings && ts.isNamedImports(bindings)) {
    const parts = bindings.elements
      .filter((element) => !element.isTypeOnly)
      .map((element) => (element.propertyName ? `${propertyText(element.propertyName)}: ${element.name.text}` : element.name.text));
    if (parts.length > 0) declarations.push(`const { ${parts.join(", ")} } = ${ref};`);
  }
  return declarations.join(" ");
}

/**
 * Reads the entry's imports: the provided ones (browserfn/runtime, puppeteer-core, Node
 * built-ins) stay; type-only ones are dropped; every other one becomes a destructuring of the
 * bundled dependency block. Returns the edits and the virtual entry that esbuild bundles.
 */
function planRewrite(sf: ts.SourceFile): { edits: Edit[]; modules: string[]; virtualEntry: string } {
  const edits: Edit[] = [];
  const modules: string[] = [];
  const lines: string[] = [];
  const refFor = (specifier: string) => {
    let index = modules.indexOf(specifier);
    if (index < 0) {
      index = modules.push(specifier) - 1;
      lines.push(`export * as m${index} from ${JSON.stringify(specifier)};`);
    }
    return `${DEPS}.m${index}`;
  };
  for (const statement of sf.statements) {
    const where = () => {
      const { line } = sf.getLineAndCharacterOfPosition(statement.getStart(sf));
      return `${path.basename(sf.fileName)}:${line + 1}`;
    };
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const specifier = statement.moduleSpecifier.text;
      if (isProvided(specifier)) continue;
      const clause = statement.importClause;
      let text = "";
      if (!clause) lines.push(`import ${JSON.stringify(specifier)};`); // for its side effects only
      else if (!clause.isTypeOnly) text = replacement(clause, refFor(specifier));
      edits.push({ start: statement.getStart(sf), end: statement.getEnd(), text });
    } else if (ts.isImportEqualsDeclaration(statement) && ts.isExternalModuleReference(statement.moduleReference)) {
      const target = statement.moduleReference.expression;
      if (ts.isStringLiteral(target) && isProvided(target.text)) continue;
      throw new CliError(`${where()}: \`import … = require(…)\` of a module to bundle is not supported; use an ES import`, 2);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      if (statement.isTypeOnly || isProvided(statement.moduleSpecifier.text)) continue;
      throw new CliError(`${where()}: re-exporting from another module is not supported in the entry file; import and export instead`, 2);
    }
  }
  return { edits, modules, virtualEntry: lines.join("\n") };
}

function describeMessages(messages: Message[]): string {
  return messages
    .slice(0, 5)
    .map((m) => (m.location ? `${m.location.file}:${m.location.line}:${m.location.column}: ${m.text}` : m.text))
    .join("\n  ");
}

/** Bundles the dependencies into one minified IIFE assigned to DEPS. */
async function bundleDependencies(virtualEntry: string, resolveDir: string): Promise<string> {
  try {
    const result = await build({
      stdin: { contents: virtualEntry, resolveDir, sourcefile: "browserfn-dependencies.ts", loader: "ts" },
      bundle: true,
      write: false,
      format: "iife",
      globalName: DEPS,
      platform: "node",
      target: "node20",
      minify: true,
      legalComments: "none",
      // Provided by the runtime; ws's optional native speed-ups are loaded in a try/catch.
      external: ["browserfn/runtime", "puppeteer-core", "puppeteer-core/*", "bufferutil", "utf-8-validate"],
      logLevel: "silent",
    });
    return result.outputFiles[0]?.text ?? "";
  } catch (error) {
    const errors = (error as { errors?: Message[] }).errors;
    throw new CliError(`Bundling the imports failed:\n  ${errors ? describeMessages(errors) : (error as Error).message}`, 2);
  }
}

/**
 * Turns an automation file into one module the service accepts. The entry keeps its own
 * TypeScript source, so the service still reads its parameters' declared types; its imports of
 * local files and npm packages are bundled by esbuild into a minified block at the top, and each
 * such import becomes a `const` destructuring of that block. `browserfn/runtime`,
 * `puppeteer-core` and Node's built-in modules stay imports: the runtime provides them.
 */
export async function bundleAutomation(file: string): Promise<BundledAutomation> {
  let source: string;
  try {
    source = await readFile(file, "utf8");
  } catch (error) {
    throw new CliError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 2);
  }
  // A shebang line is blanked (line numbers stay): the runner evaluates the module as a function body, where `#!` is a syntax error.
  if (source.startsWith("#!")) source = source.replace(/^#![^\n]*/, "");
  const sf = ts.createSourceFile(path.basename(file), source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const { edits, modules, virtualEntry } = planRewrite(sf);
  let entry = source;
  for (const edit of [...edits].reverse()) entry = entry.slice(0, edit.start) + edit.text + entry.slice(edit.end);
  if (virtualEntry === "") {
    return { code: entry, entryBytes: Buffer.byteLength(entry), dependencyBytes: 0, modules };
  }
  const bundled = await bundleDependencies(virtualEntry, path.dirname(path.resolve(file)));
  const block = `// Imports bundled by \`browserfn deploy\` (esbuild): ${modules.join(", ") || "side effects only"}\n${bundled.trimEnd()}\n`;
  const code = block + entry;
  return { code, entryBytes: Buffer.byteLength(entry), dependencyBytes: Buffer.byteLength(block), modules };
}
