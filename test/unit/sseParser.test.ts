import { SseParser } from "../../client/sseParser";

describe("SseParser", () => {
  it("reads events split anywhere, with CRLF, CR or LF line ends, comments, multi-line data and retry", () => {
    const text = ": hello\r\nretry: 750\r\n\r\nid: log:3\nevent: log\ndata: {\"a\":1}\ndata: two\r\rdata:plain\n\n";
    // Every split point gives the same events.
    for (let cut = 0; cut <= text.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut))];
      expect(events).toEqual([
        { event: "log", data: '{"a":1}\ntwo', id: "log:3" },
        { event: "message", data: "plain", id: "log:3" },
      ]);
      expect(parser.retryMs).toBe(750);
      expect(parser.lastEventId).toBe("log:3");
    }
  });

  it("drops an event left unfinished at the end", () => {
    const parser = new SseParser();
    expect(parser.push("id: result\nevent: result\ndata: {}\n")).toEqual([]);
    expect(parser.lastEventId).toBe("result");
  });
});
