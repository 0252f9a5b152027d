/** The partition of deploying functions in the runs index: few at a time (each for minutes), one partition. */
export const DEPLOYING_PK = "DEPLOYING";

/** Key builders for the single-table layout described in tables.ts. */
export const keys = {
  account: (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: "ACCOUNT" }),
  apiKey: (hash: string) => ({ pk: `KEY#${hash}`, sk: "KEY" }),
  apiKeyIndex: (accountId: string, keyId: string) => ({ gsi1pk: `ACCOUNT#${accountId}`, gsi1sk: `KEY#${keyId}` }),
  functionByName: (accountId: string, name: string) => ({ pk: `ACCOUNT#${accountId}`, sk: `FN#${name}` }),
  functionIdIndex: (functionId: string) => ({ gsi1pk: `FNID#${functionId}`, gsi1sk: "FN" }),
  /**
   * A function while it is `deploying`, in the runs index (DEPLOYING_INDEX) by when it became so:
   * the sparse entry the AWS sweeper finds stuck deploys by. Run keys there start `FNID#`.
   */
  deployingIndex: (updatedAt: string, functionId: string) => ({ runs_pk: DEPLOYING_PK, runs_sk: `${updatedAt}#${functionId}` }),
  version: (functionId: string, version: number) => ({ pk: `FNID#${functionId}`, sk: `VER#${pad(version)}` }),
  /** Code parts carry the token of the write that made them, so racing writers never mix parts. */
  codePart: (functionId: string, version: number, token: string, field: string, part: number) => ({
    pk: `FNID#${functionId}`,
    sk: `CODE#${pad(version)}#${token}#${field}#${pad(part)}`,
  }),
  codePrefix: (version: number, token?: string) => `CODE#${pad(version)}#${token === undefined ? "" : `${token}#`}`,
};

function pad(n: number): string {
  return String(n).padStart(6, "0");
}

/**
 * An item read from the table, typed as what its store writes. The stores then pick their
 * type's fields from it by name, so the key attributes, and anything else an item carries,
 * never reach a caller.
 */
export function asStored<T>(item: Record<string, unknown>): T {
  return item as T;
}
