import { startTestService, type TestService } from "../helpers/localService";

// Screenshots are what a run keeps of a page (artifacts, failure evidence): the sandbox's
// Chromium must draw text. It drew none when the bundled fonts were unreadable to a worker's uid.

/** Screenshots black text on white, then counts the dark pixels of that screenshot (decoded in the same browser). */
const DRAWS_TEXT = `import { Session } from "browserfn/runtime";
export default async () => {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.setViewport({ width: 400, height: 200 });
  await page.setContent('<body style="margin:0;background:#fff"><p style="font:bold 64px sans-serif;color:#000;margin:40px">Hello</p></body>');
  const png = Buffer.from(await page.screenshot({ type: "png" })).toString("base64");
  const viewer = await session.newPage();
  return await viewer.evaluate(async (data) => {
    const image = new Image();
    image.src = "data:image/png;base64," + data;
    await image.decode();
    const canvas = document.createElement("canvas");
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext("2d")!;
    context.drawImage(image, 0, 0);
    const pixels = context.getImageData(0, 0, image.width, image.height).data;
    let dark = 0;
    for (let i = 0; i < pixels.length; i += 4) if (pixels[i]! < 100 && pixels[i + 1]! < 100 && pixels[i + 2]! < 100) dark++;
    return { width: image.width, dark };
  }, png);
};`;

describe.each(["namespaces", "process"] as const)("text in the sandbox's browser (%s sandbox)", (mode) => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService({ config: { sandbox: mode } });
    expect(t.service.sandbox.mode).toBe(mode);
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
  });

  it("is drawn: a screenshot of a word shows its letters", async () => {
    await t.deploy("draws-text", DRAWS_TEXT);
    const answer = await t.call("POST", "/functions/draws-text");
    expect(answer.status).toBe(200);
    const { width, dark } = answer.body as { width: number; dark: number };
    expect(width).toBe(400);
    // "Hello" in bold 64 px covers a few thousand pixels; without a font, none.
    expect(dark).toBeGreaterThan(1000);
  }, 60_000);
});
