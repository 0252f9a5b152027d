import { mkdtempSync, rmSync } from "node:fs";
import { type Server, Socket, createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { CdpRelay } from "../../lambdas/runner/cdpRelay";
import { splitMessages } from "../../lambdas/runner/pipeTransport";

// The security review of session 12: a worker cut off before the browser answered one of its
// root-session commands must not have that answer handed to the next worker, whose drivers
// count their ids from 1 too; and the kept browser is not handed on while one is outstanding.

/** Collects the NUL-separated messages a socket receives. */
function collect(socket: Socket): string[] {
  const messages: string[] = [];
  socket.on("data", splitMessages((message) => messages.push(message)));
  return messages;
}

const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!check()) throw new Error("timed out");
};

describe("CdpRelay: an earlier worker's late answers", () => {
  let dir: string;
  let server: Server;
  let browser: Socket;
  let relay: CdpRelay;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "relay-"));
    server = createServer();
    const address = path.join(dir, "browser.sock");
    await new Promise<void>((resolve) => server.listen(address, resolve));
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
    const relayEnd = new Socket();
    await new Promise<void>((resolve) => relayEnd.connect(address, resolve));
    browser = await accepted;
    relay = new CdpRelay(relayEnd, relayEnd, dir, path.join(dir, "Downloads"), false);
  });

  afterEach(async () => {
    relay.disconnectWorker();
    browser.destroy();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it("drops an answer meant for a worker that was cut off, and counts it unanswered until it comes", async () => {
    const atBrowser = collect(browser);
    const first = await relay.connectWorker();
    first.write('{"id":1,"method":"Target.getTargets"}\0');
    await until(() => atBrowser.length === 1);
    relay.disconnectWorker();
    expect(relay.unansweredCommands).toBe(1);

    const second = await relay.connectWorker();
    const heard = collect(second);
    second.write('{"id":1,"method":"Target.getBrowserContexts"}\0');
    await until(() => atBrowser.length === 2);
    // The browser answers in order: the first worker's command first.
    browser.write('{"id":1,"result":{"targetInfos":["of the first run"]}}\0');
    browser.write('{"id":1,"result":{"browserContextIds":[]}}\0');
    await until(() => heard.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toEqual(['{"id":1,"result":{"browserContextIds":[]}}']);
    expect(relay.unansweredCommands).toBe(0);
    second.destroy();
  });
});
