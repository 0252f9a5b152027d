import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { devArtifacts } from "../../bin/cli/devArtifacts";

// `browserfn dev --artifacts DIR` writes what the run keeps into DIR: names come from the run
// (and from the pages it downloads from), so a file already in DIR is never replaced.
describe("dev's artifacts folder", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "browserfn-dev-artifacts-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("keeps a file that was there before, replaces only what the run itself wrote, and goes on after a refused name", async () => {
    await writeFile(path.join(dir, ".env"), "KEEP=1\n");
    const saved: string[] = [];
    const dropped: string[] = [];
    const receiver = devArtifacts(dir, (artifact) => saved.push(artifact.name), (name, why) => dropped.push(`${name}: ${why}`));
    const save = (name: string, text: string) => receiver.part(name, "text/plain", Buffer.from(text), true);

    save(".env", "STOLEN=1\n");
    save(".partial", "x");
    save("note.txt", "first");
    save("note.txt", "second");
    await receiver.finish();

    expect(await readFile(path.join(dir, ".env"), "utf8")).toBe("KEEP=1\n");
    expect(await readFile(path.join(dir, "note.txt"), "utf8")).toBe("second");
    expect(saved).toEqual(["note.txt", "note.txt"]);
    expect(receiver.saved.map((artifact) => artifact.name)).toEqual(["note.txt"]);
    expect(dropped).toEqual([`.env: a file of that name was in ${dir} already (not replaced)`, ".partial: the name is the folder's own (files are written there first)"]);
    expect((await readdir(dir)).sort()).toEqual([".env", "note.txt"]);
  });
});
