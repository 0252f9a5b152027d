import { inspect } from "node:util";
import { Redactor, SECRET_MARK } from "../../lambdas/secrets/redactor";

describe("Redactor", () => {
  const redactor = new Redactor(["hunter2", "hunter2-long", "tok\"en"]);

  it("replaces every value in text, the longest first, and is idempotent", () => {
    const once = redactor.text("a hunter2 b hunter2-long c");
    expect(once).toBe(`a ${SECRET_MARK} b ${SECRET_MARK} c`);
    expect(redactor.text(once)).toBe(once);
    // A value that is part of the mark itself does not take the mark apart.
    const tricky = new Redactor(["secret", "e"]);
    expect(tricky.text("my secret, see")).toBe(`my ${SECRET_MARK}, s${SECRET_MARK}${SECRET_MARK}`);
    expect(tricky.text(tricky.text("my secret"))).toBe(`my ${SECRET_MARK}`);
  });

  it("redacts each string and key of JSON, escaped forms included", () => {
    const json = JSON.stringify({ a: "tok\"en", list: ["x hunter2 y"], "hunter2": 1, n: 2 });
    expect(JSON.parse(redactor.json(json))).toEqual({ a: SECRET_MARK, list: [`x ${SECRET_MARK} y`], [SECRET_MARK]: 1, n: 2 });
    expect(redactor.json('{"clean":true}')).toBe('{"clean":true}');
  });

  it("holds back the end of a piece that may start a value until the next piece shows it", () => {
    const stream = redactor.stream();
    const out = [stream.push("log: hun"), stream.push("ter"), stream.push("2 done\nnext hunt"), stream.push("ing\n")];
    expect(out).toEqual(["log: ", "", `${SECRET_MARK} done\nnext `, "hunting\n"]);
    expect(stream.end()).toBe("");
    const cut = redactor.stream();
    expect(cut.push("a hunter")).toBe("a ");
    expect(cut.held()).toBe("hunter"); // a run cut short keeps what it wrote
    expect(cut.end()).toBe("hunter");
  });

  it("does nothing without secrets", () => {
    const none = new Redactor(["", ""]);
    expect(none.empty).toBe(true);
    expect(none.text("hunter2")).toBe("hunter2");
    expect(none.stream().push("abc")).toBe("abc");
  });
});

describe("Redactor.stream with values that start others or overlap", () => {
  it("holds back a whole value that may be the start of a longer one", () => {
    const stream = new Redactor(["admin", "admin123!"]).stream();
    const out = [stream.push("user admin"), stream.push("123! ok\n"), stream.push("just admin"), stream.push(" here\n")];
    expect(out.join("") + stream.end()).toBe(`user ${SECRET_MARK} ok\njust ${SECRET_MARK} here\n`);
    expect(out[0]).toBe("user ");
  });

  it("never cuts inside a value whose end could start another", () => {
    const stream = new Redactor(["abc", "bcx"]).stream();
    const out = [stream.push("zabc"), stream.push("q\n")];
    expect(out.join("") + stream.end()).toBe(`z${SECRET_MARK}q\n`);
    expect(out[0]).toBe("z");
  });

  it("gives the same text as redacting it whole, however it is cut", () => {
    const redactor = new Redactor(["admin", "admin123!", "abc", "bcx", "hunter2"]);
    const text = "a admin123! b admin c zabcq d bcx e hunter2hunter2 f adminadmin123!\n";
    for (let size = 1; size <= 7; size++) {
      const stream = redactor.stream();
      let out = "";
      for (let i = 0; i < text.length; i += size) out += stream.push(text.slice(i, i + size));
      expect([size, out + stream.end()]).toEqual([size, redactor.text(text)]);
    }
  });
  it("redacts a recording-sized value whole: each string, key and number, none missed, nothing else changed", () => {
    const secrets = new Redactor(["hunter2-secret", "77777", "tok_ABC"]);
    // rrweb-like events: 5,000 nodes, a secret in every 97th text, every 89th attribute key, every 83rd id.
    const node = (id: number, secret: (every: number) => string) => ({
      type: 2,
      tagName: "div",
      attributes: { class: `row ${id}`, [`data-${id % 89 === 0 ? secret(89) : "k"}`]: `v${id}` },
      childNodes: [{ type: 3, textContent: `text ${id} ${id % 97 === 0 ? secret(97) : "plain"}`, id: id % 83 === 0 ? Number(`${id + 1}077777`) : id }],
      id,
    });
    const raw = Array.from({ length: 5_000 }, (_, id) => node(id, (every) => (every === 89 ? "tok_ABC" : "hunter2-secret")));
    const expected = Array.from({ length: 5_000 }, (_, id) => {
      const copy = node(id, () => SECRET_MARK) as { childNodes: { id: number | string }[] };
      if (id % 83 === 0) (copy.childNodes[0] as { id: number | string }).id = `${id + 1}0${SECRET_MARK}`;
      return copy;
    });
    const proto = JSON.parse('{"__proto__":{"x":"tok_ABC"}}') as object;
    expect(secrets.value({ events: raw, proto })).toEqual({ events: expected, proto: JSON.parse(`{"__proto__":{"x":"${SECRET_MARK}"}}`) });
    expect(Object.getPrototypeOf(secrets.value(proto))).toBe(Object.prototype);
    expect(Object.keys(secrets.value(proto))).toEqual(["__proto__"]);
  });

  it("finds a multi-line value that starts with a new line where util.inspect split it", () => {
    const value = "\nline one of the key\nline two of the key\n";
    const secrets = new Redactor([value]);
    const logged = inspect({ key: value + "x".repeat(80) }, { breakLength: 60 });
    expect(logged).toContain("' +\n");
    expect(secrets.text(logged)).not.toContain("line one");
  });
});
