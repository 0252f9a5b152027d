import { BlockList, isIP } from "node:net";

/** A network of addresses that are no single public host. */
export interface RefusedNetwork {
  family: "ipv4" | "ipv6";
  /** Its first address. */
  network: string;
  prefix: number;
}

/**
 * The one address policy of the service: where neither a webhook nor a sandboxed run may go
 * unless the local network is allowed (BROWSERFN_ALLOW_LOCAL_NETWORK) — the host's own and
 * private networks, and addresses that are no single public host. The webhook sender checks
 * every address it connects to against it; the namespaces sandbox makes each IPv4 network of it
 * unreachable inside (lambdas/runtime/local/sandbox/sandboxNetwork.ts), with the host's own
 * subnets and gateways besides (lambdas/network/hostNetworks.ts).
 */
export const REFUSED_NETWORKS: readonly RefusedNetwork[] = [
  ...(
    [
      ["0.0.0.0", 8], // "this network", unspecified
      ["10.0.0.0", 8], // private (RFC 1918)
      ["100.64.0.0", 10], // carrier-grade NAT
      ["127.0.0.0", 8], // loopback
      ["169.254.0.0", 16], // link-local (cloud metadata endpoints live here)
      ["172.16.0.0", 12], // private (RFC 1918)
      ["192.0.0.0", 24], // IETF protocol assignments
      ["192.0.2.0", 24], // documentation (TEST-NET-1)
      ["198.51.100.0", 24], // documentation (TEST-NET-2)
      ["203.0.113.0", 24], // documentation (TEST-NET-3)
      ["192.168.0.0", 16], // private (RFC 1918)
      ["198.18.0.0", 15], // benchmarking
      ["224.0.0.0", 4], // multicast
      ["240.0.0.0", 4], // reserved, broadcast
    ] as const
  ).map(([network, prefix]) => ({ family: "ipv4" as const, network, prefix })),
  ...(
    [
      ["::", 128], // unspecified
      ["::1", 128], // loopback
      ["fc00::", 7], // unique local
      ["fe80::", 10], // link-local
      ["fec0::", 10], // site-local (deprecated, still private)
      ["ff00::", 8], // multicast
      ["2002::", 16], // 6to4: relays to an embedded IPv4 address that may be private
      ["2001:db8::", 32], // documentation
      ["100::", 64], // discard-only
      ["64:ff9b:1::", 48], // local-use NAT64 (RFC 8215): translated inside some network
    ] as const
  ).map(([network, prefix]) => ({ family: "ipv6" as const, network, prefix })),
];

const REFUSED = new BlockList();
for (const { network, prefix, family } of REFUSED_NETWORKS) REFUSED.addSubnet(network, prefix, family);

/**
 * The IPv4 address an IPv6 address carries, for the forms that reach it: IPv4-mapped
 * (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`, RFC 2765), IPv4-compatible
 * (`::a.b.c.d`) and NAT64 (`64:ff9b::a.b.c.d`); else null.
 */
function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address);
  if (!groups) return null;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  const mapped = zeros(0, 5) && groups[5] === 0xffff;
  const translated = zeros(0, 4) && groups[4] === 0xffff && groups[5] === 0;
  const compatible = zeros(0, 6) && (groups[6] !== 0 || (groups[7] ?? 0) > 1);
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6);
  if (!mapped && !translated && !compatible && !nat64) return null;
  const high = groups[6] ?? 0;
  const low = groups[7] ?? 0;
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included); null when it is not one. */
function expandIpv6(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.split("%")[0] ?? "";
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const bytes = dotted[1].split(".").map(Number);
    text = `${text.slice(0, -dotted[1].length)}${(((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0)).toString(16)}:${(((bytes[2] ?? 0) << 8) | (bytes[3] ?? 0)).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const part = (side: string) => (side === "" ? [] : side.split(":").map((group) => parseInt(group, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array<number>(Math.max(0, fill)).fill(0), ...right];
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

/**
 * Why `address` (an IP address, as resolved or written) is refused by REFUSED_NETWORKS, or null
 * when it is not: loopback, private (RFC 1918), unique-local, link-local, CGNAT, unspecified,
 * documentation, benchmarking, multicast and reserved addresses are refused, and so are IPv6
 * forms that carry one of those IPv4 addresses.
 */
export function refusedAddressReason(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return `'${address}' is not an IP address`;
  if (family === 4) return REFUSED.check(address, "ipv4") ? `${address} is a loopback, private, link-local or reserved address` : null;
  const inner = embeddedIpv4(address);
  if (inner !== null && REFUSED.check(inner, "ipv4")) return `${address} carries ${inner}, a loopback, private, link-local or reserved address`;
  return REFUSED.check(address.split("%")[0] ?? address, "ipv6") ? `${address} is a loopback, unique-local, link-local or multicast address` : null;
}

/** The host of a URL as an IP address when it is written as one (`[::1]` → `::1`), else null. */
export function literalAddressOf(hostname: string): string | null {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? null : bare;
}
