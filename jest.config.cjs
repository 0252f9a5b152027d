/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "\\.[cm]?[jt]s$": "<rootDir>/test/transform.cjs" },
  // ESM-only dependencies (middy, @sparticuz/chromium, jose) are transformed to CommonJS for jest.
  transformIgnorePatterns: ["/node_modules/(?!(@middy|@sparticuz|jose)/)"],
  setupFiles: ["<rootDir>/test/setupEnv.cjs"],
  testTimeout: 30000,
};
