import { SourceMap, type SourceMapping } from "node:module";
import { AUTOMATION_FILENAME, inlineSourceMap, WRAPPER_LINES } from "./loadAutomation";

const MAX_CACHED = 8;
/** The source map of each code string seen lately; null when it has none (or a malformed one). */
const maps = new Map<string, SourceMap | null>();

/** The code's inline source map (compileCode puts one on its last line), parsed once per code string. */
function sourceMapOf(code: string): SourceMap | null {
  const cached = maps.get(code);
  if (cached !== undefined) return cached;
  let map: SourceMap | null = null;
  const inline = inlineSourceMap(code);
  if (inline) {
    try {
      map = new SourceMap(JSON.parse(Buffer.from(inline.base64, "base64").toString("utf8")));
    } catch {
      map = null; // not a source map: frames keep their positions in the compiled code
    }
  }
  maps.set(code, map);
  for (const oldest of maps.keys()) {
    if (maps.size <= MAX_CACHED) break;
    maps.delete(oldest);
  }
  return map;
}

const POSITION = new RegExp(`${AUTOMATION_FILENAME.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:(\\d+):(\\d+)`, "g");
const FRAME = /^\s*at /;

/**
 * `automation.ts:LINE:COLUMN` for a position in the evaluated code (1-based, as V8 prints it),
 * or undefined where the user's source has no line for it (helpers the compiler added).
 */
function originalPosition(map: SourceMap, line: number, column: number): string | undefined {
  const generatedLine = line - 1 - WRAPPER_LINES;
  const entry: Partial<SourceMapping> = map.findEntry(generatedLine, column - 1);
  // findEntry gives the nearest mapping at or before the position, which may be on an earlier line.
  if (entry.generatedLine !== generatedLine || typeof entry.originalSource !== "string") return undefined;
  if (typeof entry.originalLine !== "number" || typeof entry.originalColumn !== "number") return undefined;
  return `${entry.originalSource}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
}

/** A file of the service's own in a frame (`/tmp/browserfn-runtime-x/worker.cjs:44656:19`, `file:///var/task/…`): where it runs is not the user's business. */
const SERVICE_FILE = /(?<=[(\s])(?:file:\/\/)?\/[^\s()]*:\d+:\d+/g;

/** What a frame of the service's own code names instead of its file. */
export const RUNTIME_LOCATION = "browserfn-runtime";

/**
 * The stack of an error thrown in an automation, with the frames of its code
 * (`at run (/automation/index.js:64:19)`) naming the user's own file, line and column instead
 * (`at run (automation.ts:8:11)`), through the code's inline source map (without one, they are
 * kept as they are). Frames of the service's code (the runner, the runtime SDK, puppeteer) keep
 * their function names, with `browserfn-runtime` for their file: a stack names no path of the
 * machine it ran on. The message and Node's own frames (`node:internal/…`) are kept as they are.
 */
export function mapAutomationStack(stack: string, code: string): string {
  const map = stack.includes(AUTOMATION_FILENAME) ? sourceMapOf(code) : null;
  return stack
    .split("\n")
    .map((line) => {
      if (!FRAME.test(line)) return line;
      if (!line.includes(AUTOMATION_FILENAME)) return line.replace(SERVICE_FILE, RUNTIME_LOCATION);
      return map ? line.replace(POSITION, (whole, l: string, c: string) => originalPosition(map, Number(l), Number(c)) ?? whole) : line;
    })
    .join("\n");
}
