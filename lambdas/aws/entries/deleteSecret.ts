import { deleteSecret } from "../../handlers/deleteSecret";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(deleteSecret);
