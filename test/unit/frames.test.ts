import fc from "fast-check";
import { FrameReader, encodeFrame } from "../../lambdas/runner/frames";

/** A reader with what it delivered and every problem it reported. */
function recordingReader(maxBytes: number) {
  const frames: unknown[] = [];
  const problems: string[] = [];
  const reader = new FrameReader(
    maxBytes,
    (message) => frames.push(message),
    (problem) => problems.push(problem),
  );
  return { reader, frames, problems };
}

/** A 4-byte big-endian length header followed by `body` as given (not necessarily JSON). */
function rawFrame(body: Buffer, length = body.length): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(length, 0);
  return Buffer.concat([header, body]);
}

const THREE_MESSAGES: unknown[] = [
  { type: "ready" },
  { type: "init_failed", message: "héllo € 😀 \u0000 \n" },
  { type: "idle", runId: "r1", leftover: ["Timeout", "Socket"], nested: { deep: [1, 2.5, null, true, {}] } },
];

describe("encodeFrame", () => {
  it("writes a 4-byte big-endian length of the UTF-8 JSON body, then the body", () => {
    const frame = encodeFrame({ a: "€" });
    const body = Buffer.from('{"a":"€"}', "utf8");
    expect(frame.readUInt32BE(0)).toBe(body.length);
    expect(frame.subarray(4)).toEqual(body);
    expect(frame.length).toBe(4 + body.length);
  });
});

describe("FrameReader", () => {
  it("delivers three frames fed one byte at a time, in order, each once", () => {
    const stream = Buffer.concat(THREE_MESSAGES.map(encodeFrame));
    const { reader, frames, problems } = recordingReader(1024);
    for (let i = 0; i < stream.length; i++) reader.push(stream.subarray(i, i + 1));
    expect(frames).toEqual(THREE_MESSAGES);
    expect(problems).toEqual([]);
  });

  it("delivers three frames however the stream is cut in two, at every byte boundary", () => {
    const stream = Buffer.concat(THREE_MESSAGES.map(encodeFrame));
    for (let cut = 0; cut <= stream.length; cut++) {
      const { reader, frames, problems } = recordingReader(1024);
      reader.push(stream.subarray(0, cut));
      reader.push(stream.subarray(cut));
      expect(frames).toEqual(THREE_MESSAGES);
      expect(problems).toEqual([]);
    }
  });

  it("delivers any three JSON values split into random chunk sizes (property, fixed seed)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue({ maxDepth: 3 }), { minLength: 3, maxLength: 3 }),
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 50 }),
        (messages, sizes) => {
          const stream = Buffer.concat(messages.map(encodeFrame));
          const { reader, frames, problems } = recordingReader(1 << 20);
          let offset = 0;
          for (let i = 0; offset < stream.length; i++) {
            const size = sizes[i % sizes.length] as number;
            reader.push(stream.subarray(offset, offset + size));
            offset += size;
          }
          // What JSON can carry (e.g. -0 travels as 0).
          expect(frames).toEqual(messages.map((message) => JSON.parse(JSON.stringify(message)) as unknown));
          expect(problems).toEqual([]);
        },
      ),
      { seed: 20240611, numRuns: 200 },
    );
  });

  it("accepts a frame of exactly maxBytes", () => {
    const message = { pad: "x".repeat(50) };
    const frame = encodeFrame(message);
    const { reader, frames, problems } = recordingReader(frame.length - 4);
    reader.push(frame);
    expect(frames).toEqual([message]);
    expect(problems).toEqual([]);
  });

  it("refuses a frame whose header says more than maxBytes as soon as the header is in, before its body", () => {
    const { reader, frames, problems } = recordingReader(100);
    const header = rawFrame(Buffer.alloc(0), 101);
    reader.push(header.subarray(0, 2));
    expect(problems).toEqual([]);
    reader.push(header.subarray(2, 4));
    expect(problems).toEqual(["a message of 101 bytes is over the limit of 100"]);
    expect(frames).toEqual([]);

    // Nothing after the refusal is read: neither the body nor a valid frame behind it.
    reader.push(Buffer.from(JSON.stringify("y".repeat(99)), "utf8"));
    reader.push(encodeFrame({ type: "ready" }));
    reader.push(encodeFrame({ type: "ready" }));
    expect(problems).toHaveLength(1);
    expect(frames).toEqual([]);
  });

  it("refuses a 4 GB length header without waiting for the body", () => {
    const { reader, frames, problems } = recordingReader(1024);
    reader.push(rawFrame(Buffer.alloc(0), 0xffffffff));
    expect(problems).toEqual([`a message of ${0xffffffff} bytes is over the limit of 1024`]);
    expect(frames).toEqual([]);
  });

  it("reports a body that is not JSON, after delivering the frames before it", () => {
    const { reader, frames, problems } = recordingReader(1024);
    reader.push(Buffer.concat([encodeFrame({ n: 1 }), rawFrame(Buffer.from("{not json", "utf8")), encodeFrame({ n: 2 })]));
    expect(frames).toEqual([{ n: 1 }]);
    expect(problems).toEqual(["a message is not JSON"]);
  });

  it("reports an empty body as not JSON", () => {
    const { reader, frames, problems } = recordingReader(1024);
    reader.push(rawFrame(Buffer.alloc(0)));
    expect(frames).toEqual([]);
    expect(problems).toEqual(["a message is not JSON"]);
  });

  it("delivers nothing more after a problem, whatever is pushed later", () => {
    const { reader, frames, problems } = recordingReader(1024);
    reader.push(rawFrame(Buffer.from("nope", "utf8")));
    expect(problems).toEqual(["a message is not JSON"]);
    const later = Buffer.concat([encodeFrame({ n: 1 }), encodeFrame({ n: 2 })]);
    for (let i = 0; i < later.length; i++) reader.push(later.subarray(i, i + 1));
    reader.push(later);
    reader.push(rawFrame(Buffer.alloc(0), 5000));
    expect(frames).toEqual([]);
    expect(problems).toHaveLength(1);
  });

  it("does nothing with empty chunks", () => {
    const { reader, frames, problems } = recordingReader(1024);
    reader.push(Buffer.alloc(0));
    const frame = encodeFrame({ ok: true });
    reader.push(frame.subarray(0, 3));
    reader.push(Buffer.alloc(0));
    reader.push(frame.subarray(3));
    reader.push(Buffer.alloc(0));
    expect(frames).toEqual([{ ok: true }]);
    expect(problems).toEqual([]);
  });

  it("parses a 6 MB frame delivered in 64 KB chunks once and correctly, then the frame behind it", () => {
    const big = { type: "done", runId: "r-big", outcome: { result_json: "€".repeat(2 * 1024 * 1024) } };
    const stream = Buffer.concat([encodeFrame(big), encodeFrame({ type: "idle", runId: "r-big", leftover: [] })]);
    expect(stream.length).toBeGreaterThan(6 * 1024 * 1024);
    const { reader, frames, problems } = recordingReader(8 * 1024 * 1024);
    const chunk = 64 * 1024;
    for (let offset = 0; offset < stream.length; offset += chunk) reader.push(stream.subarray(offset, offset + chunk));
    expect(problems).toEqual([]);
    expect(frames).toHaveLength(2);
    expect(frames[0]).toEqual(big);
    expect(frames[1]).toEqual({ type: "idle", runId: "r-big", leftover: [] });
  });
});
