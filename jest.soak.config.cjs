/**
 * `npm run test:soak`: the long-running soak test(s) in test/soak/*.soak.ts, kept out of `npm test`
 * (whose testMatch is **\/*.test.ts). SOAK_MINUTES sets the duration (default 10).
 * @type {import('jest').Config}
 */
const base = require("./jest.config.cjs");

module.exports = {
  ...base,
  testMatch: ["**/test/soak/*.soak.ts"],
  testTimeout: (Number(process.env.SOAK_MINUTES ?? 10) + 5) * 60_000,
};
