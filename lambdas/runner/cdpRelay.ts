/**
 * The relay between a worker and its browser's CDP pipe, in the sandbox's host (hostMain): the
 * worker gets one end of a socket pair, and its commands go on to the browser whole (through
 * cdpGuard when asked), so the host can speak to the browser itself when the worker is stuck.
 */
import { rmSync } from "node:fs";
import { type Server, Socket, createServer } from "node:net";
import path from "node:path";
import { keepDownloadsIn } from "./cdpDownloads";
import { guardCommand } from "./cdpGuard";
import { splitMessages } from "./pipeTransport";

/** A browser's CDP pipe as the host relays it: the worker's end, and a way for the host to take it over. */
export interface CdpRelay {
  workerEnd: Socket;
  toBrowser: Socket;
  fromBrowser: Socket;
  /** Stops relaying (the worker's commands are dropped from here on): the pipe is the host's. */
  takeOver(): void;
}

/**
 * A connected pair of Unix sockets (through a server on a path in the profile, closed at once):
 * one end for the worker; at the other, the worker's CDP commands go on to the browser whole
 * (downloads kept in `downloads` by keepDownloadsIn, then checked by guardCommand with
 * `guard`), and the browser's answers pass as they are.
 * Relaying whole messages lets the host speak to the browser itself when the worker is stuck.
 */
export async function relayedSocket(toBrowser: Socket, fromBrowser: Socket, profileDir: string, downloads: string, guard: boolean): Promise<CdpRelay> {
  const address = path.join(profileDir, ".cdp.sock");
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address, () => resolve());
  });
  const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
  const workerEnd = new Socket();
  await new Promise<void>((resolve, reject) => {
    workerEnd.once("error", reject);
    workerEnd.connect(address, () => resolve());
  });
  const hostEnd = await accepted;
  server.close();
  rmSync(address, { force: true });
  const relayCommands = splitMessages((message) => {
    const kept = keepDownloadsIn(message, downloads);
    const verdict = kept.ok && guard ? guardCommand(kept.message) : kept;
    if (verdict.ok) return void toBrowser.write(`${verdict.message}\0`);
    const answer = { id: verdict.id, ...(verdict.sessionId === undefined ? {} : { sessionId: verdict.sessionId }), error: { code: -32000, message: verdict.reason } };
    hostEnd.write(`${JSON.stringify(answer)}\0`);
  });
  hostEnd.on("data", relayCommands);
  fromBrowser.pipe(hostEnd);
  const close = () => {
    hostEnd.destroy();
    toBrowser.destroy();
  };
  hostEnd.once("close", close);
  fromBrowser.once("close", close);
  for (const socket of [hostEnd, toBrowser, fromBrowser]) socket.on("error", () => undefined);
  return {
    workerEnd,
    toBrowser,
    fromBrowser,
    takeOver() {
      hostEnd.off("data", relayCommands);
      fromBrowser.unpipe(hostEnd);
    },
  };
}
