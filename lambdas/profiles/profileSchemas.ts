import { z } from "zod";
import { DateTime } from "../schemas/dateTime";
import { PROFILE_NAME } from "./profileSettings";

/** One profile as GET /profiles/{name} shows it (its state never leaves the service). */
export const ProfileInfoView = z
  .object({
    name: z.string().describe("^[a-z0-9][a-z0-9-]{0,62}$"),
    bytes: z.int().describe("Size of its saved state (at most 50 MB)"),
    updated_at: DateTime,
    last_run_id: z.string().nullable().describe("The run that saved it last"),
    last_function: z.string().nullable().describe("The name of the function whose run saved it last"),
    domains: z.array(z.string()).describe("The cookie domains it holds"),
  })
  .meta({ id: "ProfileInfo" });

export const ProfileList = z.object({ items: z.array(ProfileInfoView) }).meta({ id: "ProfileList" });

export const ProfileNameParam = z.string().regex(PROFILE_NAME).describe("The profile's name, e.g. shop-login");
