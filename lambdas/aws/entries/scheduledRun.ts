import { lazyScheduledRun } from "../lazyHandlers";

export const handler = lazyScheduledRun();
