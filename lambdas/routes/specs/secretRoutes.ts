import { PutSecretBody, SecretList } from "../../schemas/secretSchemas";
import { SecretNameParam } from "../../schemas/pathSchemas";
import type { RouteSpec } from "../routeSpec";

/** A function's secrets. */
export const SECRET_ROUTES = [
  {
    operationId: "putSecret",
    method: "PUT",
    path: "/functions/{ref}/secrets/{name}",
    summary: "Set one of the function's secrets (its runs read it with secrets.get; the value is never returned and is redacted as [secret])",
    tag: "secrets",
    auth: true,
    status: 204,
    body: PutSecretBody,
    params: { name: SecretNameParam },
    errors: ["function_not_found", "invalid_name"],
  },
  {
    operationId: "listSecrets",
    method: "GET",
    path: "/functions/{ref}/secrets",
    summary: "The names of the function's secrets and when each was set (never their values)",
    tag: "secrets",
    auth: true,
    status: 200,
    response: SecretList,
    errors: ["function_not_found"],
  },
  {
    operationId: "deleteSecret",
    method: "DELETE",
    path: "/functions/{ref}/secrets/{name}",
    summary: "Remove one of the function's secrets",
    tag: "secrets",
    auth: true,
    status: 204,
    params: { name: SecretNameParam },
    errors: ["function_not_found", "invalid_name", "secret_not_found"],
  },
] as const satisfies readonly RouteSpec[];
