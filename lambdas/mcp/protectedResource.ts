/** Where the API publishes its OAuth protected resource metadata (RFC 9728), under its base URL. */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";

/** The MCP endpoint's path under the base URL. */
export const MCP_PATH = "/mcp";

/** The protected resource metadata of the MCP endpoint (RFC 9728 §2). */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: ["header"];
  resource_name: string;
}

/**
 * What an MCP client reads to find where to get a token for `{baseUrl}/mcp`: the configured
 * OAuth issuer (Cognito on AWS), or none (API keys only). Tokens go in the `Authorization` header.
 */
export function protectedResourceMetadata(baseUrl: string, oauthIssuer: string | null): ProtectedResourceMetadata {
  return {
    resource: `${baseUrl}${MCP_PATH}`,
    authorization_servers: oauthIssuer ? [oauthIssuer] : [],
    bearer_methods_supported: ["header"],
    resource_name: "browserfn",
  };
}

/** The `WWW-Authenticate` challenge of a 401 from /mcp: it names the metadata document (RFC 9728 §5.1). */
export function mcpChallenge(baseUrl: string): Record<string, string> {
  return { "www-authenticate": `Bearer resource_metadata="${baseUrl}${PROTECTED_RESOURCE_PATH}"` };
}
