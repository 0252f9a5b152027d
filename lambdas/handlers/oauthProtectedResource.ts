import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { protectedResourceMetadata } from "../mcp/protectedResource";

/** GET /.well-known/oauth-protected-resource (open): RFC 9728 metadata of the MCP endpoint. */
export const oauthProtectedResource = defineRoute({ auth: false }, async ({ baseUrl }, deps) =>
  json(200, protectedResourceMetadata(baseUrl, deps.config.oauthIssuer ?? null), { "cache-control": "public, max-age=300" }),
);
