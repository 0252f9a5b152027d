import { PassThrough } from "node:stream";
import { CliError } from "../../bin/cli/args";
import type { Io } from "../../bin/cli/output";
import { readSecretValue } from "../../bin/cli/secretValue";

/** stdin as a terminal (raw mode recorded) or a pipe; stderr records what was shown. */
function fakeIo(isTTY: boolean) {
  const stdin = Object.assign(new PassThrough(), { isTTY, rawModes: [] as boolean[], setRawMode: undefined as unknown });
  if (isTTY) stdin.setRawMode = (raw: boolean) => stdin.rawModes.push(raw);
  const stderr = new PassThrough();
  let shown = "";
  stderr.on("data", (chunk: Buffer) => (shown += String(chunk)));
  const io: Io = { stdin, stderr, stdout: new PassThrough(), env: {} };
  return { io, stdin, shown: () => shown };
}

describe("readSecretValue (the value of `browserfn secrets set`)", () => {
  it("on a terminal, asks for it without showing what is typed", async () => {
    const terminal = fakeIo(true);
    const value = readSecretValue(terminal.io, undefined, "Value of TOKEN for f (not shown): ");
    terminal.stdin.write("s3cr3");
    terminal.stdin.write("t\r");
    await expect(value).resolves.toBe("s3cr3t");
    expect(terminal.shown()).toBe("Value of TOKEN for f (not shown): \n");
    expect(terminal.stdin.rawModes).toEqual([true, false]);
  });

  it("reads a pipe whole, keeping inner newlines and dropping one final line ending", async () => {
    const piped = fakeIo(false);
    const value = readSecretValue(piped.io, undefined, "unused");
    piped.stdin.write("line one\n");
    piped.stdin.end(" line two \r\n");
    await expect(value).resolves.toBe("line one\n line two ");
    expect(piped.shown()).toBe("");
  });

  it("takes a given value as it is, without reading stdin", async () => {
    const terminal = fakeIo(true);
    await expect(readSecretValue(terminal.io, "given\n", "unused")).resolves.toBe("given\n");
    expect(terminal.stdin.rawModes).toEqual([]);
  });

  it("refuses an empty value and one over 4096 bytes of UTF-8 (exit 2)", async () => {
    const empty = fakeIo(false);
    const none = readSecretValue(empty.io, undefined, "unused");
    empty.stdin.end("");
    await expect(none).rejects.toEqual(new CliError('no value on stdin: pipe it in (printf %s "$VALUE" | browserfn secrets set …), or run it on a terminal to type it', 2));
    await expect(readSecretValue(fakeIo(true).io, "", "unused")).rejects.toMatchObject({ message: "the value is empty", exitCode: 2 });
    // 2049 two-byte characters: 4098 bytes.
    await expect(readSecretValue(fakeIo(true).io, "é".repeat(2049), "unused")).rejects.toMatchObject({
      message: "the value is 4098 bytes; a secret's value is at most 4096 bytes of UTF-8",
      exitCode: 2,
    });
    await expect(readSecretValue(fakeIo(true).io, "é".repeat(2048), "unused")).resolves.toHaveLength(2048);
  });
});
