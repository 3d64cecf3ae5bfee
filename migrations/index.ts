import type { Migration } from '@mikro-orm/migrations';
import { Migration20261125000000 } from './Migration20261125000000.js';
import { Migration20261126000000 } from './Migration20261126000000.js';
import { Migration20261126100000 } from './Migration20261126100000.js';
import { Migration20261127000000 } from './Migration20261127000000.js';
import { Migration20261128000000 } from './Migration20261128000000.js';
import { Migration20261129000000 } from './Migration20261129000000.js';
import { Migration20261130000000 } from './Migration20261130000000.js';
import { Migration20261202000000 } from './Migration20261202000000.js';
import { Migration20261203000000 } from './Migration20261203000000.js';
import { Migration20261204000000 } from './Migration20261204000000.js';
import { Migration20261206000000 } from './Migration20261206000000.js';
import { Migration20261210000000 } from './Migration20261210000000.js';
import { Migration20261214000000 } from './Migration20261214000000.js';
import { Migration20261215071500 } from './Migration20261215071500.js';
import { Migration20261216090000 } from './Migration20261216090000.js';
import { Migration20261217113000 } from './Migration20261217113000.js';
import { Migration20261122142019 } from './Migration20261122142019.js';
import { Migration20261122034010 } from './Migration20261122034010.js';
import { Migration20261122034801 } from './Migration20261122034801.js';
import { Migration20261123090000 } from './Migration20261123090000.js';
import { Migration20261124080000 } from './Migration20261124080000.js';
import { Migration20261122022801 } from './Migration20261122022801.js';
import { Migration20261122022934 } from './Migration20261122022934.js';
import { Migration20261122021236 } from './Migration20261122021236.js';
import { Migration20261122021323 } from './Migration20261122021323.js';
import { Migration20261122021744 } from './Migration20261122021744.js';
import { Migration20261122020501 } from './Migration20261122020501.js';

type MigrationClass = new (...args: any[]) => Migration;

/** Every migration, in order. A new migration file is added here by `npm run migration:create`. */
export const MIGRATIONS: { name: string; class: MigrationClass }[] = [
  { name: 'Migration20261122020501', class: Migration20261122020501 },
  { name: 'Migration20261122021236', class: Migration20261122021236 },
  { name: 'Migration20261122021323', class: Migration20261122021323 },
  { name: 'Migration20261122021744', class: Migration20261122021744 },
  { name: 'Migration20261122022801', class: Migration20261122022801 },
  { name: 'Migration20261122022934', class: Migration20261122022934 },
  { name: 'Migration20261122034010', class: Migration20261122034010 },
  { name: 'Migration20261122034801', class: Migration20261122034801 },
  { name: 'Migration20261122142019', class: Migration20261122142019 },
  { name: 'Migration20261123090000', class: Migration20261123090000 },
  { name: 'Migration20261124080000', class: Migration20261124080000 },
  { name: 'Migration20261125000000', class: Migration20261125000000 },
  { name: 'Migration20261126000000', class: Migration20261126000000 },
  { name: 'Migration20261126100000', class: Migration20261126100000 },
  { name: 'Migration20261127000000', class: Migration20261127000000 },
  { name: 'Migration20261128000000', class: Migration20261128000000 },
  { name: 'Migration20261129000000', class: Migration20261129000000 },
  { name: 'Migration20261130000000', class: Migration20261130000000 },
  { name: 'Migration20261202000000', class: Migration20261202000000 },
  { name: 'Migration20261203000000', class: Migration20261203000000 },
  { name: 'Migration20261204000000', class: Migration20261204000000 },
  { name: 'Migration20261206000000', class: Migration20261206000000 },
  { name: 'Migration20261210000000', class: Migration20261210000000 },
  { name: 'Migration20261214000000', class: Migration20261214000000 },
  { name: 'Migration20261215071500', class: Migration20261215071500 },
  { name: 'Migration20261216090000', class: Migration20261216090000 },
  { name: 'Migration20261217113000', class: Migration20261217113000 },
];
