import { frameOf } from "../../lambdas/live/aws/s3LiveWatch";
import { MAX_FRAME_BYTES, MAX_FRAME_URL } from "../../lambdas/live/liveFrames";

// What the live route on AWS keeps of an object a run wrote at its frame key (untrusted: the
// presigned policy caps its size and type header, not what the bytes are).

const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from("rest of a jpeg")]);
const META = { url: "https://example.test/a", width: "400", height: "300" };

describe("frameOf: a frame from what a run uploaded", () => {
  it("keeps a JPEG with its metadata, field by field, its ETag as its id", () => {
    expect(frameOf(JPEG, { ...META, extra: "dropped" }, '"0123456789abcdef0123456789abcdef"')).toEqual({
      data: JPEG.toString("base64"),
      url: "https://example.test/a",
      width: 400,
      height: 300,
      id: "0123456789abcdef0123456789abcdef",
    });
  });

  it("drops what is not a JPEG, over the cap, or of no sane size", () => {
    expect(frameOf(Buffer.from("<html><script>alert(1)</script>"), META, '"a"')).toBeUndefined();
    expect(frameOf(Buffer.concat([JPEG, Buffer.alloc(MAX_FRAME_BYTES)]), META, '"a"')).toBeUndefined();
    for (const size of ["0", "16385", "-1", "1e3", "400px", "", "99999999"]) {
      expect(frameOf(JPEG, { ...META, width: size }, '"a"')).toBeUndefined();
      expect(frameOf(JPEG, { ...META, height: size }, '"a"')).toBeUndefined();
    }
    expect(frameOf(JPEG, { url: "x" }, '"a"')).toBeUndefined();
  });

  it("cuts a long URL and leaves out an id that is no ETag", () => {
    const frame = frameOf(JPEG, { ...META, url: `https://example.test/${"a".repeat(5000)}` }, '"bad id\nevent: end"');
    expect(frame?.url).toHaveLength(MAX_FRAME_URL);
    expect(frame && "id" in frame).toBe(false);
    expect(frameOf(JPEG, { width: "1", height: "1" }, undefined)).toEqual({ data: JPEG.toString("base64"), url: "", width: 1, height: 1 });
  });
});
