import { isIPv4 } from "node:net";

/** An IPv4 network: its first address as a number, and its prefix length. */
export interface Ipv4Network {
  base: number;
  prefix: number;
}

function toInt(address: string): number {
  return address.split(".").reduce((value, octet) => value * 256 + Number(octet), 0);
}

export function ipv4FromInt(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join(".");
}

function mask(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** `a.b.c.d/n` (any address of the network) as its network, or null when it is not one. */
export function parseIpv4Cidr(cidr: string): Ipv4Network | null {
  const [address = "", prefixText = "32", extra] = cidr.split("/");
  const prefix = Number(prefixText);
  if (extra !== undefined || !isIPv4(address) || !/^\d{1,2}$/.test(prefixText) || prefix > 32) return null;
  return { base: (toInt(address) & mask(prefix)) >>> 0, prefix };
}

/** `a.b.c.d/n` written with its network address (`192.0.2.2/24` → `192.0.2.0/24`), or null when it is not one. */
export function ipv4Cidr(cidr: string): string | null {
  const network = parseIpv4Cidr(cidr);
  return network ? formatIpv4Cidr(network) : null;
}

export function formatIpv4Cidr(network: Ipv4Network): string {
  return `${ipv4FromInt(network.base)}/${network.prefix}`;
}

/** True when every address of `inner` is in `outer`. */
export function ipv4Covers(outer: Ipv4Network, inner: Ipv4Network): boolean {
  return outer.prefix <= inner.prefix && (inner.base & mask(outer.prefix)) >>> 0 === outer.base;
}
