import { deleteFunction } from "../../handlers/deleteFunction";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(deleteFunction);
