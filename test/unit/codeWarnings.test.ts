import { compileCode } from "../../lambdas/code/compileCode";

/** The module around `body`: an automation whose function body is `body`. */
const automation = (body: string) => `import { Session } from "browserfn/runtime";

export default async function run(url: string) {
${body}
}
`;

describe("compileCode: warnings", () => {
  it("warns of `return <call>` without await while `await using session` is in force, naming the line and the fix", () => {
    const source = automation(`  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url);
  return page.title();`);
    expect(compileCode(source).warnings).toEqual([
      {
        code: "unawaited_return_in_session",
        message:
          "line 7: `return page.title()` returns a promise while `await using session` closes the session at the return: " +
          "write `return await page.title()`",
        line: 7,
      },
    ]);
  });

  it("finds the trap in nested blocks, loops, helpers and `for (await using …)`, and only after the declaration", () => {
    const source = `import { Session } from "browserfn/runtime";
async function titleOf(url: string) {
  await using s = await Session.start();
  const page = await s.newPage();
  if (url) {
    try {
      return page.goto(url).then(() => page.title());
    } finally {
      console.log("done");
    }
  }
  return url ? page.content() : page.title();
}
export default async function run(urls: string[]) {
  for (await using session of [await Session.start()]) {
    return session.newPage();
  }
  return Promise.all(urls.map(titleOf));
}
`;
    const warnings = compileCode(source).warnings;
    expect(warnings.map((warning) => warning.line)).toEqual([7, 12, 16]);
    expect(warnings[0]?.message).toBe(
      "line 7: `return page.goto(url).then(() => page.title())` returns a promise while `await using s` closes `s` at the return: " +
        "write `return await page.goto(url).then(() => page.title())`",
    );
    expect(warnings[1]?.message).toContain("write `return await (url ? page.content() : page.title())`");
  });

  it.each([
    ["the call is awaited", "  await using session = await Session.start();\n  const page = await session.newPage();\n  return await page.title();"],
    ["no `await using` is in scope", "  const session = await Session.start();\n  const page = await session.newPage();\n  return page.title();"],
    ["the return comes before the declaration", "  if (!url) return Promise.resolve(null);\n  await using session = await Session.start();\n  return null;"],
    ["the `await using` is in a block the return is not in", "  {\n    await using session = await Session.start();\n  }\n  return fetch(url);"],
    ["the return belongs to a nested function", "  await using session = await Session.start();\n  const later = () => { return session.newPage(); };\n  return await later();"],
    ["the call is synchronous", "  await using session = await Session.start();\n  const page = await session.newPage();\n  const rows = [url];\n  return JSON.stringify(rows.map((row) => row.trim()).concat(page.url()));"],
    ["a plain `using` closes synchronously", "  using timer = { [Symbol.dispose]() {} };\n  return fetch(url);"],
  ])("gives none when %s", (_, body) => {
    expect(compileCode(automation(body)).warnings).toEqual([]);
  });

  it("gives [] for a module without sessions", () => {
    expect(compileCode("export default async () => ({ ok: true });").warnings).toEqual([]);
  });
});
