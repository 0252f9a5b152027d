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
  // A handle a test leaves open must not hang CI after every test has passed (a recording
  // checker's idle thread did, once); leaked processes are caught by the tests themselves
  // (expectNoProcessesWith), and `npx jest --detectOpenHandles` finds a handle left open.
  forceExit: true,
};
