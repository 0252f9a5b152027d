import { putSecret } from "../../handlers/putSecret";
import { lazyRoute } from "../lazyHandlers";
import { secretsRouteDeps } from "../routeDeps/secretsRouteDeps";

export const handler = lazyRoute(putSecret, secretsRouteDeps);
