const CUT = "…[output truncated]\n";

/**
 * Prints a run's console output as it grows: every `intervalMs` it reads what the worker has
 * streamed so far (`read`, a capped text that only grows, unless the cap cut it) and writes
 * the part not written yet. `finish` writes what the run's answer holds beyond that.
 */
export class LiveLogs {
  private shown = "";
  private cut = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    read: () => string,
    private readonly write: (text: string) => void,
    intervalMs = 100,
  ) {
    this.timer = setInterval(() => this.show(read()), intervalMs);
  }

  private show(current: string): void {
    if (current.startsWith(this.shown)) {
      if (current.length > this.shown.length) this.write(current.slice(this.shown.length));
    } else if (!this.cut) {
      // The cap cut the text short of what was written already: say so, once.
      this.write(`${this.shown.endsWith("\n") ? "" : "\n"}${CUT}`);
      this.cut = true;
    }
    this.shown = current;
  }

  /** Stops reading, then writes the rest of `final` (the output the run's answer carries), ending on a newline. */
  finish(final: string): void {
    this.stop();
    this.show(final);
    if (this.shown !== "" && !this.shown.endsWith("\n")) this.write("\n");
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
