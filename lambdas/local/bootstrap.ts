import { chmod, writeFile } from "node:fs/promises";
import path from "node:path";
import { issueApiKey } from "../identity/issueApiKey";
import type { AccountStore } from "../store/accountStore";

export const LOCAL_ACCOUNT = "local";
export const BOOTSTRAP_KEY_FILE = "bootstrap-key";

export interface BootstrapResult {
  /** The new admin key, to print once (only on the first start without a configured key). */
  newKey: string | null;
  /** Where the first start wrote its key, or null when a key was configured. */
  keyFile: string | null;
}

/**
 * The admin key of the `local` account (plan `pro`): the configured one, registered
 * idempotently, or on the first start a new one written to `<dataDir>/bootstrap-key` (0600).
 */
export async function bootstrapAdminKey(
  accounts: AccountStore,
  dataDir: string,
  configuredKey: string | null,
  now: Date,
): Promise<BootstrapResult> {
  const options = { account_id: LOCAL_ACCOUNT, plan: "pro", admin: true, name: "bootstrap", now };
  const keyFile = path.join(dataDir, BOOTSTRAP_KEY_FILE);
  if (configuredKey) {
    await issueApiKey(accounts, { ...options, secret: configuredKey });
    return { newKey: null, keyFile: null };
  }
  if (await accounts.getAccount(LOCAL_ACCOUNT)) return { newKey: null, keyFile };
  const { key } = await issueApiKey(accounts, options);
  await writeFile(keyFile, `${key}\n`, { mode: 0o600 });
  await chmod(keyFile, 0o600);
  return { newKey: key, keyFile };
}
