import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { emptyScratch, mountPoints } from "../../lambdas/runner/emptyScratch";

describe("emptying a sandbox's file systems after a run", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), "browserfn-scratch-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("reads mount points from mountinfo, escapes undone", () => {
    const mountinfo = [
      "22 1 0:21 / / rw,relatime - tmpfs tmpfs rw",
      "23 22 0:22 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw,size=524288k",
      "24 23 254:0 /tmp/chromium /tmp/chromium ro,relatime - ext4 /dev/vda rw",
      "25 23 0:23 / /tmp/with\\040space rw - tmpfs tmpfs rw",
      "",
    ].join("\n");
    expect(mountPoints(mountinfo)).toEqual(new Set(["/", "/tmp", "/tmp/chromium", "/tmp/with space"]));
  });

  it("removes what a run left, keeps the dirs, what is mounted in them and the profile, and follows no link", () => {
    const tmp = path.join(root, "tmp");
    const runtime = path.join(tmp, "runtime");
    const profile = path.join(runtime, "profile-1");
    const outside = path.join(root, "outside");
    for (const dir of [tmp, runtime, path.join(profile, "Default"), path.join(profile, "Downloads"), path.join(tmp, "deep", "er"), outside]) mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(outside, "precious"), "x");
    writeFileSync(path.join(tmp, "left.bin"), "x");
    writeFileSync(path.join(tmp, "deep", "er", "left.bin"), "x");
    writeFileSync(path.join(tmp, "chromium"), "mounted");
    writeFileSync(path.join(runtime, "host.cjs"), "mounted");
    writeFileSync(path.join(runtime, "stray"), "x");
    writeFileSync(path.join(profile, "Default", "Preferences"), "{}");
    writeFileSync(path.join(profile, "Downloads", "big.bin"), "x");
    symlinkSync(outside, path.join(tmp, "link"));
    const mounts = new Set([tmp, path.join(tmp, "chromium"), runtime, path.join(runtime, "host.cjs")]);
    emptyScratch([tmp, runtime, path.join(profile, "Downloads")], [profile], mounts);
    expect(readdirSync(tmp).sort()).toEqual(["chromium", "runtime"]);
    expect(readdirSync(runtime).sort()).toEqual(["host.cjs", "profile-1"]);
    expect(readdirSync(path.join(profile, "Default"))).toEqual(["Preferences"]);
    expect(readdirSync(path.join(profile, "Downloads"))).toEqual([]);
    expect(existsSync(path.join(outside, "precious"))).toBe(true);
  });

  it("empties around a kept path that a link stands in for, without following it", () => {
    const tmp = path.join(root, "tmp");
    const outside = path.join(root, "outside");
    mkdirSync(tmp);
    mkdirSync(outside);
    writeFileSync(path.join(outside, "precious"), "x");
    symlinkSync(outside, path.join(tmp, "runtime"));
    emptyScratch([tmp], [path.join(tmp, "runtime", "profile-1")], new Set());
    expect(readdirSync(tmp)).toEqual([]);
    expect(readdirSync(outside)).toEqual(["precious"]);
  });
});
