import { lazyDeployJob } from "../lazyHandlers";
import { deployJobDeps } from "../routeDeps/deployJobDeps";

export const handler = lazyDeployJob(deployJobDeps);
