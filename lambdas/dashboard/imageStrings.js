/* global atob, Blob */
// Recognises a string that holds an image (a `data:image/…;base64,` URL, or bare base64 of a
// PNG, JPEG, GIF or WebP file) or a PDF (a `data:application/pdf;base64,` URL, or bare base64
// of a file that starts `%PDF-`) and decodes it to a Blob, so that the page can show it through
// an object URL (its Content-Security-Policy allows images and objects from blob: URLs, not
// data: ones).

const DATA_URL = /^data:(image\/(?:png|jpeg|gif|webp|avif|bmp|svg\+xml))(?:;[a-z0-9=._-]+)*;base64,([A-Za-z0-9+/\s]+={0,2})$/i;
const PDF_DATA_URL = /^data:application\/pdf(?:;[a-z0-9=._-]+)*;base64,([A-Za-z0-9+/\s]+={0,2})$/i;
/** "%PDF-" in base64. */
const PDF_SIGNATURE = "JVBERi0";
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The first characters of the base64 text of each image format, and its content type. */
const SIGNATURES = [
  ["iVBORw0KGgo", "image/png"],
  ["/9j/", "image/jpeg"],
  ["R0lGODdh", "image/gif"],
  ["R0lGODlh", "image/gif"],
];

/** Images past this many characters are not decoded (a result is at most 6 MB of JSON anyway). */
const MAX_CHARS = 8 * 1024 * 1024;

/** The image `value` holds, as a Blob of its type, or null when it holds none. */
export function imageBlobOf(value) {
  if (typeof value !== "string" || value.length < 16 || value.length > MAX_CHARS) return null;
  const dataUrl = DATA_URL.exec(value);
  if (dataUrl) return decode(dataUrl[2].replace(/\s+/g, ""), dataUrl[1].toLowerCase());
  if (!BASE64.test(value)) return null;
  const signature = SIGNATURES.find(([prefix]) => value.startsWith(prefix));
  if (signature) return decode(value, signature[1]);
  // WebP: "RIFF", 4 bytes of size, "WEBP": base64 "UklG" then, 12 characters in, "RUJQ" ("EBP").
  if (value.startsWith("UklG") && value.slice(12, 16) === "RUJQ") return decode(value, "image/webp");
  return null;
}

/** The PDF `value` holds, as a Blob typed `application/pdf`, or null when it holds none. */
export function pdfBlobOf(value) {
  if (typeof value !== "string" || value.length < 16 || value.length > MAX_CHARS) return null;
  const dataUrl = PDF_DATA_URL.exec(value);
  if (dataUrl) return decode(dataUrl[1].replace(/\s+/g, ""), "application/pdf");
  if (BASE64.test(value) && value.startsWith(PDF_SIGNATURE)) return decode(value, "application/pdf");
  return null;
}

function decode(base64, type) {
  let binary;
  try {
    binary = atob(base64);
  } catch {
    return null;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new Blob([bytes], { type });
}
