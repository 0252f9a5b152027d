import type { Deps } from "../../deps";
import { readAwsEnv } from "../awsConfig";
import { createRouteBase } from "./routeBase";

/** The `data` routes (lib/routeRoles.ts): the table only. Bundles the DynamoDB client alone (#23.12). */
export const dataRouteDeps = (): Deps => createRouteBase(readAwsEnv(process.env), "data routes'");

/** The open routes (health, OpenAPI, the dashboard, OAuth metadata): no port beyond the base (their role writes logs only). */
export const openRouteDeps = (): Deps => createRouteBase(readAwsEnv(process.env), "open routes'");
