/**
 * Creates the first admin API key of a deployed browserfn (AWS), straight in its DynamoDB
 * table, with the caller's AWS credentials (the usual SDK chain: AWS_PROFILE, environment, SSO…):
 *
 *   npx tsx bin/create-admin-key.ts --table-prefix browserfn --region eu-west-1 [--account admin] [--plan pro] [--name bootstrap]
 *
 * The key is printed once, on stdout; only its SHA-256 hash is stored. The caller needs
 * dynamodb:GetItem and dynamodb:PutItem on the table `<table-prefix>-main`.
 */
import { parseArgs } from "node:util";
import { issueApiKey } from "../lambdas/identity/issueApiKey";
import { ACCOUNT_PATTERN } from "../lambdas/schemas/keySchemas";
import { createDocumentClient } from "../lambdas/store/dynamo";
import { createStore } from "../lambdas/store/store";
import { MAIN_TABLE, tableName } from "../lambdas/store/tables";

const USAGE = `Usage: npx tsx bin/create-admin-key.ts --table-prefix <prefix> --region <region> [--account admin] [--plan pro] [--name bootstrap]

Creates an admin API key for <account> (created if new, on <plan>) in the table <prefix>-main,
and prints the key once.`;

async function main(argv: string[]): Promise<number> {
  // Node 20 is supported here; the SDK's notice about its future Node 22 floor is noise.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  const { values } = parseArgs({
    args: argv,
    options: {
      "table-prefix": { type: "string" },
      region: { type: "string", default: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION },
      account: { type: "string", default: "admin" },
      plan: { type: "string", default: "pro" },
      name: { type: "string", default: "bootstrap" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const prefix = values["table-prefix"];
  const problems = [
    ...(!prefix || !/^[A-Za-z0-9_.-]{1,200}$/.test(prefix) ? ["--table-prefix is required (the stack's prefix, default browserfn)"] : []),
    ...(!values.region ? ["--region is required (or set AWS_REGION)"] : []),
    ...(!ACCOUNT_PATTERN.test(values.account) ? ["--account must be 1-128 characters of A-Z a-z 0-9 _ . @ : - starting with a letter or digit"] : []),
    ...(values.plan === "" ? ["--plan must name one of the deployment's plans"] : []),
  ];
  if (problems.length > 0 || !prefix) {
    process.stderr.write(`${problems.join("\n")}\n\n${USAGE}\n`);
    return 2;
  }
  const { client, doc } = createDocumentClient({ region: values.region });
  try {
    const store = createStore(doc, prefix);
    const issued = await issueApiKey(store.accounts, {
      account_id: values.account,
      plan: values.plan,
      admin: true,
      name: values.name,
      now: new Date(),
    });
    process.stderr.write(
      `Admin key ${issued.item.key_id} of account '${values.account}' (plan ${values.plan}) stored in ${tableName(prefix, MAIN_TABLE)}.\n` +
        "It is shown this once; keep it secret:\n",
    );
    process.stdout.write(`${issued.key}\n`);
    return 0;
  } finally {
    client.destroy();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const name = error instanceof Error ? error.name : "";
    const hint =
      name === "ResourceNotFoundException"
        ? " (no such table: check --table-prefix and --region)"
        : name.includes("Credentials") || name === "UnrecognizedClientException"
          ? " (no usable AWS credentials: set AWS_PROFILE or run aws sso login)"
          : "";
    process.stderr.write(`create-admin-key: ${error instanceof Error ? error.message : String(error)}${hint}\n`);
    process.exitCode = 1;
  },
);
