import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

/** slirp4netns's DNS forwarder, as a sandbox on its network sees it. */
const SLIRP_DNS = "10.0.2.3";

/**
 * The few /etc files a namespaces sandbox gets instead of the host's: its own resolver (the
 * NAT's, or the host's when the sandbox shares the host's network), hosts, and a passwd and
 * group that name only the sandbox's user. Returns their folder.
 */
export async function writeSandboxEtc(runtimeDir: string, sharesHostNetwork: boolean): Promise<string> {
  const dir = path.join(runtimeDir, "sandbox-etc");
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o755);
  const resolv = sharesHostNetwork ? await readFile("/etc/resolv.conf", "utf8").catch(() => "") : `nameserver ${SLIRP_DNS}\n`;
  const files: Record<string, string> = {
    "resolv.conf": resolv,
    hosts: "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n",
    passwd: "root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:1000:1000:browserfn sandbox:/tmp:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    group: "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n",
  };
  for (const [name, text] of Object.entries(files)) {
    await writeFile(path.join(dir, name), text);
    await chmod(path.join(dir, name), 0o644);
  }
  return dir;
}
