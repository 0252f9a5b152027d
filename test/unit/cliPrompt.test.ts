import { PassThrough } from "node:stream";
import { CliError } from "../../bin/cli/args";
import { askSecret } from "../../bin/cli/prompt";
import type { Io } from "../../bin/cli/output";

/** A terminal, faked: stdin that records its raw mode, stderr that records what was shown. */
function fakeTerminal(isTTY = true) {
  const stdin = Object.assign(new PassThrough(), { isTTY, rawModes: [] as boolean[], setRawMode: undefined as unknown });
  stdin.setRawMode = (raw: boolean) => stdin.rawModes.push(raw);
  const stderr = new PassThrough();
  let shown = "";
  stderr.on("data", (chunk: Buffer) => (shown += String(chunk)));
  const io: Io = { stdin, stderr, stdout: new PassThrough(), env: {} };
  return { io, stdin, shown: () => shown };
}

describe("askSecret (the API key prompt of `browserfn login`)", () => {
  it("reads the key without showing it, taking Backspace into account, and leaves raw mode", async () => {
    const terminal = fakeTerminal();
    const answer = askSecret(terminal.io, "API key (not shown): ");
    terminal.stdin.write("bfn_secreX");
    terminal.stdin.write("\u007ft\r");
    await expect(answer).resolves.toBe("bfn_secret");
    expect(terminal.shown()).toBe("API key (not shown): \n");
    expect(terminal.stdin.rawModes).toEqual([true, false]);
  });

  it("is cancelled by Ctrl-C with exit code 130, still leaving raw mode", async () => {
    const terminal = fakeTerminal();
    const answer = askSecret(terminal.io, "API key: ");
    terminal.stdin.write("bfn_\u0003");
    const error = await answer.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({ message: "cancelled", exitCode: 130 });
    expect(terminal.shown()).not.toContain("bfn_");
    expect(terminal.stdin.rawModes).toEqual([true, false]);
  });

  it("reads a line as it is when stdin is not a terminal", async () => {
    const terminal = fakeTerminal(false);
    const answer = askSecret(terminal.io, "API key: ");
    terminal.stdin.end("bfn_piped\n");
    await expect(answer).resolves.toBe("bfn_piped");
    expect(terminal.stdin.rawModes).toEqual([]);
  });
});
