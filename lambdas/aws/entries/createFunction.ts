import { createFunction } from "../../handlers/createFunction";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(createFunction);
