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

/**
 * The stack of an error thrown in an automation, with the frames of its code
 * (`at run (/automation/index.js:64:19)`) naming the user's own file, line and column instead
 * (`at run (automation.ts:8:11)`), through the code's inline source map. Every other line (the
 * message, frames of the runner, the runtime SDK or puppeteer) is kept as it is; so is the
 * whole stack of code that has no source map.
 */
export function mapAutomationStack(stack: string, code: string): string {
  if (!stack.includes(AUTOMATION_FILENAME)) return stack;
  const map = sourceMapOf(code);
  if (!map) return stack;
  return stack
    .split("\n")
    .map((line) =>
      FRAME.test(line)
        ? line.replace(POSITION, (whole, l: string, c: string) => originalPosition(map, Number(l), Number(c)) ?? whole)
        : line,
    )
    .join("\n");
}
