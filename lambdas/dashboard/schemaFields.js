// Form fields built from a parameter's JSON Schema (the record's `input_schema`): a select for an
// enum, a checkbox for a boolean, a number input for numbers, text for strings, a list with add and
// remove buttons for an array of those, nested fields for an object with known properties, and
// JSON text for everything else. Each field is `{ element, read }`: `read()` is the value to send,
// or undefined to leave the parameter (or property) out.
import { h } from "./dom.js";

/** Objects nested deeper than this are edited as JSON text. */
const MAX_NESTING = 3;

/** The schema without `null` in its type list (`string | null` is edited as a string; empty sends nothing). */
function withoutNull(schema) {
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((type) => type !== "null");
    if (types.length === 1) return { ...schema, type: types[0] };
  }
  return schema;
}

/** The literal values a select offers: `enum`, or `const`; null when the schema is not a choice. */
function choices(schema) {
  if (Array.isArray(schema.enum)) return schema.enum;
  if (schema.const !== undefined) return [schema.const];
  return null;
}

function isObjectWithProperties(schema) {
  return schema.type === "object" && schema.properties && typeof schema.properties === "object";
}

/** What shows in an empty field: the default, "required", or a hint of the kind of text expected. */
function placeholderOf(schema, required, otherwise = "") {
  if (schema.default !== undefined) return `default: ${JSON.stringify(schema.default)}`;
  return required ? "required" : otherwise;
}

/**
 * The field of one schema. `id` goes on its main control (the label's target), `required` says
 * whether it must be sent, `depth` how deep it sits in objects.
 */
export function schemaField(rawSchema, { id, required, depth = 0 }) {
  const schema = withoutNull(rawSchema ?? {});
  const values = choices(schema);
  if (values) return selectField(schema, values, id, required);
  switch (schema.type) {
    case "boolean": return checkboxField(schema, id, required);
    case "number": case "integer": return numberField(schema, id, required);
    case "string": return textField(schema, id, required);
    case "array":
      if (schema.items && !schema.prefixItems) return listField(schema, id, required, depth);
      break;
    case "object":
      if (isObjectWithProperties(schema) && depth < MAX_NESTING) return objectField(schema, id, required, depth);
      break;
  }
  return jsonField(schema, id, required);
}

function selectField(schema, values, id, required) {
  const empty = required ? [] : [h("option", { value: "" }, schema.default === undefined ? "(not set)" : `(default: ${JSON.stringify(schema.default)})`)];
  const select = h(
    "select",
    { id, "data-kind": "enum" },
    empty,
    values.map((value) => h("option", { value: JSON.stringify(value) }, typeof value === "string" ? value : JSON.stringify(value))),
  );
  return { element: select, read: () => (select.value === "" ? undefined : JSON.parse(select.value)) };
}

/** A checkbox. An optional one starts at its default and is sent only once changed; a required one always. */
function checkboxField(schema, id, required) {
  const box = h("input", { type: "checkbox", id, "data-kind": "boolean", checked: schema.default === true });
  let touched = false;
  box.addEventListener("change", () => {
    touched = true;
  });
  return { element: box, read: () => (required || touched ? box.checked : undefined) };
}

/** A number input; text that is no number is sent as typed, and the API says what is wrong with it. */
function numberField(schema, id, required) {
  const input = h("input", {
    type: "number",
    id,
    "data-kind": schema.type,
    step: schema.type === "integer" ? "1" : "any",
    placeholder: placeholderOf(schema, required),
  });
  return {
    element: input,
    read: () => {
      if (input.value === "") return undefined;
      const number = Number(input.value);
      return Number.isFinite(number) ? number : input.value;
    },
  };
}

function textField(schema, id, required) {
  const input = h("input", { type: "text", id, "data-kind": "string", placeholder: placeholderOf(schema, required), spellcheck: "false" });
  return { element: input, read: () => (input.value === "" ? undefined : input.value) };
}

/** JSON text (any value, unions, tuples, open objects): text that does not parse is sent as a string. */
function jsonField(schema, id, required) {
  const area = h("textarea", { id, "data-kind": "json", rows: 2, placeholder: placeholderOf(schema, required, "JSON"), spellcheck: "false" });
  return {
    element: area,
    read: () => {
      if (area.value === "") return undefined;
      try {
        return JSON.parse(area.value);
      } catch {
        return area.value;
      }
    },
  };
}

/** A list of item fields with add and remove buttons. An optional list is sent once it has an item. */
function listField(schema, id, required, depth) {
  const items = [];
  const list = h("ol", { class: "list-items" });
  let next = 0;
  const add = () => {
    const itemId = `${id}-item-${next++}`;
    const field = schemaField(schema.items, { id: itemId, required: true, depth: depth + 1 });
    const entry = { field, row: null };
    const remove = h("button", { type: "button", class: "list-remove", "aria-label": "Remove this item", on: { click: () => {
      items.splice(items.indexOf(entry), 1);
      entry.row.remove();
    } } }, "Remove");
    entry.row = h("li", { class: "list-item" }, field.element, remove);
    items.push(entry);
    list.append(entry.row);
    field.element.focus?.();
  };
  const addButton = h("button", { type: "button", class: "list-add", id: `${id}-add`, on: { click: add } }, "Add item");
  const element = h("div", { id, class: "list-field", "data-kind": "array" }, list, addButton);
  return {
    element,
    read: () => {
      if (items.length === 0) return required ? [] : undefined;
      // An item left empty is sent as null: the API then names its place (`tags[2]`).
      return items.map(({ field }) => {
        const value = field.read();
        return value === undefined ? null : value;
      });
    },
  };
}

/** One field per property, with its description; an optional object is sent once one of them is set. */
function objectField(schema, id, required, depth) {
  const requiredNames = new Set(Array.isArray(schema.required) ? schema.required : []);
  const entries = Object.entries(schema.properties).map(([name, property], i) => {
    const propertyId = `${id}-${i}`;
    const field = schemaField(property, { id: propertyId, required: requiredNames.has(name), depth: depth + 1 });
    return { name, field, property, propertyId };
  });
  const element = h(
    "fieldset",
    { id, class: "object-field", "data-kind": "object" },
    entries.map(({ name, field, property, propertyId }) =>
      h(
        "div",
        { class: "object-property" },
        h("label", { for: propertyId }, h("span", { class: "prop-name" }, name), requiredNames.has(name) ? h("span", { class: "required" }, " required") : null),
        field.element,
        hint(property.description),
      ),
    ),
  );
  return {
    element,
    read: () => {
      const value = {};
      for (const { name, field } of entries) {
        const read = field.read();
        if (read !== undefined) value[name] = read;
      }
      return Object.keys(value).length === 0 && !required ? undefined : value;
    },
  };
}

/** A description under a field (as text). */
export function hint(text, id) {
  return typeof text === "string" && text !== "" ? h("small", { class: "hint", id }, text) : null;
}
