/** A second writer (`persist: true`) waited 30 s for a profile another session holds. Its `code` is `profile_locked`. */
export class ProfileLockedError extends Error {
  readonly code = "profile_locked";
  override name = "ProfileLockedError";
}

/** Why a profile could not be opened (`code`: `profile_not_allowed`, `profile_unavailable`). */
export class ProfileError extends Error {
  override name = "ProfileError";
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** The error a profile request's refusal (`code`, `message` from the service) is thrown as. */
export function profileRefusal(code: string, message: string): Error {
  return code === "profile_locked" ? new ProfileLockedError(message) : new ProfileError(message, code);
}
