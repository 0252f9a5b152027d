import { MAX_SECRET_VALUE_BYTES, MIN_SECRET_VALUE_BYTES } from "../../lambdas/secrets/functionSecrets";
import { CliError } from "./args";
import { EXIT } from "./exitCodes";
import type { Io } from "./output";
import { askSecret } from "./prompt";

/**
 * The value for `secrets set`: the argument when one was given, else what is piped on stdin (up
 * to one final newline, so `echo "$X" |` sets what `printf %s "$X" |` does), else, on a
 * terminal, typed at a prompt that does not show it (surrounding spaces dropped). Empty, under
 * the service's 4 bytes or over its 4096, is a CliError (exit 2) before any request.
 */
export async function readSecretValue(io: Io, given: string | undefined, question: string): Promise<string> {
  const source = given !== undefined ? "argument" : io.stdin.isTTY === true ? "prompt" : "stdin";
  const value = given ?? (source === "prompt" ? await askSecret(io, question) : await readStdin(io.stdin));
  if (value === "") {
    throw new CliError(
      source === "stdin" ? "no value on stdin: pipe it in (printf %s \"$VALUE\" | browserfn secrets set …), or run it on a terminal to type it" : "the value is empty",
      EXIT.usage,
    );
  }
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes > MAX_SECRET_VALUE_BYTES) throw tooLong(bytes);
  if (bytes < MIN_SECRET_VALUE_BYTES) {
    throw new CliError(`the value is ${bytes} bytes; a secret's value is at least ${MIN_SECRET_VALUE_BYTES} (it is redacted wherever it occurs in a run's output)`, EXIT.usage);
  }
  return value;
}

function tooLong(bytes: number | string): CliError {
  return new CliError(`the value is ${bytes} bytes; a secret's value is at most ${MAX_SECRET_VALUE_BYTES} bytes of UTF-8`, EXIT.usage);
}

/** All of stdin as UTF-8, less one final line ending; reading stops past the size a value may have. */
async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk);
    chunks.push(buffer);
    total += buffer.length;
    // The value and a "\r\n" after it: anything longer is refused without reading the rest.
    if (total > MAX_SECRET_VALUE_BYTES + 2) throw tooLong(`over ${MAX_SECRET_VALUE_BYTES}`);
  }
  return Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "");
}
