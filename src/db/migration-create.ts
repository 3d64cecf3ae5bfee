// Generates the next migration from the difference between the entities and the schema
// the existing migrations build, on a throwaway in-memory PGlite, and lists it in migrations/index.ts.
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { PROJECT_ROOT } from '../common/package-info.js';
import { openDatabase } from './orm.js';

const migrationsDir = resolve(PROJECT_ROOT, 'migrations');
const name = process.argv[2];
const database = await openDatabase({ dataDir: 'memory://', migrate: true });
try {
  const result = await database.orm.migrator.create(migrationsDir, false, false, name);
  if (!result.fileName) {
    console.log('No changes: the entities match the migrations.');
  } else {
    const className = basename(result.fileName, '.ts');
    const indexFile = resolve(migrationsDir, 'index.ts');
    const index = readFileSync(indexFile, 'utf8')
      .replace(/(import type \{ Migration \}[^\n]*\n)/, `$1import { ${className} } from './${className}.js';\n`)
      .replace(/\] = \[\n?([\s\S]*?)\];/, (_all, body: string) => `] = [\n${body}  { name: '${className}', class: ${className} },\n];`);
    writeFileSync(indexFile, index);
    console.log(`Created migrations/${result.fileName}`);
  }
} finally {
  await database.close();
}
