import { listArtifacts } from "../../handlers/listArtifacts";
import { lazyRoute } from "../lazyHandlers";
import { dataRouteDeps } from "../routeDeps/dataRouteDeps";

export const handler = lazyRoute(listArtifacts, dataRouteDeps);
