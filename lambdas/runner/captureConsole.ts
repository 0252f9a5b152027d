import { format } from "node:util";

const LEVELS = ["log", "info", "warn", "error", "debug"] as const;
type Level = (typeof LEVELS)[number];

const TRUNCATED = "…[output truncated]\n";

/** Console output collected during a run. */
export interface ConsoleCapture {
  /** The lines so far, each `LEVEL message\n`, at most `maxBytes` UTF-8 bytes in all. */
  text(): string;
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
 * `util.format`ted and prefixed with its level; once `maxBytes` would be passed, the output is
 * cut there and ends with a `…[output truncated]` note (the note counts toward `maxBytes`).
 */
export function captureConsole(maxBytes: number, onText: (text: string) => void = () => undefined, redact: (line: string) => string = (line) => line): ConsoleCapture {
  const target = console as unknown as Record<Level, (...args: unknown[]) => void>;
  const originals = LEVELS.map((level) => [level, target[level]] as const);
  const noteBytes = Buffer.byteLength(TRUNCATED, "utf8");
  const chunks: string[] = [];
  let bytes = 0;
  let truncated = false;

  const append = (line: string): void => {
    const size = Buffer.byteLength(line, "utf8");
    if (bytes + size <= maxBytes - noteBytes) {
      chunks.push(line);
      bytes += size;
      onText(line);
      return;
    }
    truncated = true;
    const end = `${fitBytes(line, maxBytes - noteBytes - bytes)}${TRUNCATED}`;
    chunks.push(end);
    onText(end);
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
    restore() {
      if (restored) return;
      restored = true;
      for (const [level, original] of originals) target[level] = original;
    },
  };
}
