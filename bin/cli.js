#!/usr/bin/env node
// The `browserfn` command: runs dist/cli.cjs, bin/cli.ts bundled by `npm ci` (the prepare script),
// built again first when a source is newer (scripts/build/launch.cjs).
require("../scripts/build/launch.cjs").launch("cli.cjs", "bin/cli.ts");
