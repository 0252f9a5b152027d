/** Where a command writes: results on stdout, progress and errors on stderr. */
export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** Writes text, JSON, tables and key/value lists. */
export class Output {
  constructor(
    private readonly io: Io,
    /** `--json`: commands print JSON only. */
    readonly json: boolean,
  ) {}

  /** One line (or block) on stdout. */
  line(text = ""): void {
    this.io.stdout.write(`${text}\n`);
  }

  /** A value as JSON on stdout: indented for people, one line with --json. */
  printJson(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value, null, this.json ? undefined : 2)}\n`);
  }

  /** A note on stderr (progress, hints): never mixed into results. */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }

  /** Rows as an aligned table with a header; "(none)" when there are no rows. */
  table(columns: string[], rows: (string | number | null | undefined)[][]): void {
    if (rows.length === 0) return this.line("(none)");
    const cells = [columns, ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined ? "-" : String(cell))))];
    const widths = columns.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? "").length)));
    for (const row of cells) {
      this.line(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ").trimEnd());
    }
  }

  /** `key: value` lines, keys aligned. */
  fields(entries: [string, unknown][]): void {
    const width = Math.max(...entries.map(([key]) => key.length));
    for (const [key, value] of entries) {
      const text = value === null || value === undefined ? "-" : typeof value === "object" ? JSON.stringify(value) : String(value);
      this.line(`${`${key}:`.padEnd(width + 1)} ${text}`);
    }
  }

  /**
   * A spinner with `text` on stderr (only when stderr is a TTY and not --json); `stop` clears it (once).
   */
  spinner(text: string): { update(text: string): void; stop(): void } {
    if (!this.io.stderr.isTTY || this.json) return { update: () => undefined, stop: () => undefined };
    const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    let frame = 0;
    let label = text;
    let stopped = false;
    const draw = () => this.io.stderr.write(`\r\x1b[2K${frames[frame++ % frames.length]} ${label}`);
    draw();
    const timer = setInterval(draw, 100);
    return {
      update: (next) => (label = next),
      stop: () => {
        if (stopped) return;
        stopped = true;
        clearInterval(timer);
        this.io.stderr.write("\r\x1b[2K");
      },
    };
  }
}

/** A date-time as `YYYY-MM-DD HH:MM:SS` (UTC), or "-". */
export function shortTime(iso: string | null | undefined): string {
  return iso ? iso.replace("T", " ").replace(/\.\d+Z$/, "Z") : "-";
}

/** Milliseconds for people: `850 ms`, `2.4 s`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "-";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * Text a run produced (its logs, an error's message and stack) made safe for a terminal:
 * control characters but newline and tab are shown as `\xNN`, so that output a page put in a
 * log cannot move the cursor, retitle the window or hide lines.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** printable, on one line (for a table cell). */
export function printableLine(text: string): string {
  return printable(text).replace(/\n/g, " ");
}
