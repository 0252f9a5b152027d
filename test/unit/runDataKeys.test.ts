import { openWithDataKey, runDataKeyContext, sealWithDataKey } from "../../lambdas/secrets/runEnvelope/envelopeFormat";
import { createRunDataKeys, RUN_DATA_KEY_MAX, RUN_DATA_KEY_TTL_MS } from "../../lambdas/secrets/runEnvelope/runDataKeys";
import { DecryptCommand } from "@aws-sdk/client-kms";
import { InProcessKms } from "../helpers/inProcessKms";

// The run envelope (#23, cost): a run's secrets sealed under the function's data key, which the
// service keeps RUN_DATA_KEY_TTL_MS and the function's Lambda opens with one Decrypt.

const KEY_ARN = "arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555";
const ROLE_ID = "AROAEXAMPLEEXECUTION";
const FN = "fn_01aaaaaaaaaaaaaaaaaaaaaaaa";
const RUNNER = `${ROLE_ID}:bfn-${FN}`;

describe("run data keys", () => {
  it("make one data key per function for RUN_DATA_KEY_TTL_MS, then a new one; the function's Lambda opens it, and each value with it", async () => {
    const kms = new InProcessKms(KEY_ARN, ROLE_ID);
    let now = 1_000_000;
    const keys = createRunDataKeys(kms.client("service") as never, KEY_ARN, () => now);
    const first = await keys.seal(FN, RUNNER, { PASSWORD: "p", USER: "u" });
    const second = await keys.seal(FN, RUNNER, { PASSWORD: "p" });
    expect(second.data_key).toBe(first.data_key);
    now += RUN_DATA_KEY_TTL_MS + 1;
    const third = await keys.seal(FN, RUNNER, { PASSWORD: "p" });
    expect(third.data_key).not.toBe(first.data_key);
    expect(kms.calls).toEqual([
      { caller: "service", command: "GenerateDataKey", keyId: KEY_ARN, context: runDataKeyContext(FN, RUNNER) },
      { caller: "service", command: "GenerateDataKey", keyId: KEY_ARN, context: runDataKeyContext(FN, RUNNER) },
    ]);
    // The function's own Lambda opens the key; another function's cannot.
    const open = (caller: string) =>
      kms.client(caller).send(new DecryptCommand({ CiphertextBlob: Buffer.from(first.data_key, "base64"), EncryptionContext: runDataKeyContext(FN, RUNNER) })) as Promise<{ Plaintext: Uint8Array }>;
    const { Plaintext } = await open(RUNNER);
    expect(first.items.map(({ name, sealed }) => [name, openWithDataKey(Plaintext, FN, name, sealed)])).toEqual([["PASSWORD", "p"], ["USER", "u"]]);
    await expect(open(`${ROLE_ID}:bfn-fn_01bbbbbbbbbbbbbbbbbbbbbbbb`)).rejects.toMatchObject({ name: "AccessDeniedException" });
  });

  it("bind each value to its function and name: a swapped or changed value does not open", () => {
    const key = new Uint8Array(32).fill(7);
    const sealed = sealWithDataKey(key, FN, "PASSWORD", "secret");
    expect(openWithDataKey(key, FN, "PASSWORD", sealed)).toBe("secret");
    expect(() => openWithDataKey(key, FN, "USER", sealed)).toThrow();
    expect(() => openWithDataKey(key, "fn_01bbbbbbbbbbbbbbbbbbbbbbbb", "PASSWORD", sealed)).toThrow();
    const changed = Buffer.from(sealed, "base64");
    changed[13] = (changed[13] ?? 0) ^ 1;
    expect(() => openWithDataKey(key, FN, "PASSWORD", changed.toString("base64"))).toThrow();
  });

  it("keep at most RUN_DATA_KEY_MAX keys, and share one request between concurrent first runs", async () => {
    const kms = new InProcessKms(KEY_ARN, ROLE_ID);
    const keys = createRunDataKeys(kms.client("service") as never, KEY_ARN);
    await Promise.all([keys.seal(FN, RUNNER, {}), keys.seal(FN, RUNNER, {})]);
    expect(kms.calls).toHaveLength(1);
    for (let i = 0; i < RUN_DATA_KEY_MAX; i++) await keys.seal(`fn_${String(i).padStart(26, "0")}`, RUNNER, {});
    // The first function's key was the oldest: it went, so its next run makes a new one.
    await keys.seal(FN, RUNNER, {});
    expect(kms.calls).toHaveLength(RUN_DATA_KEY_MAX + 2);
  });
});
