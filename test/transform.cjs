// Jest transformer: TypeScript → CommonJS with esbuild (type checking is `tsc --noEmit`).
const { transformSync } = require("esbuild");

module.exports = {
  process(source, filename) {
    const { code, map } = transformSync(source, {
      loader: filename.endsWith(".ts") ? "ts" : "js",
      format: "cjs",
      target: "node20",
      sourcemap: "both",
      sourcefile: filename,
    });
    return { code, map };
  },
};
