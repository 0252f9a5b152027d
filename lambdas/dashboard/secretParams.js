// A run's parameters as the run page shows them: the value of every key that looks like it
// holds a secret (at any depth) replaced by "[secret]".

/** Parameter names whose values are not shown. */
export const SECRET_KEY = /secret|token|passw(or)?d|key|credential/i;

export const HIDDEN = "[secret]";

/** A copy of `value` with the values of secret-looking keys hidden; arrays and objects are copied. */
export function hideSecrets(value) {
  if (Array.isArray(value)) return value.map(hideSecrets);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, SECRET_KEY.test(key) ? HIDDEN : hideSecrets(item)]));
}
