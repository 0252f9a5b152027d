import { MAX_LOG_BYTES, capBytes } from "../../runner/outcomeSchema";
import { NO_SECRETS, Redactor } from "../../secrets/redactor";

/**
 * A run's console output as its worker streams it, kept by the service: secrets redacted again
 * on this side (a line's end that may start a secret waits for the next piece), capped at
 * MAX_LOG_BYTES. Not "until the worker's truncation note": the worker cuts the function's own
 * output short of the cap and writes the runtime's notes (the failure evidence) after it, as
 * the sandbox's host does for a stuck run.
 */
export class StreamedLogs {
  private text = "";
  private full = false;
  private redaction: ReturnType<Redactor["stream"]> = NO_SECRETS.stream();

  /** Starts a new run's output, redacting `secrets`. */
  reset(secrets: Iterable<string>): void {
    this.text = "";
    this.full = false;
    this.redaction = new Redactor(secrets).stream();
  }

  /** Adds a piece of the output; past the cap nothing more is taken. */
  push(piece: string): void {
    if (this.full) return;
    const next = this.text + this.redaction.push(piece);
    this.full = Buffer.byteLength(next, "utf8") > MAX_LOG_BYTES;
    this.text = capBytes(next, MAX_LOG_BYTES);
  }

  /** What was streamed, redacted, as it stands (without what the redaction still holds back). */
  get sent(): string {
    return this.text;
  }

  /** All of it, the held-back end too: what a run that timed out or crashed keeps. */
  get all(): string {
    return this.full ? this.text : capBytes(this.text + this.redaction.held(), MAX_LOG_BYTES);
  }
}
