import { chmod, readdir } from "node:fs/promises";
import path from "node:path";
import chromium from "@sparticuz/chromium";

/** What @sparticuz/chromium unpacks beside its binary, and what a sandbox must see of it. */
const BESIDE_BINARY = ["libEGL.so", "libGLESv2.so", "libvk_swiftshader.so", "libvulkan.so.1", "vk_swiftshader_icd.json", "fonts", "locales"];

/**
 * Flags left out of @sparticuz/chromium's defaults: `--single-process` breaks browser contexts;
 * `--disable-web-security` would let any page read any origin, the host's loopback included.
 */
const DROPPED = new Set(["--single-process", "--disable-web-security"]);

export interface ChromiumFiles {
  executable: string;
  /** Files and folders beside the binary that it loads (SwiftShader, fonts). */
  files: string[];
}

let unpacked: Promise<ChromiumFiles> | undefined;

/**
 * The @sparticuz/chromium binary, decompressed once per service, made readable and runnable
 * by every user (workers run under uids of their own when the service runs as root).
 */
export function chromiumFiles(): Promise<ChromiumFiles> {
  unpacked ??= (async () => {
    const executable = await chromium.executablePath();
    const dir = path.dirname(executable);
    const present = new Set(await readdir(dir));
    const files = BESIDE_BINARY.filter((name) => present.has(name)).map((name) => path.join(dir, name));
    if (process.getuid?.() === 0) {
      await chmod(executable, 0o755);
      for (const file of files) await chmod(file, file.endsWith("fonts") || file.endsWith("locales") ? 0o755 : 0o644).catch(() => undefined);
      for (const folder of files.filter((file) => file.endsWith("fonts") || file.endsWith("locales"))) {
        for (const name of await readdir(folder).catch(() => [] as string[])) await chmod(path.join(folder, name), 0o644).catch(() => undefined);
      }
    }
    return { executable, files };
  })();
  return unpacked;
}

/** Chromium's flags in a worker's sandbox (CDP over a pipe is added by the host). */
export function chromiumArgs(): string[] {
  return [
    ...chromium.args.filter((arg) => !DROPPED.has(arg)),
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-breakpad",
    "--deny-permission-prompts",
  ];
}

/** Chromium's environment: nothing of the service's. */
export function chromiumEnv(files: ChromiumFiles, home: string): Record<string, string> {
  const fonts = files.files.find((file) => file.endsWith("fonts"));
  return { HOME: home, TMPDIR: home, ...(fonts ? { FONTCONFIG_PATH: fonts } : {}) };
}
