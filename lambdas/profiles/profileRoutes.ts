import { ProfileInfoView, ProfileList, ProfileNameParam } from "./profileSchemas";
import type { RouteSpec } from "../routes/routeSpec";

/** The account's profiles (Session.start({ profile }) opens and saves them). */
export const PROFILE_ROUTES = [
  {
    operationId: "listProfiles",
    method: "GET",
    path: "/profiles",
    summary: "The account's profiles, by name (their states never leave the service)",
    tag: "profiles",
    auth: true,
    status: 200,
    response: ProfileList,
  },
  {
    operationId: "getProfile",
    method: "GET",
    path: "/profiles/{name}",
    summary: "One profile: its size, when and by which run it was saved last, and its cookie domains",
    tag: "profiles",
    auth: true,
    status: 200,
    response: ProfileInfoView,
    params: { name: ProfileNameParam },
    errors: ["profile_not_found", "invalid_name"],
  },
  {
    operationId: "deleteProfile",
    method: "DELETE",
    path: "/profiles/{name}",
    summary: "Delete a profile and its saved state",
    tag: "profiles",
    auth: true,
    status: 204,
    params: { name: ProfileNameParam },
    errors: ["profile_not_found", "invalid_name"],
  },
] as const satisfies readonly RouteSpec[];
