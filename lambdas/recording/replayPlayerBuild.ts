import { readFileSync } from "node:fs";
import path from "node:path";
import { buildSync } from "esbuild";

/**
 * rrweb-player (pinned in package.json) as one classic script that defines the global
 * `rrwebPlayer` (its `default` is the player class), and its stylesheet: what the dashboard serves (scripts/buildReplayPlayer.ts) and what
 * `browserfn runs replay` writes into its self-contained HTML player.
 */
export function buildReplayPlayer(): { js: string; css: string } {
  const result = buildSync({
    stdin: { contents: 'export { default } from "rrweb-player";', resolveDir: __dirname, loader: "js" },
    bundle: true,
    format: "iife",
    globalName: "rrwebPlayer",
    minify: true,
    write: false,
    target: "es2020",
    legalComments: "none",
    logLevel: "silent",
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error("the replay player did not build");
  const css = readFileSync(require.resolve("rrweb-player/dist/style.css"), "utf8");
  return { js: `/* rrweb-player ${playerVersion()} (MIT), built by scripts/buildReplayPlayer.ts */\n${file.text}`, css };
}

function playerVersion(): string {
  // The package exports no package.json: it sits two folders above its stylesheet.
  const file = path.join(path.dirname(require.resolve("rrweb-player/dist/style.css")), "..", "package.json");
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}
