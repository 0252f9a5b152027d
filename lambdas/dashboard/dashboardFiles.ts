import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { DASHBOARD_PAGE, type DashboardAsset } from "./dashboardAssets";

export interface DashboardFile {
  body: string;
  /** A strong ETag of the content, for `If-None-Match`. */
  etag: string;
}

/**
 * Reads the dashboard's files from `dir`, once each (they never change while the process runs).
 * Only the dashboard's own names (dashboardAssets.ts) can be asked for, so no path from a request reaches the file system.
 */
export function createDashboardFiles(dir: string = __dirname): (name: DashboardAsset | typeof DASHBOARD_PAGE) => Promise<DashboardFile> {
  const cache = new Map<string, Promise<DashboardFile>>();
  return (name) => {
    let file = cache.get(name);
    if (!file) {
      file = readFile(path.join(dir, name), "utf8").then((body) => ({
        body,
        etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
      }));
      file.catch(() => cache.delete(name));
      cache.set(name, file);
    }
    return file;
  };
}
