/* global document, confirm */
// The account's browser profiles (`GET /profiles`): each one's size, last save and cookie
// domains, and a button to delete one. A profile's state (cookies, storage) never leaves the service.
import { bytes, dateTime, errorBox, h, runLink, table } from "./dom.js";

export async function renderProfilesPage(view, api) {
  document.title = "Profiles · browserfn";
  const list = h("div", { id: "profiles" });
  const status = h("div", { id: "profile-status", "aria-live": "polite" });

  async function reload() {
    const listed = await api.profiles();
    const items = Array.isArray(listed?.items) ? listed.items : [];
    list.replaceChildren(
      items.length === 0
        ? h("p", { class: "muted" }, "No profiles yet. A run saves one with Session.start({ profile: \"name\", persist: true }).")
        : table(
            ["Name", "Size", "Saved", "By", "Cookie domains", ""],
            items.map((profile) => [
              profile.name,
              bytes(profile.bytes),
              dateTime(profile.updated_at),
              profile.last_run_id ? h("span", {}, profile.last_function ?? "", " ", runLink(profile.last_run_id)) : "—",
              profile.domains.join(", ") || "—",
              h("button", { type: "button", class: "link danger", "data-profile": profile.name, on: { click: (event) => remove(profile.name, event.currentTarget) } }, "Delete"),
            ]),
            { id: "profiles-table" },
          ),
    );
  }

  async function remove(name, button) {
    if (!confirm(`Delete the profile ${name}? The logins it keeps are lost.`)) return;
    button.disabled = true;
    try {
      await api.deleteProfile(name);
      status.replaceChildren(h("p", { class: "muted" }, `Deleted ${name}.`));
      await reload();
    } catch (error) {
      status.replaceChildren(errorBox(error));
      button.disabled = false;
    }
  }

  await reload();
  view.replaceChildren(
    h("h1", {}, "Profiles"),
    h("p", { class: "muted small" }, "Saved browser state (cookies, localStorage, IndexedDB) that keeps a login between runs. Stored encrypted; only the account's functions open them."),
    list,
    status,
  );
}
