import path from "node:path";
import { MAX_CODE_BYTES } from "../../lambdas/code/extractParameters";
import { CliError } from "./args";
import { bundleAutomation, type BundledAutomation } from "./bundleAutomation";
import type { Output } from "./output";
import { asClientError } from "./serviceErrors";

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** `zod 90.1 KB, ./helpers/x.ts 0.4 KB` (the five largest). */
function partsText(bundled: BundledAutomation): string {
  const shown = bundled.parts.slice(0, 5).map((part) => `${part.name} ${kb(part.bytes)}`);
  if (bundled.parts.length > 5) shown.push(`${bundled.parts.length - 5} more`);
  return shown.join(", ");
}

/**
 * Bundles an automation file (see bundleAutomation) and checks it against the service's code
 * limit; the code returned carries its source map when that fits in the limit too. An entry file the service would refuse (no default export, a parameter form it does
 * not take) is reported as the API reports it (invalid_code).
 */
export async function prepareCode(file: string, out: Output): Promise<BundledAutomation> {
  const name = path.basename(file);
  out.note(`Bundling ${name}…`);
  let bundled: BundledAutomation;
  try {
    bundled = await bundleAutomation(file);
  } catch (error) {
    throw asClientError(error);
  }
  const total = Buffer.byteLength(bundled.code);
  if (total > MAX_CODE_BYTES) {
    throw new CliError(
      `The bundled code is ${kb(total)} (${total} bytes), over the service's limit of ${kb(MAX_CODE_BYTES)} (${MAX_CODE_BYTES} bytes): ` +
        `the service stores the code of every version and compiles it as one module, so it caps its size. ` +
        `${name} is ${kb(bundled.entryBytes)}, its bundled imports ${kb(bundled.dependencyBytes)}` +
        `${bundled.parts.length > 0 ? ` (${partsText(bundled)})` : ""}. ` +
        `Import less, or smaller packages: what the file uses of a package is bundled, all of it when a namespace is used as a whole.`,
      2,
    );
  }
  out.note(bundled.parts.length > 0 ? `Bundled ${kb(total)}: ${name} ${kb(bundled.entryBytes)}, ${partsText(bundled)}` : `Bundled ${kb(total)}: ${name}, nothing to bundle (sent as written)`);
  if (bundled.withSourceMap === undefined) return bundled;
  // The source map goes inline, on the code's last line, and counts toward the limit with it.
  const mapBytes = Buffer.byteLength(bundled.withSourceMap) - total;
  if (Buffer.byteLength(bundled.withSourceMap) > MAX_CODE_BYTES) {
    out.note(`Sent without its source map (${kb(mapBytes)} more would pass the limit): errors will name lines of the bundle, not of ${name}`);
    return bundled;
  }
  out.note(`With a source map to ${name} (${kb(mapBytes)}, counted in the limit): errors name its lines`);
  return { ...bundled, code: bundled.withSourceMap };
}
