import { createServer, type Server } from "node:http";
import { serveLocally } from "./pageServer";

export interface LoginSite {
  url: string;
  close(): Promise<void>;
}

/**
 * A site that remembers a login the way real ones do, on 127.0.0.1: `/login` sets an httpOnly
 * session cookie and, from its page script, `user` in localStorage and a token in IndexedDB
 * (`app`/`kv`), then titles itself `logged-in`; `/account` greets the session cookie it
 * receives (its `<h1>`: `welcome <sid>` or `who are you?`); `/whoami`'s first script titles it
 * with the `user` its localStorage holds as the document starts (`user:alice`, `user:null`);
 * `/to-whoami` redirects there.
 */
export async function startLoginSite(sessionId = "sid-4f2a9c"): Promise<LoginSite> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname === "/login") {
      response.writeHead(200, { "content-type": "text/html", "set-cookie": `sid=${sessionId}; HttpOnly; Path=/; Max-Age=3600` });
      response.end(`<!doctype html><title>logging in</title><script>
        localStorage.setItem("user", "alice");
        const open = indexedDB.open("app", 1);
        open.onupgradeneeded = () => open.result.createObjectStore("kv");
        open.onsuccess = () => {
          const tx = open.result.transaction("kv", "readwrite");
          tx.objectStore("kv").put("token-42", "token");
          tx.oncomplete = () => { open.result.close(); document.title = "logged-in"; };
        };
      </script>`);
      return;
    }
    if (url.pathname === "/whoami") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(`<!doctype html><title>-</title><script>document.title = "user:" + localStorage.getItem("user");</script>`);
      return;
    }
    if (url.pathname === "/to-whoami") {
      response.writeHead(302, { location: "/whoami" });
      response.end();
      return;
    }
    const sid = /(?:^|;\s*)sid=([^;]+)/.exec(request.headers.cookie ?? "")?.[1];
    response.writeHead(200, { "content-type": "text/html" });
    response.end(`<!doctype html><title>account</title><h1>${sid ? `welcome ${sid}` : "who are you?"}</h1>`);
  });
  return serveLocally(server);
}

/** A function that logs in to the site (startLoginSite's `url` as its parameter) and saves the login in the profile `profile`. */
export const loginFn = (profile: string) => `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ profile: "${profile}", persist: true });
  const page = await session.newPage();
  await page.goto(site + "/login");
  await page.waitForFunction(() => document.title === "logged-in");
  return { logged_in: true };
}
`;

/** loginFn for the profile `shop`. */
export const LOGIN_FN = loginFn("shop");

/**
 * A function that opens the profile `shop` (read only) and tells what the site's `/account` sees of
 * the browser: its greeting, `user` in localStorage, the IndexedDB token, the cookies script can read.
 */
export const CHECK_FN = `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ profile: "shop" });
  const page = await session.newPage();
  await page.goto(site + "/account");
  return await page.evaluate(async () => {
    const token = await new Promise((resolve) => {
      const open = indexedDB.open("app");
      open.onsuccess = () => {
        const db = open.result;
        if (!db.objectStoreNames.contains("kv")) return resolve(null);
        const read = db.transaction("kv").objectStore("kv").get("token");
        read.onsuccess = () => resolve(read.result ?? null);
      };
    });
    return { greeting: document.querySelector("h1")?.textContent, user: localStorage.getItem("user"), token, page_cookies: document.cookie };
  });
}
`;
