import { putSecret } from "../../handlers/putSecret";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(putSecret);
