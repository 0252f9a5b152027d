import { lazyDeployJob } from "../lazyHandlers";

export const handler = lazyDeployJob();
