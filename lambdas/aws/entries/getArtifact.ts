import { getArtifact } from "../../handlers/getArtifact";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(getArtifact);
