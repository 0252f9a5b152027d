import type { ChildProcess } from "node:child_process";

/** A child's pipes report resets when it dies; its exit is what counts, so they are ignored. */
export function quietPipes(child: ChildProcess): ChildProcess {
  for (const stream of child.stdio) stream?.on("error", () => undefined);
  return child;
}
