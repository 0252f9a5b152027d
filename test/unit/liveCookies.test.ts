import type { StoredCookie } from "../../layers/runtime/browserState/browserState";
import { liveCookies } from "../../layers/runtime/browserState/cookies";

const cookie = (fields: Partial<StoredCookie>): StoredCookie => ({ name: "sid", value: "v", domain: "example.com", path: "/", httpOnly: true, secure: false, ...fields });

describe("liveCookies (the cookies both drivers give back to a context)", () => {
  it("leaves out cookies expired at `now`, keeps session cookies and those expiring later", () => {
    const kept = liveCookies([cookie({ name: "gone", expires: 100 }), cookie({ name: "edge", expires: 200 }), cookie({ name: "later", expires: 201 }), cookie({ name: "session" })], 200);
    expect(kept.map((c) => c.name)).toEqual(["later", "session"]);
  });

  it("maps field by field: a session cookie has no expires, sameSite only when set, nothing else carried", () => {
    const outside = { ...cookie({ sameSite: "Strict", expires: 500 }), extra: "dropped" } as StoredCookie;
    expect(liveCookies([outside, cookie({ name: "s" })], 0)).toEqual([
      { name: "sid", value: "v", domain: "example.com", path: "/", httpOnly: true, secure: false, expires: 500, sameSite: "Strict" },
      { name: "s", value: "v", domain: "example.com", path: "/", httpOnly: true, secure: false },
    ]);
  });
});
