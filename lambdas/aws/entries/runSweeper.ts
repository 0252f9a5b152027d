import { lazyRunSweeper } from "../lazyHandlers";

export const handler = lazyRunSweeper();
