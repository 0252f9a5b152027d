import { listArtifacts } from "../../handlers/listArtifacts";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(listArtifacts);
