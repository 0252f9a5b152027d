import path from "node:path";
import { MAX_CODE_BYTES } from "../../lambdas/code/extractParameters";
import { CliError } from "./args";
import { bundleAutomation, type BundledAutomation } from "./bundleAutomation";
import type { Output } from "./output";

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** Bundles an automation file (see bundleAutomation) and checks it against the service's 256 KB code limit. */
export async function prepareCode(file: string, out: Output): Promise<BundledAutomation> {
  out.note(`Bundling ${path.basename(file)}…`);
  const bundled = await bundleAutomation(file);
  const total = Buffer.byteLength(bundled.code);
  const from = bundled.modules.length > 0 ? ` (with ${bundled.modules.join(", ")}: ${kb(bundled.dependencyBytes)})` : "";
  if (total > MAX_CODE_BYTES) {
    throw new CliError(
      `The bundled code is ${kb(total)}, over the service's limit of ${kb(MAX_CODE_BYTES)}: ` +
        `${path.basename(file)} is ${kb(bundled.entryBytes)}, its bundled imports ${kb(bundled.dependencyBytes)}` +
        `${bundled.modules.length > 0 ? ` (${bundled.modules.join(", ")})` : ""}. Import less, or smaller packages.`,
      2,
    );
  }
  out.note(`Bundled ${kb(total)}${from}`);
  return bundled;
}
