/* global confirm */
// A function's secrets (`GET /functions/{ref}/secrets`): their names and when each was set, a
// form to add or replace one, and a button to remove one. The API never sends a value back, and
// the page keeps none: the value field is a password field, emptied once the value is saved.
import { dateTime, errorBox, h } from "./dom.js";

/** The secrets section's content, listed once before the page shows (a 401 signs out, as elsewhere). */
export async function secretsView(api, name) {
  const list = h("div", { id: "secrets" });
  const status = h("div", { id: "secret-status", "aria-live": "polite" });

  async function reload() {
    const listed = await api.secrets(name);
    const items = Array.isArray(listed?.items) ? listed.items : [];
    list.replaceChildren(items.length === 0 ? h("p", { class: "muted" }, "No secrets.") : secretsTable(items, remove));
  }

  async function remove(secret, button) {
    if (!confirm(`Remove the secret ${secret} of ${name}? Its runs will no longer read it.`)) return;
    button.disabled = true;
    try {
      await api.deleteSecret(name, secret);
      status.replaceChildren(h("p", { class: "muted" }, `Removed ${secret}.`));
      await reload();
    } catch (error) {
      status.replaceChildren(errorBox(error));
      button.disabled = false;
    }
  }

  try {
    await reload();
  } catch (error) {
    if (error.status === 401) throw error;
    list.replaceChildren(errorBox(error));
  }
  return [
    h("p", { class: "muted small" }, "Runs read these with secrets.get(NAME). Values are never shown; saving a name that exists replaces its value."),
    list,
    secretForm(api, name, status, reload),
    status,
  ];
}

function secretsTable(items, remove) {
  return h(
    "div",
    { class: "table-scroll" },
    h(
      "table",
      { class: "secrets-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "Name"), h("th", {}, "Updated"), h("th", {}, ""))),
      h(
        "tbody",
        {},
        items.map((item) => {
          const secret = String(item.name);
          const button = h("button", { type: "button", class: "secondary remove-secret", "data-name": secret, "aria-label": `Remove ${secret}` }, "Remove");
          button.addEventListener("click", () => remove(secret, button));
          return h("tr", { "data-name": secret }, h("td", {}, h("code", { class: "secret-name" }, secret)), h("td", {}, dateTime(item.updated_at)), h("td", {}, button));
        }),
      ),
    ),
  );
}

/** Name and value (a password field, emptied after saving); the API checks both. */
function secretForm(api, name, status, reload) {
  const nameInput = h("input", { type: "text", id: "secret-name", name: "secret-name", required: true, placeholder: "API_TOKEN", autocomplete: "off", spellcheck: "false" });
  const valueInput = h("input", { type: "password", id: "secret-value", name: "secret-value", required: true, autocomplete: "new-password" });
  const button = h("button", { type: "submit", id: "secret-save" }, "Save secret");

  async function submit(event) {
    event.preventDefault();
    const secret = nameInput.value.trim();
    button.disabled = true;
    try {
      await api.setSecret(name, secret, valueInput.value);
      valueInput.value = "";
      nameInput.value = "";
      status.replaceChildren(h("p", { class: "muted" }, `Saved ${secret}.`));
      await reload();
    } catch (error) {
      status.replaceChildren(errorBox(error));
    } finally {
      button.disabled = false;
    }
  }

  return h(
    "form",
    { id: "secret-form", on: { submit } },
    h("div", { class: "params" }, h("label", { for: "secret-name" }, "Name"), nameInput, h("label", { for: "secret-value" }, "Value"), valueInput),
    button,
  );
}
