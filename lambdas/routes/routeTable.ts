import { createApiKey } from "../handlers/createApiKey";
import { createBatch } from "../handlers/createBatch";
import { createFunction } from "../handlers/createFunction";
import { getBatch } from "../handlers/getBatch";
import { listBatchRuns } from "../handlers/listBatchRuns";
import { dashboard } from "../handlers/dashboard";
import { dashboardAsset } from "../handlers/dashboardAsset";
import { deleteApiKey } from "../handlers/deleteApiKey";
import { deleteFunction } from "../handlers/deleteFunction";
import { forkFunction } from "../handlers/forkFunction";
import { getFunctionInfo } from "../handlers/getFunctionInfo";
import { getFunctionOpenapi } from "../handlers/getFunctionOpenapi";
import { getLogs } from "../handlers/getLogs";
import { getMetrics } from "../handlers/getMetrics";
import { getArtifact } from "../handlers/getArtifact";
import { cancelRun } from "../handlers/cancelRun";
import { getRun } from "../handlers/getRun";
import { listRuns } from "../handlers/listRuns";
import { getRunEvents } from "../handlers/getRunEvents";
import { getRunLive } from "../handlers/getRunLive";
import { listArtifacts } from "../handlers/listArtifacts";
import { getUsage } from "../handlers/getUsage";
import { getVersion } from "../handlers/getVersion";
import { health } from "../handlers/health";
import { invokeGet } from "../handlers/invokeGet";
import { invokePost } from "../handlers/invokePost";
import { listApiKeys } from "../handlers/listApiKeys";
import { listFunctions } from "../handlers/listFunctions";
import { listVersions } from "../handlers/listVersions";
import { listDeliveries } from "../handlers/listDeliveries";
import { rotateWebhookSecret } from "../handlers/rotateWebhookSecret";
import { setAccountPlan } from "../handlers/setAccountPlan";
import { openapi } from "../handlers/openapi";
import { updateFunction } from "../handlers/updateFunction";
import { deleteSecret } from "../handlers/deleteSecret";
import { listSecrets } from "../handlers/listSecrets";
import { putSecret } from "../handlers/putSecret";
import { mcp } from "../handlers/mcp";
import { listProfiles } from "../profiles/handlers/listProfiles";
import { getProfile } from "../profiles/handlers/getProfile";
import { deleteProfile } from "../profiles/handlers/deleteProfile";
import { oauthProtectedResource } from "../handlers/oauthProtectedResource";
import type { RouteFactory } from "../http/defineRoute";
import { type OperationId, ROUTE_SPECS, type RouteSpec } from "./routeSpecs";

/** The handler of every route, by operationId. */
export const HANDLERS: Record<OperationId, RouteFactory> = {
  health,
  openapi,
  dashboard,
  dashboardAsset,
  createFunction,
  listFunctions,
  getFunctionInfo,
  getFunctionOpenapi,
  updateFunction,
  deleteFunction,
  listVersions,
  getVersion,
  forkFunction,
  invokePost,
  invokeGet,
  getRun,
  listRuns,
  cancelRun,
  listArtifacts,
  getArtifact,
  getRunEvents,
  getRunLive,
  createBatch,
  getBatch,
  listBatchRuns,
  getLogs,
  putSecret,
  listSecrets,
  deleteSecret,
  listProfiles,
  getProfile,
  deleteProfile,
  getMetrics,
  listDeliveries,
  rotateWebhookSecret,
  getUsage,
  setAccountPlan,
  createApiKey,
  listApiKeys,
  deleteApiKey,
  mcp,
  oauthProtectedResource,
};

export interface Route extends RouteSpec {
  handler: RouteFactory;
}

/** The one route table: the local server serves it, the CDK stack provisions it. */
export const ROUTES: Route[] = ROUTE_SPECS.map((spec) => ({ ...spec, handler: HANDLERS[spec.operationId] }));
