import { getBatch } from "../../handlers/getBatch";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(getBatch);
