import type { CodeAnalysis } from "../../code/analysis/codeAnalysis";
import type { Runtime } from "../../runtime/runtime";
import type { Scheduler } from "../../schedule/scheduler";
import type { SecretBox } from "../../secrets/secretBox";

// The ports a Lambda does not hold (#23.12). Each Lambda builds only the AWS clients its routes
// use (lambdas/aws/routeDeps/), so that its bundle carries no other SDK client; its role holds
// no grant for the others either (lib/routeRoles.ts). A port it lacks answers every call with
// this error instead of an AccessDenied from AWS: a route that reaches one is in the wrong group.

/** The error of a call to a port this Lambda does not hold (a programming error: the API answers 500 internal_error). */
export class PortWithheld extends Error {
  constructor(what: string, holder: string) {
    super(`${what} is not wired into the ${holder} Lambda: its routes' group does not use it (lambdas/aws/routeDeps/, lib/routeRoles.ts)`);
    this.name = "PortWithheld";
  }
}

/** The methods of withheld ports (isWithheld). */
const WITHHELD = new WeakSet<object>();

/** True for a method of a port this Lambda does not hold (what its deps factory left out). */
export function isWithheld(method: unknown): boolean {
  return typeof method === "function" && WITHHELD.has(method);
}

function refuse(what: string, holder: string): () => Promise<never> {
  const method = () => Promise.reject(new PortWithheld(what, holder));
  WITHHELD.add(method);
  return method;
}

/** A runtime that deploys and runs nothing (no watchLogs, no cancel: callers of those treat them as absent). */
export function withheldRuntime(holder: string): Runtime {
  return {
    deploy: refuse("Deploying a function", holder),
    configure: refuse("Configuring a function", holder),
    invoke: refuse("Starting a run", holder),
    remove: refuse("Removing a function's Lambda", holder),
    close: async () => undefined,
  };
}

/** A scheduler that checks and syncs no schedule. */
export function withheldScheduler(holder: string): Scheduler {
  return {
    check: withheldCheck(holder),
    sync: refuse("Syncing a schedule", holder),
    remove: refuse("Removing a schedule", holder),
    close: async () => undefined,
  };
}

/** A secret box that seals and opens nothing (no KMS client in this bundle). */
export function withheldSecretBox(holder: string): SecretBox {
  return { seal: refuse("Sealing a secret", holder), open: refuse("Opening a secret", holder) };
}

/** Code analysis that reads no code (only the function routes deploy code). */
export function withheldCodeAnalysis(holder: string): CodeAnalysis {
  return { compile: refuse("Reading code", holder), warnings: refuse("Reading code", holder), close: async () => undefined };
}

function withheldCheck(holder: string): Scheduler["check"] {
  const check = () => {
    throw new PortWithheld("Checking a schedule", holder);
  };
  WITHHELD.add(check);
  return check;
}
