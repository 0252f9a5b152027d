import { lazyRunCompletion } from "../lazyHandlers";

export const handler = lazyRunCompletion();
