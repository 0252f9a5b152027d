import { lazyRunRecorder } from "../lazyHandlers";

export const handler = lazyRunRecorder();
