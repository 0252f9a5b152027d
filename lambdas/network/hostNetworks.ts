import { readFileSync } from "node:fs";
import { type NetworkInterfaceInfo, networkInterfaces } from "node:os";
import { ipv4Cidr } from "./ipv4";

/** The IPv4 networks this machine is attached to, as the sandbox must refuse them (CIDRs, network address first). */
export interface HostNetworks {
  /** Each address of the host's interfaces (loopback aside), as a /32. */
  addresses: string[];
  /** The subnet each of those addresses is on: every neighbour on the host's links. */
  subnets: string[];
  /** Each gateway of the host's routing table, as a /32: whatever its range, it is the host's local network. */
  gateways: string[];
}

/**
 * The host's own addresses, the subnets of its interfaces and its gateways (IPv4), read now:
 * an interface or route added since the service started counts for the next sandbox.
 */
export function hostNetworks(
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
  routeTable: string = readRouteTable(),
): HostNetworks {
  const ipv4 = Object.values(interfaces)
    .flat()
    .filter((info): info is NetworkInterfaceInfo => info !== undefined && info.family === "IPv4" && !info.internal);
  const subnets = ipv4.map((info) => ipv4Cidr(info.cidr ?? `${info.address}/32`)).filter((cidr): cidr is string => cidr !== null);
  return {
    addresses: unique(ipv4.map((info) => `${info.address}/32`)),
    subnets: unique(subnets),
    gateways: unique(routeGateways(routeTable).map((gateway) => `${gateway}/32`)),
  };
}

function readRouteTable(): string {
  try {
    return readFileSync("/proc/net/route", "utf8");
  } catch {
    return ""; // not Linux: no gateways known
  }
}

/**
 * The gateways of a /proc/net/route table: its Gateway column (an IPv4 address in hex, in the
 * machine's byte order, little-endian on every machine this runs on) where it is not 0.
 */
export function routeGateways(table: string): string[] {
  const gateways: string[] = [];
  for (const line of table.split("\n").slice(1)) {
    const hex = line.trim().split(/\s+/)[2];
    if (!hex || !/^[0-9A-Fa-f]{8}$/.test(hex)) continue;
    const value = Number.parseInt(hex, 16);
    if (value === 0) continue;
    // Little-endian: the first octet is the lowest byte.
    gateways.push([value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, value >>> 24].join("."));
  }
  return unique(gateways);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
