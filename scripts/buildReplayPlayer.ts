/**
 * Builds the dashboard's replay player from the pinned rrweb-player (package.json) into
 * lambdas/dashboard/rrwebPlayer.js (a classic script: the global `rrwebPlayer.default` is the player class) and
 * lambdas/dashboard/rrwebPlayer.css, which the service serves itself (the dashboard loads
 * nothing from elsewhere). Run after changing rrweb-player's version: `npx tsx scripts/buildReplayPlayer.ts`;
 * test/unit/replayPlayerBuild.test.ts checks that the files are this build.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { buildReplayPlayer } from "../lambdas/recording/replayPlayerBuild";

const dir = path.join(__dirname, "..", "lambdas", "dashboard");
const { js, css } = buildReplayPlayer();
writeFileSync(path.join(dir, "rrwebPlayer.js"), js);
writeFileSync(path.join(dir, "rrwebPlayer.css"), css);
console.log(`rrwebPlayer.js ${js.length} bytes, rrwebPlayer.css ${css.length} bytes`);
