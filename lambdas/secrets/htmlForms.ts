/**
 * The forms a secret value takes in serialized HTML besides its own: escaped as text or as an
 * attribute value (with and without `<`/`>` escaped, as browsers differ), and URL-encoded in a link.
 */
export function htmlForms(value: string): string[] {
  const amp = value.replace(/&/g, "&amp;").replace(/\u00a0/g, "&nbsp;");
  return [
    value,
    amp.replace(/</g, "&lt;").replace(/>/g, "&gt;"),
    amp.replace(/"/g, "&quot;"),
    amp.replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;"),
    encodeURIComponent(value),
    encodeURI(value),
  ];
}
