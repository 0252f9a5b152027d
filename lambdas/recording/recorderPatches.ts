/**
 * Changes made to rrweb's build (the pinned `rrweb/dist/rrweb.js`) as the recorder is bundled:
 * each keeps what rrweb records, and takes away a cost the recorder paid in every page for
 * nothing. Measured (docs/benchmarks.md, "Recordings"):
 *
 * - **postcss left out.** rrweb's single file carries two copies of postcss (for the replay's CSS
 *   rewriting) behind top-level statements a bundler must keep; the recorder never calls it. The
 *   script each page compiles goes from 193 KB to 78 KB.
 * - **No iframe per document.** rrweb looks for "untainted" DOM prototypes (a page may have
 *   patched its own) and, when its check misreads one (`querySelector` checked as a getter, which
 *   it is not), appends a hidden iframe to the page to take them from. It did so twice in every
 *   recorded document, each a frame of its own in which the recorder was compiled again. The
 *   recorder runs in an isolated world, whose prototypes no page script can patch: its own are
 *   the untainted ones.
 * - **No exception per element.** In an isolated world `customElements` is null, and rrweb's
 *   snapshot called `customElements.get` on it for every element, in a try/catch: a thrown and
 *   caught TypeError per element (about three quarters of a 2,000-node page's snapshot time).
 *
 * Each change must apply exactly as many times as written: an upgraded rrweb that no longer
 * matches fails the build (and the test that builds the recorder) instead of quietly losing it.
 */
interface Patch {
  what: string;
  pattern: RegExp;
  replace: (match: string, ...groups: string[]) => string;
  times: number;
}

const PATCHES: Patch[] = [
  {
    what: "postcss's top-level property reads",
    pattern: /^import_postcss(\$\d+)?\.default(\.\w+)?;$/gm,
    replace: () => "",
    times: 49,
  },
  {
    what: "postcss's module call marked pure",
    pattern: /= \/\* @__PURE__ \*\/ (__toESM(?:\$1)?)\(\(\/\* @__PURE__ \*\/ (__commonJSMin(?:\$1)?)\(/g,
    replace: (_match, toEsm = "", commonJs = "") => `= /* @__PURE__ */ ${toEsm}(/* @__PURE__ */ (/* @__PURE__ */ ${commonJs}(`,
    times: 2,
  },
  {
    what: "postcss read where the replay uses it",
    pattern: /^var postcss_default = import_postcss\$1\.default;$/m,
    replace: () => "",
    times: 1,
  },
  {
    what: "postcss called where the replay uses it",
    pattern: /\bpostcss_default\(/g,
    replace: () => "import_postcss$1.default(",
    times: 1,
  },
  {
    what: "the isolated world's own prototypes",
    pattern: /if \(isUntaintedAccessors && isUntaintedMethods\) \{/g,
    replace: () => "if (true) {",
    times: 3,
  },
  {
    what: "customElements read without a throw",
    pattern: /if \(customElements\.get\(tagName\)\) isCustomElement = true;/g,
    replace: () => "if (customElements?.get(tagName)) isCustomElement = true;",
    times: 1,
  },
];

/** rrweb's build with the patches applied; throws when one does not apply as often as written. */
export function patchRrweb(source: string): string {
  let text = source;
  for (const patch of PATCHES) {
    let count = 0;
    text = text.replace(patch.pattern, (...args: unknown[]) => {
      count += 1;
      const groups = args.slice(1).filter((arg): arg is string => typeof arg === "string");
      return patch.replace(String(args[0]), ...groups);
    });
    if (count !== patch.times) throw new Error(`rrweb's build does not match the recorder's patch "${patch.what}" (${count} places, expected ${patch.times}): check lambdas/recording/recorderPatches.ts against the pinned rrweb`);
  }
  return text;
}
