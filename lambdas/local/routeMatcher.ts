import type { Route } from "../routes/routeTable";

export type RouteMatch =
  | { kind: "found"; route: Route; params: Record<string, string> }
  | { kind: "wrong_method"; allowed: string[] }
  | { kind: "not_found" };

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  names: string[];
}

/** Matches method + path against API Gateway path templates (`/functions/{ref}/info`). */
export function createRouteMatcher(routes: Route[]): (method: string, path: string) => RouteMatch {
  const compiled: CompiledRoute[] = routes.map((route) => {
    const names: string[] = [];
    const source = route.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)\}/g, (_m, name: string) => {
      names.push(name);
      return "([^/]+)";
    });
    return { route, pattern: new RegExp(`^${source}$`), names };
  });
  return (method, path) => {
    const allowed: string[] = [];
    for (const { route, pattern, names } of compiled) {
      const match = pattern.exec(path);
      if (!match) continue;
      if (route.method !== method) {
        allowed.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      names.forEach((name, i) => {
        params[name] = safeDecode(match[i + 1] ?? "");
      });
      return { kind: "found", route, params };
    }
    return allowed.length > 0 ? { kind: "wrong_method", allowed } : { kind: "not_found" };
  };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
