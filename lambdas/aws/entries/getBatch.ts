import { getBatch } from "../../handlers/getBatch";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(getBatch, dataRouteDeps);
