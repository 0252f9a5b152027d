import { createInterface } from "node:readline/promises";
import { CliError } from "./args";
import type { Io } from "./output";

/** Asks one question on the terminal (prompt on stderr) and returns the trimmed answer. */
export async function ask(io: Io, question: string): Promise<string> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: io.stdin.isTTY === true });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

/** A terminal's stdin, which can stop echoing what is typed. */
type RawInput = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };

const ENTER = new Set(["\r", "\n", "\u0004"]); // Enter, or Ctrl-D
const CTRL_C = "\u0003";
const BACKSPACE = new Set(["\u007f", "\b"]);
/** What a shell reports for a command stopped by Ctrl-C (128 + SIGINT). */
const CANCELLED_EXIT = 130;

/**
 * Asks for a secret (an API key): what is typed is not shown. On a terminal stdin goes to raw
 * mode until Enter (Ctrl-C cancels, exit code 130; Backspace edits); anywhere else it is `ask`.
 */
export async function askSecret(io: Io, question: string): Promise<string> {
  const input = io.stdin as RawInput;
  if (input.isTTY !== true || typeof input.setRawMode !== "function") return ask(io, question);
  io.stderr.write(question);
  input.setRawMode(true);
  input.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = "";
      const onData = (chunk: Buffer | string) => {
        for (const char of String(chunk)) {
          if (ENTER.has(char)) return done(() => resolve(typed.trim()));
          if (char === CTRL_C) return done(() => reject(new CliError("cancelled", CANCELLED_EXIT)));
          typed = BACKSPACE.has(char) ? typed.slice(0, -1) : typed + char;
        }
      };
      const done = (settle: () => void) => {
        input.removeListener("data", onData);
        io.stderr.write("\n");
        settle();
      };
      input.on("data", onData);
    });
  } finally {
    input.setRawMode(false);
    input.pause();
  }
}
