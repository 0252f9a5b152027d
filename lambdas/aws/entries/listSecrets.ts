import { listSecrets } from "../../handlers/listSecrets";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(listSecrets);
