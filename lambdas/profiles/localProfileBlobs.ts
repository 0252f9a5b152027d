import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { loadOrCreateKey, SECRETS_KEY_FILE } from "../secrets/localSecretBox";
import type { ProfileBlobs, StagedState } from "./profileBlobs";

const IV_BYTES = 12;
const TAG_BYTES = 16;
const MAGIC = Buffer.from("bfnp1");

/**
 * Profiles' states as files under `<data dir>/profiles/`, each sealed with AES-256-GCM under the
 * data dir's key (the one that seals function secrets), the account and the profile's name as
 * additional data: a file copied to another account's or profile's place does not open there.
 * Writes go to a temporary file renamed over the old one, so a failed write keeps the old state;
 * `stage` writes that file as soon as a run's save arrives, and the run's end only renames it.
 */
export async function createLocalProfileBlobs(dataDir: string): Promise<ProfileBlobs> {
  const key = await loadOrCreateKey(path.join(dataDir, SECRETS_KEY_FILE));
  const root = path.join(dataDir, "profiles");
  const fileOf = (accountId: string, name: string) => path.join(root, createHash("sha256").update(accountId).digest("hex").slice(0, 32), `${name}.sealed`);
  const aad = (accountId: string, name: string) => Buffer.from(JSON.stringify([accountId, name]), "utf8");
  /** The sealed state in a temporary file beside the profile's: committing renames it over the old one. */
  const stage = async (accountId: string, name: string, state: Uint8Array): Promise<StagedState> => {
    const file = fileOf(accountId, name);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(aad(accountId, name));
    const sealed = Buffer.concat([MAGIC, iv, cipher.update(state), cipher.final(), cipher.getAuthTag()]);
    const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await writeFile(temporary, sealed, { mode: 0o600 });
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return {
      async commit() {
        try {
          await rename(temporary, file);
        } finally {
          await rm(temporary, { force: true });
        }
      },
      discard: () => rm(temporary, { force: true }),
    };
  };
  return {
    async get(accountId, name) {
      let sealed: Buffer;
      try {
        sealed = await readFile(fileOf(accountId, name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw error;
      }
      if (sealed.length < MAGIC.length + IV_BYTES + TAG_BYTES || !sealed.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error("Not a profile sealed by this service");
      const iv = sealed.subarray(MAGIC.length, MAGIC.length + IV_BYTES);
      const body = sealed.subarray(MAGIC.length + IV_BYTES, sealed.length - TAG_BYTES);
      const decipher = createDecipheriv("aes-256-gcm", key, iv);
      decipher.setAAD(aad(accountId, name));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body), decipher.final()]);
    },
    async put(accountId, name, state) {
      await (await stage(accountId, name, state)).commit();
    },
    stage,
    async remove(accountId, name) {
      await rm(fileOf(accountId, name), { force: true });
    },
  };
}
