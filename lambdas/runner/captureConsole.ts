import { format } from "node:util";

const LEVELS = ["log", "info", "warn", "error", "debug"] as const;
type Level = (typeof LEVELS)[number];

const TRUNCATED = "…[output truncated]\n";

/** Console output collected during a run. */
export interface ConsoleCapture {
  /** The lines so far, each `LEVEL message\n`, at most `maxBytes` UTF-8 bytes in all. */
  text(): string;
  /**
   * Appends `ERROR <message>` from the runtime itself (the evidence of a failed run): written
   * even once the function's output was cut, into the `reserveBytes` held back for it.
   */
  note(message: string): void;
  /** Puts the console methods back as they were. Safe to call more than once. */
  restore(): void;
}

/** The longest prefix of `text` that fits in `bytes` UTF-8 bytes, never splitting a character. */
function fitBytes(text: string, bytes: number): string {
  let used = 0;
  let end = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, "utf8");
    if (used + size > bytes) break;
    used += size;
    end += char.length;
  }
  return text.slice(0, end);
}

/**
 * Replaces console.log/info/warn/error/debug with collectors. Each call becomes one entry,
 * `util.format`ted and prefixed with its level; once `maxBytes - reserveBytes` would be passed,
 * the output is cut there and ends with a `…[output truncated]` note (the note counts toward
 * it). The last `reserveBytes` are for the runtime's own notes (`note`), so that the evidence
 * of a failure is kept after any amount of output; all in all, the text stays within `maxBytes`.
 */
export function captureConsole(
  maxBytes: number,
  onText: (text: string) => void = () => undefined,
  redact: (line: string) => string = (line) => line,
  reserveBytes = 0,
): ConsoleCapture {
  const target = console as unknown as Record<Level, (...args: unknown[]) => void>;
  const originals = LEVELS.map((level) => [level, target[level]] as const);
  const noteBytes = Buffer.byteLength(TRUNCATED, "utf8");
  const userBytes = maxBytes - reserveBytes;
  const chunks: string[] = [];
  let bytes = 0;
  let truncated = false;

  const append = (line: string): void => {
    const size = Buffer.byteLength(line, "utf8");
    if (bytes + size <= userBytes - noteBytes) {
      push(line);
      return;
    }
    truncated = true;
    push(`${fitBytes(line, userBytes - noteBytes - bytes)}${TRUNCATED}`);
  };
  const push = (text: string): void => {
    chunks.push(text);
    bytes += Buffer.byteLength(text, "utf8");
    onText(text);
  };

  for (const level of LEVELS) {
    const prefix = level.toUpperCase();
    target[level] = (...args: unknown[]) => {
      if (!truncated) append(redact(`${prefix} ${format(...args)}\n`));
    };
  }

  let restored = false;
  return {
    text: () => chunks.join(""),
    note(message) {
      const line = redact(`ERROR ${message}\n`);
      const room = maxBytes - bytes;
      if (room <= 1) return;
      push(Buffer.byteLength(line, "utf8") <= room ? line : `${fitBytes(line, room - 1)}\n`);
    },
    restore() {
      if (restored) return;
      restored = true;
      for (const [level, original] of originals) target[level] = original;
    },
  };
}
