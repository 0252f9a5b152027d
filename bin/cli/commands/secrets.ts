import { SECRET_NAME } from "../../../lambdas/secrets/functionSecrets";
import { UsageError, positionals } from "../args";
import type { Command } from "../command";
import { shortTime } from "../output";
import { readSecretValue } from "../secretValue";

/** A secret's name as the service takes it, or a UsageError (before a value is asked for). */
function secretName(name: string): string {
  if (!SECRET_NAME.test(name)) throw new UsageError(`'${name}' is not a secret name (${SECRET_NAME.source}, e.g. API_TOKEN)`);
  return name;
}

export const secrets: Command = {
  summary: "set, list or remove a function's secrets (values are never shown)",
  usage: "browserfn secrets set <function> <NAME> [value] | secrets list <function> | secrets rm <function> <NAME>",
  options: {},
  async run({ args, io, out, client }) {
    const [action = "", ...rest] = args.positionals;
    const rested = { ...args, positionals: rest };
    if (action === "set") {
      const [ref = "", name = "", given] = positionals(rested, rest.length > 2 ? ["function", "NAME", "value"] : ["function", "NAME"]);
      secretName(name);
      if (given !== undefined) {
        out.note(
          `browserfn: warning: a value on the command line is kept in your shell's history and shown by ps; pipe it in instead (… | browserfn secrets set ${ref} ${name}), or leave it out to type it`,
        );
      }
      const value = await readSecretValue(io, given, `Value of ${name} for ${ref} (not shown): `);
      await (await client()).setSecret(ref, name, value);
      if (out.json) out.printJson({ function: ref, set: name });
      else out.note(`Set secret ${name} of ${ref}`);
      return 0;
    }
    if (action === "list") {
      const [ref = ""] = positionals(rested, ["function"]);
      const list = await (await client()).listSecrets(ref);
      if (out.json) out.printJson(list);
      else out.table(["NAME", "UPDATED"], list.items.map((secret) => [secret.name, shortTime(secret.updated_at)]));
      return 0;
    }
    if (action === "rm") {
      const [ref = "", name = ""] = positionals(rested, ["function", "NAME"]);
      await (await client()).deleteSecret(ref, secretName(name));
      if (out.json) out.printJson({ function: ref, removed: name });
      else out.note(`Removed secret ${name} of ${ref}`);
      return 0;
    }
    throw new UsageError(action === "" ? "missing action: secrets set, list or rm" : `unknown secrets action '${action}' (set, list, rm)`);
  },
};
