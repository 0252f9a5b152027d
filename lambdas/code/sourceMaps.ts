/**
 * Source maps (version 3) as far as the service needs them: the `mappings` of a map decoded to
 * segments and encoded again, a map read from a module's inline `//# sourceMappingURL=data:…`
 * comment (checked: it comes with the user's code), and two maps composed into one. Positions
 * only: names and sourcesContent are never kept.
 */

/** One mapped position: generated line (0-based, the index in the list) and column to a source's line and column. */
export interface Segment {
  column: number;
  source: number;
  line: number;
  sourceColumn: number;
}

export interface PositionMap {
  sources: string[];
  /** Per generated line, its segments in column order. */
  lines: Segment[][];
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]));
/** What a source name in a map may hold (it is shown in stack traces): printable, no quotes or parentheses, up to 200 characters. */
const SOURCE_NAME = /^[\w./@+-]{1,200}$/;
/** Segments read from a map at most: more means a map of no code the service would take. */
const MAX_SEGMENTS = 2_000_000;
export const INLINE_MAP_PREFIX = "//# sourceMappingURL=data:application/json;base64,";
/** A module's inline source map comment, on its last line. */
const TRAILING_INLINE_MAP = /\n\/\/# sourceMappingURL=data:application\/json;(?:charset=utf-8;)?base64,([A-Za-z0-9+/]+={0,2})\s*$/;

function decodeVlq(text: string, at: { i: number }): number {
  let value = 0;
  let shift = 0;
  for (;;) {
    const digit = DIGIT.get(text[at.i++] ?? "");
    if (digit === undefined || shift > 30) throw new Error("bad VLQ");
    value += (digit & 31) * 2 ** shift;
    shift += 5;
    if ((digit & 32) === 0) break;
  }
  return value % 2 === 1 ? -(value - 1) / 2 : value / 2;
}

function encodeVlq(n: number): string {
  let value = n < 0 ? -n * 2 + 1 : n * 2;
  let out = "";
  do {
    let digit = value & 31;
    value = Math.floor(value / 32);
    if (value > 0) digit |= 32;
    out += BASE64[digit];
  } while (value > 0);
  return out;
}

/** The segments of `mappings` that name a source (a 5-field one's name is left out: names are relative, and never read). Throws on a malformed one. */
export function decodeMappings(mappings: string, sourceCount: number): Segment[][] {
  const lines: Segment[][] = [];
  let source = 0;
  let line = 0;
  let sourceColumn = 0;
  let count = 0;
  for (const text of mappings.split(";")) {
    const segments: Segment[] = [];
    let column = 0;
    for (const part of text === "" ? [] : text.split(",")) {
      const at = { i: 0 };
      const fields: number[] = [];
      while (at.i < part.length) fields.push(decodeVlq(part, at));
      if (fields.length !== 1 && fields.length !== 4 && fields.length !== 5) throw new Error("bad segment");
      column += fields[0] ?? 0;
      if (fields.length === 1) continue;
      source += fields[1] ?? 0;
      line += fields[2] ?? 0;
      sourceColumn += fields[3] ?? 0;
      if (column < 0 || source < 0 || source >= sourceCount || line < 0 || sourceColumn < 0) throw new Error("segment out of range");
      if (++count > MAX_SEGMENTS) throw new Error("too many segments");
      segments.push({ column, source, line, sourceColumn });
    }
    lines.push(segments.sort((a, b) => a.column - b.column));
  }
  return lines;
}

export function encodeMappings(lines: Segment[][]): string {
  let source = 0;
  let line = 0;
  let sourceColumn = 0;
  return lines
    .map((segments) => {
      let column = 0;
      return segments
        .map((segment) => {
          const text = encodeVlq(segment.column - column) + encodeVlq(segment.source - source) + encodeVlq(segment.line - line) + encodeVlq(segment.sourceColumn - sourceColumn);
          ({ column, source, line, sourceColumn } = segment);
          return text;
        })
        .join(",");
    })
    .join(";");
}

/** A parsed map, checked field by field (version 3, source names shown in stack traces, valid mappings); throws when it is not one. */
export function parsePositionMap(json: string): PositionMap {
  const raw = JSON.parse(json) as { version?: unknown; sources?: unknown; mappings?: unknown };
  if (raw.version !== 3 || !Array.isArray(raw.sources) || typeof raw.mappings !== "string") throw new Error("not a source map");
  const sources = raw.sources.map((source: unknown) => {
    if (typeof source !== "string" || !SOURCE_NAME.test(source)) throw new Error("bad source name");
    return source;
  });
  return { sources, lines: decodeMappings(raw.mappings, sources.length) };
}

export function positionMapJson(map: PositionMap): string {
  return JSON.stringify({ version: 3, sources: map.sources, names: [], mappings: encodeMappings(map.lines) });
}

/** `code` with `map` as its inline source map, on a line of its own at the end. */
export function withInlineMap(code: string, map: PositionMap): string {
  return `${code.endsWith("\n") ? code : `${code}\n`}${INLINE_MAP_PREFIX}${Buffer.from(positionMapJson(map)).toString("base64")}\n`;
}

/**
 * The source map a module carries on its last line, and the module without that line (every
 * other line keeps its number); map undefined when there is none, or it is
 * not a valid one (the module then maps to itself only).
 */
export function takeInlineMap(code: string): { code: string; map: PositionMap | undefined } {
  const found = TRAILING_INLINE_MAP.exec(code);
  if (!found) return { code, map: undefined };
  const rest = `${code.slice(0, found.index)}\n`;
  try {
    return { code: rest, map: parsePositionMap(Buffer.from(found[1] ?? "", "base64").toString("utf8")) };
  } catch {
    return { code: rest, map: undefined };
  }
}

/** The segment of `line` at or before `column`; undefined when none is. */
function segmentAt(line: Segment[] | undefined, column: number): Segment | undefined {
  if (!line) return undefined;
  let found: Segment | undefined;
  let low = 0;
  let high = line.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const segment = line[mid] as Segment;
    if (segment.column <= column) {
      found = segment;
      low = mid + 1;
    } else high = mid - 1;
  }
  return found;
}

/**
 * `outer` (generated code → the module) through `inner` (the module → its own sources): each
 * position of the generated code mapped on to where `inner` says that place of the module came
 * from. A position `inner` does not cover (a line it has no segment on) keeps `outer`'s, so
 * frames there still name a line of the module.
 */
export function composeMaps(outer: PositionMap, inner: PositionMap): PositionMap {
  const sources = [...inner.sources];
  const index = new Map(sources.map((source, i) => [source, i]));
  const sourceIndex = (name: string) => {
    let i = index.get(name);
    if (i === undefined) {
      i = sources.push(name) - 1;
      index.set(name, i);
    }
    return i;
  };
  const lines = outer.lines.map((segments) =>
    segments.map((segment) => {
      const through = segmentAt(inner.lines[segment.line], segment.sourceColumn);
      if (through) return { column: segment.column, source: through.source, line: through.line, sourceColumn: through.sourceColumn };
      return { ...segment, source: sourceIndex(outer.sources[segment.source] ?? "") };
    }),
  );
  return { sources, lines };
}
