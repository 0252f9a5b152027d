import { buildRecorderSource, type RecorderSource } from "./recorderBuild";

let source: RecorderSource | undefined;

/** The recorder's scripts (see recorderBuild), built once per process. */
export function recorderSource(): RecorderSource {
  return (source ??= buildRecorderSource());
}
