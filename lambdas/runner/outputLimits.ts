/**
 * How much of a run's output the service keeps (no dependencies: the worker bundle has these
 * too, and stays small).
 */
/** A result is kept inline up to this many bytes of JSON (Lambda's synchronous answer limit). */
export const MAX_RESULT_BYTES = 6 * 1024 * 1024;
/** Console output kept per run; the rest is cut with a note. */
export const MAX_LOG_BYTES = 64 * 1024;

/** The longest prefix of `text` within `bytes` UTF-8 bytes, with a note when it was cut. */
export function capBytes(text: string, bytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= bytes) return text;
  const note = "…[output truncated]\n";
  const room = bytes - Buffer.byteLength(note, "utf8");
  // Cut on a character boundary: decoding a cut buffer could end in half a character.
  let end = Math.min(text.length, room);
  while (end > 0 && Buffer.byteLength(text.slice(0, end), "utf8") > room) end = Math.floor(end * 0.9);
  return `${text.slice(0, end)}${note}`;
}

/** The error of a result over MAX_RESULT_BYTES (`bytes` when known). */
export function resultTooLarge(bytes?: number): { code: "result_too_large"; message: string } {
  const size = bytes === undefined ? "larger than" : `${(bytes / 1024 / 1024).toFixed(1)} MB of JSON, over`;
  return {
    code: "result_too_large",
    message: `The return value is ${size} the inline limit of ${MAX_RESULT_BYTES / 1024 / 1024} MB; save large output as an artifact`,
  };
}
