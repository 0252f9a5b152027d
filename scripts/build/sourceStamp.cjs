// What a build of dist/ was made from: the newest modification time among the sources (files and
// folders, so a file added, removed or renamed counts too) and how many there are. Plain
// JavaScript: bin/cli.js and bin/start.cjs compare it before loading a bundle, in ~10 ms.
const { readdirSync, statSync } = require("node:fs");
const path = require("node:path");

/** What the service's and the CLI's bundles are made of (besides node_modules, see LOCKS). */
const SOURCE_DIRS = ["bin", "lambdas", "layers/runtime", "client", "scripts/build"];
/**
 * A changed dependency makes dist/ stale too: `npm install <package>` rewrites these. (`npm ci`
 * and a plain `npm install` run the prepare script, which builds dist/ anyway. node_modules'
 * own lock file is left out: npm may write it after running prepare.)
 */
const LOCKS = ["package.json", "package-lock.json"];

/** The stamp of the sources under `root` now: `{ newest, count }`. */
function sourceStamp(root) {
  let newest = 0;
  let count = 0;
  const note = (stats) => {
    count += 1;
    if (stats.mtimeMs > newest) newest = stats.mtimeMs;
  };
  const walk = (dir) => {
    note(statSync(dir));
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules") continue;
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else note(statSync(file));
    }
  };
  for (const dir of SOURCE_DIRS) walk(path.join(root, dir));
  for (const file of LOCKS) {
    try {
      note(statSync(path.join(root, file)));
    } catch {
      // package-lock.json or node_modules' lock may be absent (a copy without them): nothing to compare
    }
  }
  return { newest, count };
}

/** The file in dist/ that holds the stamp of the sources it was built from (written last by a build). */
const STAMP_FILE = "stamp.json";

/** Whether dist/ under `root` was built from the sources as they are now. */
function isDistFresh(root) {
  let built;
  try {
    built = JSON.parse(require("node:fs").readFileSync(path.join(root, "dist", STAMP_FILE), "utf8"));
  } catch {
    return false;
  }
  const now = sourceStamp(root);
  return built.newest === now.newest && built.count === now.count;
}

module.exports = { SOURCE_DIRS, STAMP_FILE, sourceStamp, isDistFresh };
