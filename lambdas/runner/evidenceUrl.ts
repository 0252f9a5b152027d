/** A page URL in a run's evidence line is cut to this many characters (its line must fit the log's reserve). */
export const MAX_URL_CHARS = 300;

/** `url` as an evidence line names it: at most MAX_URL_CHARS, a cut marked with `…`. */
export function evidenceUrl(url: string): string {
  return url.length > MAX_URL_CHARS ? `${url.slice(0, MAX_URL_CHARS)}…` : url;
}
