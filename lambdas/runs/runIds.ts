import { ulid } from "ulid";

/** `run_` + a lowercase ULID: unique, and sorting by id sorts by time. */
export function newRunId(): string {
  return `run_${ulid().toLowerCase()}`;
}
