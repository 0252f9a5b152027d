/** The uid/gid user code and its browser run as: `nobody` when the service runs as root, else the service's own. */
export interface ProcessIdentity {
  uid?: number;
  gid?: number;
}

export const NOBODY = { uid: 65534, gid: 65534 };

export function workerIdentity(): ProcessIdentity {
  return process.getuid?.() === 0 ? NOBODY : {};
}
