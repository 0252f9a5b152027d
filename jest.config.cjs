const os = require("node:os");

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
  // Jest's default is one worker fewer than the cores: one worker on a 2-core CI machine, where
  // most suites spend their time waiting on browsers, workers and timers, not on the CPU. Two
  // suites at a time there; one fewer than the cores on larger machines.
  maxWorkers: Math.max(2, os.availableParallelism() - 1),
  // A handle a test leaves open must not hang CI after every test has passed (a recording
  // checker's idle thread did, once); leaked processes are caught by the tests themselves
  // (expectNoProcessesWith), and `npx jest --detectOpenHandles` finds a handle left open.
  forceExit: true,
};
