import { ApiError } from "../http/errors";

/**
 * Runs `read`, a parse or walk of a user's module, and turns what only hostile or absurd code
 * makes it throw into 400 `invalid_code`: a stack overflow (brackets, parentheses, types or
 * property chains nested deeper than the parser or a walker of the module recurses: 255 KB of
 * `(`, generics 37,000 levels deep) and a string or array past V8's limits. Any other error
 * goes on as it is.
 */
export function readingCode<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    if (/call stack/i.test(error.message)) {
      throw new ApiError("invalid_code", "The code is nested too deeply to read (brackets, parentheses, types or property chains thousands of levels deep); flatten it", {
        reason: "nesting",
      });
    }
    throw new ApiError("invalid_code", "The code's types are too large to read; declare simpler parameter types", { reason: "size" });
  }
}
