import { type ChildProcess, execFileSync, spawn } from "node:child_process";

/**
 * A neighbour on a link of this machine, made for a test (root only): a network namespace
 * joined to the host by a veth pair, the host's end on `hostCidr`, the neighbour's on
 * `neighbour`, with more addresses of its own (`behind`, on its loopback) that the host routes
 * through it as a gateway. An HTTP server in it answers on every one of its addresses with the
 * address it was asked on. Everything is removed by `remove` (the namespace takes its end of
 * the pair, and the host's end and routes go with it).
 */
export interface NeighbourNetwork {
  port: number;
  remove(): Promise<void>;
}

const SERVER = `const http = require("node:http");
const server = http.createServer((request, response) => {
  response.setHeader("content-type", "text/html");
  response.end("<title>neighbour " + request.socket.localAddress + "</title>neighbour");
});
server.listen(0, "0.0.0.0", () => process.stdout.write(String(server.address().port) + "\\n"));`;

function ip(...args: string[]): void {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
}

export async function startNeighbourNetwork(options: { hostCidr: string; neighbour: string; prefix: number; behind: string[] }): Promise<NeighbourNetwork> {
  const tag = `${process.pid % 100000}`;
  const namespace = `bfn-test-${tag}`;
  const hostEnd = `bfh${tag}`;
  const farEnd = `bfn${tag}`;
  let server: ChildProcess | undefined;
  const remove = async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      const gone = new Promise((resolve) => server?.once("exit", resolve));
      server.kill("SIGKILL");
      await gone;
    }
    for (const args of [["netns", "del", namespace], ["link", "del", hostEnd]]) {
      try {
        ip(...args);
      } catch {
        // not made, or gone with the namespace
      }
    }
  };
  try {
    ip("netns", "add", namespace);
    ip("link", "add", hostEnd, "type", "veth", "peer", "name", farEnd, "netns", namespace);
    ip("addr", "add", options.hostCidr, "dev", hostEnd);
    ip("link", "set", hostEnd, "up");
    const inside = (...args: string[]) => ip("netns", "exec", namespace, "ip", ...args);
    inside("link", "set", "lo", "up");
    inside("addr", "add", `${options.neighbour}/${options.prefix}`, "dev", farEnd);
    inside("link", "set", farEnd, "up");
    for (const address of options.behind) {
      inside("addr", "add", `${address}/32`, "dev", "lo");
      ip("route", "add", `${address}/32`, "via", options.neighbour, "dev", hostEnd);
    }
    const started = spawn("ip", ["netns", "exec", namespace, process.execPath, "-e", SERVER], { stdio: ["ignore", "pipe", "pipe"] });
    server = started;
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the neighbour's server did not start")), 10_000);
      started.stdout?.once("data", (chunk: Buffer) => {
        clearTimeout(timer);
        resolve(Number(chunk.toString("utf8").trim()));
      });
      started.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`the neighbour's server exited (${code})`));
      });
    });
    return { port, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
