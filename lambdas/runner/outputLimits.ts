/**
 * How much of a run's output the service keeps (no dependencies: the worker bundle has these
 * too, and stays small).
 */
/**
 * A result is kept inline up to this many bytes of JSON: 3.5 MiB. On AWS the result is answered
 * through a Lambda whose answer (JSON, the body escaped in it) may not pass 6 MiB; a body of
 * quotes, backslashes or control characters doubles when escaped, so large bodies go base64
 * (4/3), and GET /runs/{id} adds the run's params (at most 256 KB on AWS), logs (64 KiB, up to
 * 6× escaped) and errors: 3.5 MiB is what always fits (lambdas/aws/lambdaEnvelope.ts, measured
 * in test/unit/lambdaEnvelope.test.ts). Both runtimes keep the same cap.
 */
export const MAX_RESULT_BYTES = 3.5 * 1024 * 1024;
/** Console output kept per run; the rest is cut with a note. */
export const MAX_LOG_BYTES = 64 * 1024;
/**
 * How deeply JSON that crosses from a run into the service may nest (a result, a worker's
 * frame, a Lambda's answer): arrays and objects inside each other, `[[1]]` being 2. Deeper
 * values overflow the recursion of whatever writes them out again (JSON.stringify, schema
 * checks, redaction), so they are refused where they come in (jsonDepth.ts counts without
 * parsing).
 */
export const MAX_JSON_DEPTH = 64;

/** The longest prefix of `text` within `bytes` UTF-8 bytes, with a note when it was cut. */
export function capBytes(text: string, bytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= bytes) return text;
  const note = "…[output truncated]\n";
  const room = bytes - Buffer.byteLength(note, "utf8");
  if (room < 0) return "";
  // The longest prefix that fits (binary search), never ending on half a surrogate pair.
  let low = 0;
  let high = Math.min(text.length, room);
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (Buffer.byteLength(text.slice(0, middle), "utf8") <= room) low = middle;
    else high = middle - 1;
  }
  const code = text.charCodeAt(low - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? low - 1 : low;
  return `${text.slice(0, end)}${note}`;
}

/** The error of a result nested deeper than MAX_JSON_DEPTH. */
export function resultTooDeep(): { code: "result_too_deep"; message: string } {
  return {
    code: "result_too_deep",
    message: `The return value is nested more than ${MAX_JSON_DEPTH} levels deep (arrays and objects inside each other); flatten it, or save it as an artifact`,
  };
}

/** The error of a result over MAX_RESULT_BYTES (`bytes` when known). */
export function resultTooLarge(bytes?: number): { code: "result_too_large"; message: string } {
  const size = bytes === undefined ? "larger than" : `${(bytes / 1024 / 1024).toFixed(1)} MB of JSON, over`;
  return {
    code: "result_too_large",
    message: `The return value is ${size} the inline limit of ${MAX_RESULT_BYTES / 1024 / 1024} MiB (${MAX_RESULT_BYTES} bytes); save large output with artifacts.save`,
  };
}
