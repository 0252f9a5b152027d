import { deleteProfile } from "../../profiles/handlers/deleteProfile";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(deleteProfile);
