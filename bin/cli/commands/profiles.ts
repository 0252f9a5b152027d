import { PROFILE_NAME } from "../../../lambdas/profiles/profileSettings";
import { UsageError, positionals } from "../args";
import type { Command } from "../command";
import { shortTime } from "../output";

/** A profile's name as the service takes it, or a UsageError. */
function profileName(name: string): string {
  if (!PROFILE_NAME.test(name)) throw new UsageError(`'${name}' is not a profile name (${PROFILE_NAME.source}, e.g. shop-login)`);
  return name;
}

export const profiles: Command = {
  summary: "list, show or delete the account's browser profiles (saved logins)",
  usage: "browserfn profiles list | profiles show <name> | profiles delete <name>",
  options: {},
  async run({ args, out, client }) {
    const [action = "", ...rest] = args.positionals;
    const rested = { ...args, positionals: rest };
    if (action === "list") {
      positionals(rested, []);
      const list = await (await client()).listProfiles();
      if (out.json) out.printJson(list);
      else out.table(["NAME", "BYTES", "UPDATED", "LAST FUNCTION", "DOMAINS"], list.items.map((p) => [p.name, String(p.bytes), shortTime(p.updated_at), p.last_function ?? "-", p.domains.join(",")]));
      return 0;
    }
    if (action === "show") {
      const [name = ""] = positionals(rested, ["name"]);
      const profile = await (await client()).getProfile(profileName(name));
      if (out.json) out.printJson(profile);
      else out.table(["FIELD", "VALUE"], Object.entries(profile).map(([field, value]) => [field, Array.isArray(value) ? value.join(",") : String(value ?? "-")]));
      return 0;
    }
    if (action === "delete" || action === "rm") {
      const [name = ""] = positionals(rested, ["name"]);
      await (await client()).deleteProfile(profileName(name));
      if (out.json) out.printJson({ deleted: name });
      else out.note(`Deleted profile ${name}`);
      return 0;
    }
    throw new UsageError(action === "" ? "missing action: profiles list, show or delete" : `unknown profiles action '${action}' (list, show, delete)`);
  },
};
