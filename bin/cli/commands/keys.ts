import { UsageError, flag, positionals, stringOption } from "../args";
import type { Command } from "../command";
import { shortTime } from "../output";

export const keys: Command = {
  summary: "list the account's API keys; `keys create [--name N]`, `keys revoke <key_id>`",
  usage: "browserfn keys [list | create [--name NAME] [--admin] [--account A --plan P] | revoke <key_id>]",
  options: {
    name: { type: "string" },
    admin: { type: "boolean" },
    account: { type: "string" },
    plan: { type: "string" },
  },
  async run({ args, out, client }) {
    const [action = "list", ...rest] = args.positionals;
    const api = await client();
    if (action === "list") {
      positionals({ ...args, positionals: rest }, []);
      const list = await api.listApiKeys();
      if (out.json) out.printJson(list);
      else out.table(["KEY_ID", "PREFIX", "NAME", "ACCOUNT", "ADMIN", "CREATED"], list.items.map((k) => [k.key_id, k.prefix, k.name, k.account, k.admin ? "yes" : "no", shortTime(k.created_at)]));
      return 0;
    }
    if (action === "create") {
      positionals({ ...args, positionals: rest }, []);
      const created = await api.createApiKey({
        name: stringOption(args, "name"),
        admin: flag(args, "admin") ? true : undefined,
        account: stringOption(args, "account"),
        plan: stringOption(args, "plan"),
      });
      if (out.json) out.printJson(created);
      else {
        out.line(created.key);
        out.note(`Created key ${created.key_id} of account ${created.account} (plan ${created.plan}); the secret above is shown only now.`);
      }
      return 0;
    }
    if (action === "revoke") {
      const [keyId = ""] = positionals({ ...args, positionals: rest }, ["key_id"]);
      await api.deleteApiKey(keyId);
      if (out.json) out.printJson({ revoked: keyId });
      else out.note(`Revoked ${keyId}`);
      return 0;
    }
    throw new UsageError(`unknown keys action '${action}' (list, create, revoke)`);
  },
};
