import { z } from "zod";
import { DateTime } from "./dateTime";
import { MAX_SECRET_VALUE_BYTES, MIN_SECRET_VALUE_BYTES } from "../secrets/functionSecrets";
import { SECRET_MARK } from "../secrets/redactor";

/** `PUT /functions/{ref}/secrets/{NAME}`. */
export const PutSecretBody = z
  .object({
    value: z
      .string()
      .refine(
        (value) => Buffer.byteLength(value, "utf8") >= MIN_SECRET_VALUE_BYTES,
        `a secret's value is at least ${MIN_SECRET_VALUE_BYTES} bytes: it is redacted wherever it occurs in a run's output, inside words, numbers and keys too`,
      )
      .refine((value) => Buffer.byteLength(value, "utf8") <= MAX_SECRET_VALUE_BYTES, `a secret's value is at most ${MAX_SECRET_VALUE_BYTES} bytes of UTF-8`)
      // Redaction never takes a mark apart, so a value holding one could not be redacted.
      .refine((value) => !value.includes(SECRET_MARK), `a secret's value cannot contain ${SECRET_MARK}`)
      .describe(`The secret's value (${MIN_SECRET_VALUE_BYTES} to ${MAX_SECRET_VALUE_BYTES} bytes of UTF-8). It is never returned.`),
  })
  .strict()
  .meta({ id: "PutSecretBody" });

/** One secret, as listed: its name and when it was set, never its value. */
export const SecretInfo = z.object({ name: z.string().describe("^[A-Z][A-Z0-9_]{0,63}$"), updated_at: DateTime }).meta({ id: "SecretInfo" });

/** `GET /functions/{ref}/secrets`. */
export const SecretList = z.object({ items: z.array(SecretInfo) }).meta({ id: "SecretList" });
