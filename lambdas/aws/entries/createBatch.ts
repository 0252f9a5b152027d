import { createBatch } from "../../handlers/createBatch";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(createBatch);
