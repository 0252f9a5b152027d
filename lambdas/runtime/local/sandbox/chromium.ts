import { randomUUID } from "node:crypto";
import { chmod, lstat, readdir, rename, rm, writeFile } from "node:fs/promises";
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
  /** fontconfig's configuration for a sandbox's browser (in the fonts folder): see writeFontConfig. */
  fontConfig?: string;
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
      for (const file of files) await readableByAll(file);
    }
    const fonts = files.find((file) => file.endsWith("fonts"));
    const fontConfig = fonts ? await writeFontConfig(fonts) : undefined;
    return { executable, files, ...(fontConfig ? { fontConfig } : {}) };
  })();
  return unpacked;
}

/**
 * Folders 0755 and files 0644, all the way down: the fonts come as fonts/fonts/<family>/*.ttf,
 * and a folder without its search bit left Chromium under a worker's uid without any font (pages
 * rendered no text at all, screenshots of text pages were blank).
 */
async function readableByAll(file: string): Promise<void> {
  // Links are left as they are: a link planted in a shared /tmp must not open what it points to.
  const stats = await lstat(file).catch(() => undefined);
  if (!stats || stats.isSymbolicLink()) return;
  await chmod(file, stats.isDirectory() ? 0o755 : 0o644).catch(() => undefined);
  if (!stats.isDirectory()) return;
  for (const name of await readdir(file).catch(() => [] as string[])) await readableByAll(path.join(file, name));
}

/**
 * A fontconfig file for sandboxed browsers: the bundled fonts, and a font cache under each
 * browser's own HOME. The bundle's own fonts.conf keeps its cache in the machine's /tmp, which
 * in the process sandbox all workers share: the first worker's uid owned it, and a cache it
 * wrote (or planted) was what every other tenant's browser read.
 */
async function writeFontConfig(fontsDir: string): Promise<string | undefined> {
  const file = path.join(fontsDir, "browserfn-fonts.conf");
  const xml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const config = `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>${xml(fontsDir)}</dir>
  <cachedir>~/.cache/fontconfig</cachedir>
</fontconfig>
`;
  try {
    // Written beside and renamed over: a browser starting meanwhile reads the old file or the new one.
    const fresh = `${file}.${randomUUID()}.tmp`;
    try {
      await writeFile(fresh, config, { mode: 0o644, flag: "wx" });
      await chmod(fresh, 0o644);
      await rename(fresh, file);
    } finally {
      await rm(fresh, { force: true });
    }
    return file;
  } catch {
    return undefined; // not the service's folder to write: the bundle's own configuration stays
  }
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
  return { HOME: home, TMPDIR: home, ...(fonts ? { FONTCONFIG_PATH: fonts } : {}), ...(files.fontConfig ? { FONTCONFIG_FILE: files.fontConfig } : {}) };
}
