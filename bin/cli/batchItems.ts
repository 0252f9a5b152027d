import { readFile } from "node:fs/promises";
import { CliError } from "./args";
import { EXIT } from "./exitCodes";

/** The most items a batch may have (the service's MAX_BATCH_ITEMS). */
const MAX_ITEMS = 1000;
/** How many bad lines are listed at most. */
const SHOWN_BAD_LINES = 20;

/**
 * The items of `--batch FILE` (JSON Lines: one JSON object of parameters a line; blank lines
 * are skipped), read before anything is sent: a line that is not a JSON object, an empty file
 * or more than 1,000 items is a CliError (exit 2) naming each bad line by its number.
 */
export async function readBatchItems(file: string, stdin: NodeJS.ReadableStream): Promise<Record<string, unknown>[]> {
  const text = file === "-" ? await readAll(stdin) : await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read ${file}: ${error.code ?? error.message}`, EXIT.usage);
  });
  const items: Record<string, unknown>[] = [];
  const bad: string[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === "") return;
    const number = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      bad.push(`line ${number}: not valid JSON (${(error as Error).message})`);
      return;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      bad.push(`line ${number}: not a JSON object of parameters (got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value})`);
      return;
    }
    items.push(value as Record<string, unknown>);
  });
  if (bad.length > 0) {
    const shown = bad.slice(0, SHOWN_BAD_LINES).join("\n  ");
    const more = bad.length > SHOWN_BAD_LINES ? `\n  … and ${bad.length - SHOWN_BAD_LINES} more` : "";
    throw new CliError(`${file}: ${bad.length} bad line(s); nothing was sent:\n  ${shown}${more}`, EXIT.usage);
  }
  if (items.length === 0) throw new CliError(`${file}: no items (one JSON object of parameters a line); nothing was sent`, EXIT.usage);
  if (items.length > MAX_ITEMS) throw new CliError(`${file}: ${items.length} items; a batch has at most ${MAX_ITEMS}; nothing was sent`, EXIT.usage);
  return items;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}
