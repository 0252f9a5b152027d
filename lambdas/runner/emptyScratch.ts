import { lstatSync, readFileSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";

/**
 * The mount points this process sees (from /proc/self/mountinfo, its fifth field, with the
 * kernel's octal escapes of space, tab, newline and backslash undone).
 */
export function mountPoints(mountinfo: string = readMountinfo()): Set<string> {
  const points = new Set<string>();
  for (const line of mountinfo.split("\n")) {
    const field = line.split(" ")[4];
    if (field) points.add(field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8))));
  }
  return points;
}

function readMountinfo(): string {
  try {
    return readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return "";
  }
}

/**
 * Empties each of `dirs` (what a run may have left in the sandbox's private file systems)
 * without removing the dirs themselves, anything mounted in them (the bundles and Chromium's
 * files are bound there), or the `keep` paths (the browser's live profile); folders on the way
 * to one of those are emptied around it. Links are removed, never followed. What cannot be
 * removed is left (the sandbox's user cannot remove it either way).
 */
export function emptyScratch(dirs: string[], keep: string[], mounts: Set<string> = mountPoints()): void {
  const spared = [...mounts, ...keep].map((entry) => path.resolve(entry));
  const empty = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return; // gone, or not a folder
    }
    for (const name of names) {
      const entry = path.join(dir, name);
      if (spared.includes(entry)) continue;
      if (spared.some((kept) => kept.startsWith(`${entry}/`))) {
        // A real folder on the way to what is kept (a link by that name leads elsewhere: removed).
        if (isFolder(entry)) {
          empty(entry);
          continue;
        }
      }
      try {
        rmSync(entry, { recursive: true, force: true });
      } catch {
        // held by a mount we did not see, or not ours: it stays
      }
    }
  };
  for (const dir of dirs) empty(path.resolve(dir));
}

function isFolder(entry: string): boolean {
  try {
    return lstatSync(entry).isDirectory();
  } catch {
    return false;
  }
}
