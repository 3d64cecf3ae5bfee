// Writes schema/schema.graphql from the code; a test fails when the checked-in file differs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './common/package-info.js';
import { printGatewaySchema } from './doors.js';

const target = join(PROJECT_ROOT, 'schema', 'schema.graphql');
writeFileSync(target, await printGatewaySchema());
console.log(`Wrote ${target}`);
