// `npm start`: runs dist/local.cjs, the service (bin/local.ts) bundled by `npm ci` (the prepare
// script), built again first when a source is newer (scripts/build/launch.cjs).
require("../scripts/build/launch.cjs").launch("local.cjs", "bin/local.ts");
