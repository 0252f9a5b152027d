import { REFUSED_NETWORKS, refusedAddressReason } from "../../lambdas/network/addressPolicy";
import { hostNetworks, routeGateways } from "../../lambdas/network/hostNetworks";
import { ipv4Cidr } from "../../lambdas/network/ipv4";
import { refusedRoutes } from "../../lambdas/runtime/local/sandbox/refusedRoutes";

// This machine's table, as /proc/net/route writes it: a default route via 192.0.2.1, and its link.
const ROUTE_TABLE = `Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
wg0\t0000000A\t0900210B\t0003\t0\t0\t0\t0000FFFF\t0\t0\t0
`;

const iface = (address: string, cidr: string, internal = false) => ({ address, netmask: "", family: "IPv4" as const, mac: "", internal, cidr });

describe("the host's networks", () => {
  it("reads gateways from the route table, whatever their range", () => {
    expect(routeGateways(ROUTE_TABLE)).toEqual(["192.0.2.1", "11.33.0.9"]);
    expect(routeGateways("")).toEqual([]);
    expect(routeGateways("Iface\tDestination\tGateway\neth0\t00000000\tnothex!!\n")).toEqual([]);
  });

  it("lists the host's addresses, the subnets of its interfaces (network address first) and its gateways", () => {
    const found = hostNetworks(
      {
        lo: [iface("127.0.0.1", "127.0.0.1/8", true)],
        eth0: [iface("192.0.2.2", "192.0.2.2/24"), { address: "fd00::2", netmask: "", family: "IPv6", mac: "", internal: false, cidr: "fd00::2/64", scopeid: 0 }],
        dummy0: [iface("11.22.33.1", "11.22.33.1/20")],
      },
      ROUTE_TABLE,
    );
    expect(found).toEqual({
      addresses: ["192.0.2.2/32", "11.22.33.1/32"],
      subnets: ["192.0.2.0/24", "11.22.32.0/20"],
      gateways: ["192.0.2.1/32", "11.33.0.9/32"],
    });
  });

  it("writes CIDRs with their network address", () => {
    expect(ipv4Cidr("192.0.2.2/24")).toBe("192.0.2.0/24");
    expect(ipv4Cidr("10.1.2.3/0")).toBe("0.0.0.0/0");
    expect(ipv4Cidr("10.1.2.3/33")).toBeNull();
    expect(ipv4Cidr("nope/8")).toBeNull();
  });
});

describe("the namespaces sandbox's unreachable routes", () => {
  const none = { addresses: [], subnets: [], gateways: [] };

  it("are the webhook policy's IPv4 networks, every one of them", () => {
    const routes = refusedRoutes(none);
    const policy = REFUSED_NETWORKS.filter((network) => network.family === "ipv4").map((network) => `${network.network}/${network.prefix}`);
    expect(routes).toEqual(policy);
    for (const documentation of ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"]) expect(routes).toContain(documentation);
    // The same networks the webhook sender refuses.
    for (const route of routes) expect(refusedAddressReason(route.split("/")[0] as string)).not.toBeNull();
  });

  it("add the host's subnets, gateways and addresses the policy does not cover, each once", () => {
    const routes = refusedRoutes({
      addresses: ["192.0.2.2/32", "11.22.33.1/32", "45.1.2.3/32"],
      subnets: ["192.0.2.0/24", "11.22.32.0/20", "192.168.7.0/24"],
      gateways: ["192.0.2.1/32", "11.22.33.7/32", "45.9.9.9/32", "45.9.9.9/32"],
    });
    const added = routes.slice(REFUSED_NETWORKS.filter((network) => network.family === "ipv4").length);
    expect(added).toEqual(["11.22.32.0/20", "45.9.9.9/32", "45.1.2.3/32"]);
    expect(new Set(routes).size).toBe(routes.length);
  });

  it("leave slirp4netns's own network alone: a host on 10.0.2.0/24 keeps its sandboxes' gateway and DNS", () => {
    const routes = refusedRoutes({ addresses: ["10.0.2.15/32"], subnets: ["10.0.2.0/24", "10.0.2.0/25"], gateways: ["10.0.2.2/32", "10.0.3.1/32"] });
    expect(routes.filter((route) => route.startsWith("10.0.2."))).toEqual([]);
    expect(routes).toContain("10.0.0.0/8"); // less specific than slirp's own route: the rest of 10/8 stays refused
  });
});
