// Runs one of dist/'s bundles (the service or the CLI) in this process, after building dist/ again
// when a source is newer than it (sourceStamp.cjs): a developer who edits the sources never runs
// old code, and nothing is compiled at start-up otherwise. BROWSERFN_FROM_SOURCES=1 runs the
// TypeScript sources through tsx instead (no build; stack traces name the .ts files).
const { spawnSync } = require("node:child_process");
const path = require("node:path");
const { isDistFresh } = require("./sourceStamp.cjs");

const ROOT = path.resolve(__dirname, "..", "..");

/**
 * `bundle` is the file in dist/ (local.cjs, cli.cjs); `source` the TypeScript entry it is built
 * from (bin/local.ts, bin/cli.ts), for BROWSERFN_FROM_SOURCES.
 */
function launch(bundle, source) {
  if (process.env.BROWSERFN_FROM_SOURCES === "1") {
    require("tsx/cjs");
    require(path.join(ROOT, source));
    return;
  }
  if (!isDistFresh(ROOT)) build();
  require(path.join(ROOT, "dist", bundle));
}

/** Builds dist/ in a child process (its output on stderr: stdout may be a command's --json answer). */
function build() {
  process.stderr.write("browserfn: the sources changed since dist/ was built; building it (a few seconds)\n");
  const result = spawnSync(process.execPath, ["--require", "tsx/cjs", path.join(ROOT, "scripts", "build", "buildDist.ts")], {
    cwd: ROOT,
    stdio: ["ignore", 2, 2],
  });
  if (result.status !== 0) {
    process.stderr.write(`browserfn: dist/ could not be built (${result.error?.message ?? `exit code ${result.status}`}); BROWSERFN_FROM_SOURCES=1 runs the sources through tsx\n`);
    process.exit(1);
  }
}

module.exports = { launch };
