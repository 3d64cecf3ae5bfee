// Writes the next migration, empty, after the newest in migrations/index.ts, and lists it there
// (`npm run migration:create`). Migrations are written by hand in SQL: many of the schema's tables,
// indexes, triggers and constraints (keyset and trigram indexes, kept row counts, the event triggers)
// live only in the migrations, and the entities map what the services read, so the ORM's diff of the
// entities against the schema proposes dropping them: it is not generated from that diff.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PROJECT_ROOT } from '../common/package-info.js';

const migrationsDir = resolve(PROJECT_ROOT, 'migrations');
const indexFile = resolve(migrationsDir, 'index.ts');
const index = readFileSync(indexFile, 'utf8');
// The migrations run in the list's order; their names are numbers that grow (dates, or past them).
const newest = Math.max(...[...index.matchAll(/name: 'Migration(\d+)'/g)].map((match) => Number(match[1])));
const className = `Migration${newest + 100000}`;
const file = resolve(migrationsDir, `${className}.ts`);
if (existsSync(file)) throw new Error(`migrations/${className}.ts exists already`);
writeFileSync(
  file,
  `import { Migration } from '@mikro-orm/migrations';

/** What this migration changes, and why (the issue it is for). It runs on PGlite and on PostgreSQL. */
export class ${className} extends Migration {
  override up(): void | Promise<void> {
    this.addSql(\`\`);
  }
}
`,
);
writeFileSync(
  indexFile,
  index
    .replace(/(import type \{ Migration \}[^\n]*\n)/, `$1import { ${className} } from './${className}.js';\n`)
    .replace(/\] = \[\n?([\s\S]*?)\];/, (_all, body: string) => `] = [\n${body}  { name: '${className}', class: ${className} },\n];`),
);
console.log(`Created migrations/${className}.ts, listed last in migrations/index.ts: write its up() in SQL, as the others are.`);
