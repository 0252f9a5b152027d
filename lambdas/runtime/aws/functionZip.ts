import { createHash } from "node:crypto";
import { strToU8, zipSync } from "fflate";
import type { VersionWithCode } from "../../functions/types";
import { type FunctionMeta, lambdaFunctionIndex } from "../../runner/lambdaPackage";

/** A fixed timestamp, so that one version always zips to the same bytes (and CodeSha256). */
const MTIME = new Date("2020-01-01T00:00:00Z");
/** Unix file, rw-r--r--: readable by the user Lambda runs the code as. */
const FILE = { os: 3, attrs: 0o100644 << 16, mtime: MTIME };

/**
 * The deployment package of one version, built in memory: `index.js` (the handler, from the
 * runtime layer, see lambdaFunctionIndex), `code.cjs` (the compiled code) and `meta.json`
 * (how to call it). `sha256` is what Lambda reports as the package's CodeSha256.
 */
export function functionZip(version: VersionWithCode): { zip: Uint8Array; sha256: string } {
  const meta: FunctionMeta = { parameter_style: version.parameter_style ?? "positional", variables: version.variables };
  const zip = zipSync(
    {
      "index.js": [strToU8(lambdaFunctionIndex()), FILE],
      "code.cjs": [strToU8(version.js), FILE],
      "meta.json": [strToU8(JSON.stringify(meta)), FILE],
    },
    { level: 6 },
  );
  return { zip, sha256: createHash("sha256").update(zip).digest("base64") };
}
