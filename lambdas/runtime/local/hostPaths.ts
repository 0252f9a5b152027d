/**
 * A message shown to users with the host's absolute paths taken out (`<host path>`): where the
 * service keeps its runtime, data or sandboxes is none of a run's business. URLs are kept (a
 * path inside `http://host/a/b` follows a word character or a slash).
 */
export function withoutHostPaths(message: string): string {
  return message.replace(/(?<![\w:/.~-])\/(?:[^\s'"`,;()[\]{}<>]+)/g, "<host path>");
}
