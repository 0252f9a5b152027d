/** A page URL in a run's evidence line is cut to this many characters (its line must fit the log's reserve). */
export const MAX_URL_CHARS = 300;

/** `url` as an evidence line names it: at most MAX_URL_CHARS, a cut marked with `…`. */
export function evidenceUrl(url: string): string {
  return url.length > MAX_URL_CHARS ? `${url.slice(0, MAX_URL_CHARS)}…` : url;
}

/** The log line of one page's evidence: its URL (cut) and the files kept of it. */
export function evidenceLine(n: number, url: string, kept: readonly string[]): string {
  return `[browserfn] page ${n} was at ${evidenceUrl(url)}${kept.length > 0 ? `: kept ${kept.join(", ")}` : " (no evidence could be kept)"}`;
}
