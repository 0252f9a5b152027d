import { makeRouteNotFound } from "../routeNotFound";

export const handler = makeRouteNotFound();
