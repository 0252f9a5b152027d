import { spawn } from "node:child_process";
import path from "node:path";
import type { Readable } from "node:stream";
import { keepTail } from "../../../runner/streamTail";
import type { Sandbox } from "./sandbox";
import type { CpuPlacement } from "./sandboxedHost";
import { hostNetworks } from "../../../network/hostNetworks";
import { quietPipes } from "./childPipes";
import { refusedRoutes } from "./refusedRoutes";

const READY_TIMEOUT_MS = 20_000;

/**
 * Gives the sandbox's network namespace its way out: slirp4netns (user-mode NAT, host
 * loopback refused, no IPv6), then routes that make the service's refused networks and the
 * host's own addresses, subnets and gateways unreachable (refusedRoutes, with the host's
 * networks as they are now). slirp4netns, which moves every packet of the sandbox, goes under the
 * sandbox's account's CPU share (`placeCpu`), not the service's. Returns what stops it again.
 */
export async function connectNetwork(sandbox: Sandbox, pid: number, asRoot: boolean, placeCpu?: CpuPlacement): Promise<() => Promise<void>> {
  // fd 3: slirp4netns says "1" when the network is up; fd 4: closing it (or this process dying) stops slirp4netns.
  const slirp = quietPipes(spawn(
    sandbox.tools.slirp4netns,
    [
      "--configure",
      "--mtu=65520",
      "--disable-host-loopback",
      "--ready-fd=3",
      "--exit-fd=4",
      // By path: joining by pid enters the sandbox's user namespace first, where root may not set its network.
      ...(asRoot ? [] : [`--userns-path=/proc/${pid}/ns/user`]),
      "--netns-type=path",
      `/proc/${pid}/ns/net`,
      "tap0",
    ],
    { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
  ));
  let released: (() => Promise<void>) | undefined;
  const stop = async () => {
    if (slirp.exitCode === null && slirp.signalCode === null) {
      const gone = new Promise((resolve) => slirp.once("exit", resolve));
      slirp.kill("SIGKILL");
      await gone;
    }
    await released?.();
  };
  try {
    if (placeCpu && slirp.pid !== undefined) released = await placeCpu([slirp.pid]);
    await new Promise<void>((resolve, reject) => {
      const stderr = keepTail(slirp.stdio[2]);
      const timer = setTimeout(() => reject(new Error("slirp4netns did not configure the network in time")), READY_TIMEOUT_MS);
      (slirp.stdio[3 as number] as Readable).once("data", () => {
        clearTimeout(timer);
        resolve();
      });
      slirp.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`slirp4netns exited (${code}): ${stderr()}`));
      });
    });
    const routes = refusedRoutes(hostNetworks())
      .map((cidr) => `route add unreachable ${cidr}`)
      .join("\n");
    const enter = asRoot ? [`--net=/proc/${pid}/ns/net`] : [`--user=/proc/${pid}/ns/user`, "--preserve-credentials", `--net=/proc/${pid}/ns/net`];
    await run(sandbox.tools.nsenter, [...enter, sandbox.tools.ip, "-batch", "-"], `${routes}\n`);
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}

function run(command: string, args: string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "ignore", "pipe"] });
    const stderr = keepTail(child.stderr);
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(command)} ${args.join(" ")}: exit ${code}: ${stderr()}`))));
    child.stdin?.end(input);
  });
}
