import { ulid } from "ulid";

/** `batch_` + a lowercase ULID. */
export function newBatchId(): string {
  return `batch_${ulid().toLowerCase()}`;
}

/** True for what newBatchId makes. */
export function isBatchId(text: string): boolean {
  return /^batch_[0-9a-z]{26}$/.test(text);
}
