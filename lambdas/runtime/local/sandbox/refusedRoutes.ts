import { REFUSED_NETWORKS } from "../../../network/addressPolicy";
import type { HostNetworks } from "../../../network/hostNetworks";
import { type Ipv4Network, formatIpv4Cidr, ipv4Covers, parseIpv4Cidr } from "../../../network/ipv4";

/** slirp4netns's virtual network as a sandbox sees it (its default): the sandbox's address, its gateway and DNS. */
export const SLIRP_NETWORK = "10.0.2.0/24";

/**
 * The IPv4 networks a sandbox's network namespace makes unreachable when the local network is
 * not allowed: the service's address policy (REFUSED_NETWORKS, as webhooks obey it), then the
 * host's subnets, gateways and own addresses, whatever their range, where the policy does not
 * already cover them. None inside slirp4netns's own virtual network: addresses there are the
 * sandbox's gateway and DNS, never the host's links (a more specific route to them would cut
 * the sandbox off). Each CIDR once, so `ip route add` never meets one twice.
 */
export function refusedRoutes(host: HostNetworks): string[] {
  const slirp = parseIpv4Cidr(SLIRP_NETWORK) as Ipv4Network;
  const chosen: Ipv4Network[] = [];
  const candidates = [
    ...REFUSED_NETWORKS.filter((network) => network.family === "ipv4").map((network) => `${network.network}/${network.prefix}`),
    ...host.subnets,
    ...host.gateways,
    ...host.addresses,
  ];
  for (const cidr of candidates) {
    const network = parseIpv4Cidr(cidr);
    if (!network || ipv4Covers(slirp, network)) continue;
    if (chosen.some((taken) => ipv4Covers(taken, network))) continue;
    chosen.push(network);
  }
  return chosen.map(formatIpv4Cidr);
}
