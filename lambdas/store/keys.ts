/** Key builders for the single-table layout described in tables.ts. */
export const keys = {
  account: (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: "ACCOUNT" }),
  apiKey: (hash: string) => ({ pk: `KEY#${hash}`, sk: "KEY" }),
  apiKeyIndex: (accountId: string, keyId: string) => ({ gsi1pk: `ACCOUNT#${accountId}`, gsi1sk: `KEY#${keyId}` }),
  functionByName: (accountId: string, name: string) => ({ pk: `ACCOUNT#${accountId}`, sk: `FN#${name}` }),
  functionIdIndex: (functionId: string) => ({ gsi1pk: `FNID#${functionId}`, gsi1sk: "FN" }),
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
