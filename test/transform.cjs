// Jest transformer: TypeScript and ES modules → CommonJS with esbuild (type checking is `tsc --noEmit`).
const { transformSync } = require("esbuild");

const IMPORT_META_URL = 'const __importMetaUrl = require("node:url").pathToFileURL(__filename).href;';

module.exports = {
  process(source, filename) {
    const usesImportMeta = source.includes("import.meta.url");
    const { code, map } = transformSync(source, {
      loader: filename.endsWith(".ts") ? "ts" : "js",
      format: "cjs",
      target: "node20",
      sourcemap: "both",
      sourcefile: filename,
      // ES modules (@sparticuz/chromium) locate their files with import.meta.url.
      ...(usesImportMeta ? { define: { "import.meta.url": "__importMetaUrl" }, banner: IMPORT_META_URL } : {}),
    });
    return { code, map };
  },
};
