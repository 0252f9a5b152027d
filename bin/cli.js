#!/usr/bin/env node
// The `browserfn` command: runs bin/cli.ts through tsx, so the TypeScript sources need no build step.
require("tsx/cjs");
require("./cli.ts");
