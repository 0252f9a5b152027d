import { getArtifact } from "../../handlers/getArtifact";
import { lazyRoute } from "../lazyHandlers";
import { artifactsRouteDeps } from "../routeDeps/artifactsRouteDeps";

export const handler = lazyRoute(getArtifact, artifactsRouteDeps);
