import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { typecheck } from "../helpers/typecheck";

/** What an automation's editor sees: the driver chosen in Session.start decides the Page and context types. */
describe("Session.start's driver types", () => {
  let dir: string;
  beforeAll(async () => {
    await mkdir(path.join(__dirname, "../../test-artifacts"), { recursive: true });
    dir = await mkdtemp(path.join(__dirname, "../../test-artifacts/driver-types-"));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const check = async (name: string, body: string) => {
    const file = path.join(dir, `${name}.ts`);
    const runtime = path.relative(dir, path.join(__dirname, "../../layers/runtime/index")).split(path.sep).join("/");
    await writeFile(file, `import { Session } from "${runtime}";\nexport async function run() {\n${body}\n}\n`);
    return typecheck([file]);
  };

  it("gives Playwright's Page and BrowserContext with driver: \"playwright\", puppeteer's by default", async () => {
    expect(
      await check(
        "both",
        `  const pw = await Session.start({ driver: "playwright" });
  const page = await pw.newPage();
  const text: string | null = await page.locator("h1").textContent();
  const same: boolean = page.context() === pw.context;
  const pptr = await Session.start({ timeout_minutes: 1 });
  const other = await pptr.newPage();
  const title: string = await other.$eval("h1", (h) => h.textContent ?? "");
  const id: string = pptr.context.id ?? "";
  return { text, same, title, id };`,
      ),
    ).toEqual([]);
    // A puppeteer page has no locator(...).textContent() (puppeteer's locators have no such method).
    expect((await check("wrong", `  const pptr = await Session.start();\n  return (await pptr.newPage()).locator("h1").textContent();`)).join("\n")).toMatch(/textContent/);
  }, 120_000);
});
