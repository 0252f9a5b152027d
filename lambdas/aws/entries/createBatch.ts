import { createBatch } from "../../handlers/createBatch";
import { lazyRoute } from "../lazyHandlers";
import { invokeRouteDeps } from "../routeDeps/invokeRouteDeps";

export const handler = lazyRoute(createBatch, invokeRouteDeps);
