// Writes sdk/openapi.json from the code, without starting a server (the SDK's types are generated
// from it by `npm run sdk`); a test fails when the checked-in file differs from what the code builds.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_VERSION, PROJECT_ROOT } from './common/package-info.js';
import { gatewaySchema, REST_ROUTES } from './doors.js';
import { buildOpenApi } from './rest/openapi.js';

const target = join(PROJECT_ROOT, 'sdk', 'openapi.json');
const document = buildOpenApi(REST_ROUTES, await gatewaySchema(), PACKAGE_VERSION);
writeFileSync(target, `${JSON.stringify(document, null, 2)}\n`);
console.log(`Wrote ${target}`);
