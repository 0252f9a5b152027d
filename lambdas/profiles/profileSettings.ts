import { z } from "zod";

/** A profile's name: per account, `^[a-z0-9][a-z0-9-]{0,62}$`. */
export const PROFILE_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Names a function's `profiles` setting lists at most. */
export const MAX_PROFILES_SETTING = 50;

export const ProfileName = z.string().regex(PROFILE_NAME, "must match ^[a-z0-9][a-z0-9-]{0,62}$");

/** `profiles` in a create or update body: names its runs may open besides those its code names literally. */
export const ProfilesInput = z
  .array(ProfileName)
  .max(MAX_PROFILES_SETTING)
  .describe(
    "Profiles the function's runs may open by a name computed at run time; names its code passes literally to Session.start({ profile }) are found at deploy and need not be listed",
  )
  .meta({ id: "ProfilesInput" });

/** A stored `profiles` setting, field by field ([] when absent). */
export function profilesOf(fn: { profiles?: string[] | null }): string[] {
  return Array.isArray(fn.profiles) ? fn.profiles.filter((name): name is string => typeof name === "string" && PROFILE_NAME.test(name)) : [];
}

/** The setting as stored: sorted, each name once. */
export function profilesFromInput(input: readonly string[]): string[] {
  return [...new Set(input)].sort();
}
