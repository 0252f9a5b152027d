import { ApiError } from "../../http/errors";
import { PROFILE_NAME } from "../profileSettings";

/** The `{name}` of a profile route, checked (400 invalid_name). */
export function profileName(raw: string | undefined): string {
  const name = raw ?? "";
  if (!PROFILE_NAME.test(name)) throw new ApiError("invalid_name", "A profile's name must match ^[a-z0-9][a-z0-9-]{0,62}$", { name: name.slice(0, 80) });
  return name;
}
