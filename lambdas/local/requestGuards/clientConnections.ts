import type { Server } from "node:http";
import type { Duplex } from "node:stream";
import type { Socket } from "node:net";
import { clientAddress } from "./refusalPacing";

/** How long a refused connection is given to read its answer before it is closed. */
const REFUSED_CLOSE_MS = 1_000;

/**
 * Caps the connections one client address holds open at once: a connection past the cap is
 * answered `refusal` (a whole HTTP answer) and closed, and nothing it sends is answered.
 * Counts are by remote address (IPv4-mapped IPv6 folded to IPv4); a client's count falls as
 * its connections close. Returns whether a socket was refused (the request handler and the
 * parse-error handler leave those alone).
 */
export function capConnectionsPerClient(server: Server, maxPerClient: number, refusal: () => string): (socket: Duplex) => boolean {
  const open = new Map<string, number>();
  const refused = new WeakSet<Duplex>();
  // Before Node's own listener: the HTTP parser then reads a refused socket, but nothing answers it.
  server.prependListener("connection", (socket: Socket) => {
    const client = clientAddress(socket.remoteAddress);
    const count = (open.get(client) ?? 0) + 1;
    if (count > maxPerClient) {
      refused.add(socket);
      socket.on("error", () => socket.destroy());
      socket.end(refusal());
      setTimeout(() => socket.destroy(), REFUSED_CLOSE_MS).unref();
      return;
    }
    open.set(client, count);
    socket.once("close", () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left <= 0) open.delete(client);
      else open.set(client, left);
    });
  });
  return (socket) => refused.has(socket);
}

