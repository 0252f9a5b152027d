import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { compileCode } from "../../lambdas/code/compileCode";
import { typecheck } from "../helpers/typecheck";

/** The module around `body`: an automation whose function body is `body`. */
const automation = (body: string) => `import { Session } from "browserfn/runtime";

export default async function run(url: string) {
${body}
}
`;

describe("compileCode: warnings", () => {
  it("lists at most 20, then one that counts the rest, and quotes no more than 60 characters of a type or a name", () => {
    const returns = Array.from({ length: 30 }, (_, i) => `  if (url === "${i}") return session.newPage();`).join("\n");
    const { warnings } = compileCode(automation(`  await using session = await Session.start();\n${returns}\n  return null;`));
    expect(warnings).toHaveLength(21);
    expect(warnings[19]?.line).toBe(24);
    expect(warnings[20]).toEqual({ code: "unawaited_return_in_session", message: "10 more like these, from line 25 on (only the first 20 are listed)", line: 25 });

    const huge = `{ ${Array.from({ length: 500 }, (_, i) => `field${i}: string`).join("; ")} }`;
    const longName = `s${"x".repeat(5000)}`;
    const typed = compileCode(automation(`  await using ${longName} = await Session.start();\n  return ${longName}.newPage() as Promise<${huge}>;`)).warnings;
    expect(typed).toHaveLength(1);
    expect(typed[0]?.message.length).toBeLessThan(500); // of a type of ~10 KB and a name of 5,001 characters
  });

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

describe("compileCode: the fix a warning suggests for `return x as T`", () => {
  let dir: string;
  beforeAll(async () => {
    // Inside the project (test-artifacts/ is git-ignored), so that the project's compiler options and types apply.
    await mkdir(path.join(__dirname, "../../test-artifacts"), { recursive: true });
    dir = await mkdtemp(path.join(__dirname, "../../test-artifacts/code-warnings-"));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A module whose session's page has typed methods, returning `expression` inside `await using`. */
  const module = (expression: string) => `interface Page { title(): Promise<string>; evaluate<T>(fn: () => T): Promise<T> }
async function start(): Promise<{ page: Page; [Symbol.asyncDispose](): Promise<void> }> {
  return { page: { title: async () => "t", evaluate: async (fn) => fn() }, [Symbol.asyncDispose]: async () => undefined };
}
export default async function run(): Promise<number[] | string> {
  await using session = await start();
  const page = session.page;
  return ${expression};
}
`;
  const suggestion = (message: string | undefined) => /write `return (.*)`$/.exec(message ?? "")?.[1] ?? "";

  it.each([
    ["page.evaluate(() => [1]) as Promise<number[]>", "(await page.evaluate(() => [1])) as number[]"],
    ["(page.evaluate(() => [1]) as Promise<number[]>)", "(await page.evaluate(() => [1])) as number[]"],
    ["page.title() as unknown as Promise<string>", "(await page.title() as unknown) as string"],
    ["page.title() as Promise<string> | string", "(await page.title()) as Promise<string> | string"],
    ["page.evaluate(() => [1]) satisfies Promise<number[]>", "(await page.evaluate(() => [1])) satisfies number[]"],
  ])("`return %s` suggests `return %s`, which type-checks and warns no more", async (expression, fixed) => {
    const warnings = compileCode(module(expression)).warnings;
    expect(warnings).toHaveLength(1);
    expect(suggestion(warnings[0]?.message)).toBe(fixed);
    const file = path.join(dir, `fixed-${expression.length}-${fixed.length}.ts`);
    await writeFile(file, module(fixed));
    expect(typecheck([file])).toEqual([]);
    expect(compileCode(module(fixed)).warnings).toEqual([]);
  });

  it("`await x as Promise<T>`, the old suggestion, is a type error", async () => {
    const file = path.join(dir, "naive.ts");
    await writeFile(file, module("await page.evaluate(() => [1]) as Promise<number[]>"));
    expect(typecheck([file]).join("\n")).toMatch(/Conversion of type 'number\[\]' to type 'Promise<number\[\]>' may be a mistake/);
  });
});
