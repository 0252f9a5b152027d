import { buildRecorderSource } from "./recorderBuild";

let source: string | undefined;

/** The recorder script (see recorderBuild), built once per process. */
export function recorderSource(): string {
  return (source ??= buildRecorderSource());
}
