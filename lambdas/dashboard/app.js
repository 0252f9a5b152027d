/* global document, window, location, sessionStorage, localStorage */
// The dashboard's entry: sign-in, the key's storage, and the hash routes
// (#/functions, #/functions/<name>, #/runs/<run_id>, #/usage, #/profiles).
import { createApi } from "./api.js";
import { errorBox, h } from "./dom.js";
import { renderFunctionPage } from "./functionPage.js";
import { renderFunctionsPage } from "./functionsPage.js";
import { renderRunsPage } from "./runsPage.js";
import { createPageLifetime } from "./pageLifetime.js";
import { renderRunPage } from "./runPage.js";
import { renderUsagePage } from "./usagePage.js";
import { renderProfilesPage } from "./profilesPage.js";

/** Where the key is kept: this tab's sessionStorage, or localStorage when asked to remember it. */
const KEY_NAME = "browserfn.api_key";

const base = document.querySelector('meta[name="browserfn-base"]')?.getAttribute("content") ?? "";
const main = document.getElementById("main");
const nav = document.getElementById("nav");
const account = document.getElementById("account");

let api = null;
/** The lifetime of the page on show: left (its object URLs revoked, its timers stopped) when another is rendered. */
let lifetime = createPageLifetime();

function storedKey() {
  return sessionStorage.getItem(KEY_NAME) ?? localStorage.getItem(KEY_NAME);
}

function signOut(reason) {
  lifetime.leave();
  sessionStorage.removeItem(KEY_NAME);
  localStorage.removeItem(KEY_NAME);
  api = null;
  account.textContent = "";
  showSignIn(reason);
}

function showSignIn(reason) {
  nav.hidden = true;
  document.title = "Sign in · browserfn";
  const input = h("input", { id: "api-key", type: "password", name: "api_key", autocomplete: "off", spellcheck: "false", required: true, placeholder: "bfn_…" });
  const remember = h("input", { id: "remember", type: "checkbox" });
  const message = h("div", { id: "sign-in-error" }, reason ? errorBox(reason) : null);
  const button = h("button", { type: "submit" }, "Sign in");
  const form = h(
    "form",
    { id: "sign-in", class: "card narrow", on: { submit: (event) => signIn(event, input.value.trim(), remember.checked, message, button) } },
    h("h1", {}, "Sign in"),
    h("p", { class: "muted" }, "Paste an API key (or an OAuth access token). It stays in this browser and is sent only to this API, in the Authorization header."),
    h("label", { for: "api-key" }, "API key"),
    input,
    h("label", { class: "check" }, remember, " Remember it on this browser (localStorage; otherwise it is forgotten when the tab closes)"),
    message,
    button,
  );
  main.replaceChildren(form);
  input.focus();
}

async function signIn(event, key, remember, message, button) {
  event.preventDefault();
  if (!key) return;
  button.disabled = true;
  message.replaceChildren();
  const candidate = createApi(base, key);
  try {
    const usage = await candidate.usage();
    (remember ? localStorage : sessionStorage).setItem(KEY_NAME, key);
    api = candidate;
    account.textContent = `${usage.account} · ${usage.plan}`;
    if (!location.hash || location.hash === "#/") location.hash = "#/functions";
    else render();
  } catch (error) {
    message.replaceChildren(errorBox(error));
  } finally {
    button.disabled = false;
  }
}

function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(safeDecode);
  if (parts[0] === "functions" && parts[1]) return { page: "function", name: parts[1] };
  if (parts[0] === "runs" && parts[1]) return { page: "run", runId: parts[1] };
  if (parts[0] === "runs") return { page: "runs" };
  if (parts[0] === "usage") return { page: "usage" };
  if (parts[0] === "profiles") return { page: "profiles" };
  return { page: "functions" };
}

function safeDecode(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** Renders the page of the current hash. A stale render (the hash moved on) writes into a detached view. */
async function render() {
  lifetime.leave();
  if (!api) return showSignIn(null);
  nav.hidden = false;
  const current = route();
  const pageLifetime = (lifetime = createPageLifetime());
  for (const link of nav.querySelectorAll("[data-nav]")) {
    link.classList.toggle("active", link.dataset.nav === (["usage", "runs", "profiles"].includes(current.page) ? current.page : "functions"));
  }
  const view = h("div", { class: "view", "aria-busy": "true" }, h("p", { class: "muted" }, "Loading…"));
  main.replaceChildren(view);
  try {
    if (current.page === "function") await renderFunctionPage(view, api, current.name);
    else if (current.page === "run") await renderRunPage(view, api, current.runId, pageLifetime);
    else if (current.page === "usage") await renderUsagePage(view, api);
    else if (current.page === "profiles") await renderProfilesPage(view, api);
    else if (current.page === "runs") await renderRunsPage(view, api, pageLifetime);
    else await renderFunctionsPage(view, api, pageLifetime);
  } catch (error) {
    if (error.status === 401) return signOut(error);
    view.replaceChildren(errorBox(error));
  } finally {
    view.removeAttribute("aria-busy");
  }
}

async function start() {
  document.getElementById("sign-out").addEventListener("click", () => signOut(null));
  window.addEventListener("hashchange", () => render());
  const key = storedKey();
  if (!key) return showSignIn(null);
  api = createApi(base, key);
  try {
    const usage = await api.usage();
    account.textContent = `${usage.account} · ${usage.plan}`;
  } catch (error) {
    if (error.status === 401) return signOut(error);
  }
  await render();
}

start();
