/** Escapes text for an HTML attribute value or text content. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The path the API is served under: empty locally and on API Gateway's `$default` stage,
 * `/<stage>` on a named stage, the path of `BROWSERFN_PUBLIC_URL` when that is set. The page
 * links its files and calls the API under it, on its own origin.
 */
export function basePath(baseUrl: string): string {
  try {
    return new URL(baseUrl).pathname.replace(/\/+$/, "");
  } catch {
    return "";
  }
}

/** The dashboard page: its template with every `{{base}}` replaced by the escaped base path. */
export function renderPage(template: string, baseUrl: string): string {
  return template.replaceAll("{{base}}", escapeHtml(basePath(baseUrl)));
}
