import { createInterface } from "node:readline/promises";
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
