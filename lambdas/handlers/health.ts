import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";

/** GET /health: liveness (open). */
export const health = defineRoute({ auth: false }, async () => json(200, { status: "ok" }));
