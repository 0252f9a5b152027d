import { compileCode } from "../../lambdas/code/compileCode";

const codes = (source: string) => compileCode(source).warnings.map((warning) => `${warning.line}:${warning.message.match(/`([^`]+)`/)?.[1] ?? ""}`);

describe("compileCode: launch options a script run as it is cannot use", () => {
  it("names each ignored option of launch() and launchPersistentContext() in a module that imports playwright or puppeteer", () => {
    const source = `import { chromium } from "playwright-core";
const puppeteer = require("puppeteer");
export default async function run() {
  const a = await chromium.launch({ headless: true, executablePath: "/x", args: ["--a"], channel: "chrome", slowMo: 10 });
  const b = await chromium.launchPersistentContext("/tmp/dir", { headless: false, viewport: null });
  const c = await puppeteer.launch({ headless: false, userDataDir: "/tmp/u", "remote-debugging-port": 9222, pipe: true, devtools: false });
  return [a, b, c].length;
}`;
    expect(codes(source)).toEqual(["4:executablePath", "4:args", "4:channel", "5:userDataDir", "5:headless", "6:headless", "6:userDataDir", "6:remote-debugging-port"]);
  });

  it("says nothing of a module that imports no browser library, nor of options that apply", () => {
    expect(codes(`const thing = { launch: (o: object) => o };\nexport default async () => thing.launch({ executablePath: "/x", headless: false });`)).toEqual([]);
    expect(codes(`import puppeteer from "puppeteer-core";\nexport default async () => (await puppeteer.launch({ headless: true, defaultViewport: null, timeout: 5 })).version();`)).toEqual([]);
  });
});
