// A throwaway PostgreSQL cluster from the machine's server binaries (`pg_config --bindir`), for the
// benchmark and the fault script: initdb into a temp dir, start on a free port, stop and delete on close.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  dataDir: string;
  /** pg_ctl stop -m fast|immediate: the server goes away, the files stay. */
  stop(mode?: 'fast' | 'immediate'): void;
  /** pg_ctl start -w on the same port and data. */
  start(): void;
  /** stop() and start() without blocking the event loop, so requests in flight keep being answered meanwhile. */
  stopAsync(mode?: 'fast' | 'immediate'): Promise<void>;
  startAsync(): Promise<void>;
  /** Stops (immediately) and deletes everything. Safe to call twice. */
  destroy(): void;
}

export interface PgClusterOptions {
  /** Extra `-c name=value` settings, e.g. { shared_preload_libraries: 'pg_stat_statements' }. */
  settings?: Record<string, string | number>;
}

function bindir(): string {
  let dir = '';
  try {
    dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    // pg_config missing: fall through to the Debian layout
  }
  if (!dir || !existsSync(join(dir, 'initdb'))) {
    const versions = spawnSync('sh', ['-c', 'ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1'], { encoding: 'utf8' });
    dir = versions.stdout.trim();
  }
  if (!dir || !existsSync(join(dir, 'initdb'))) {
    throw new Error("PostgreSQL server binaries not found (pg_config --bindir); install Debian's postgresql package or set DATABASE_URL");
  }
  return dir;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export async function startPgCluster(options: PgClusterOptions = {}): Promise<PgCluster> {
  const bin = bindir();
  const root = mkdtempSync(join(tmpdir(), 'gateway-pg-'));
  const dataDir = join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  // initdb refuses to run as root: run the server binaries as the postgres user then.
  const invocation = (command: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]] : [join(bin, command), args];
  const run = (command: string, args: string[]) => {
    const [file, argv] = invocation(command, args);
    const result = spawnSync(file, argv, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
  };
  const runAsync = (command: string, args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const [file, argv] = invocation(command, args);
      execFile(file, argv, { encoding: 'utf8' }, (error, stdout, stderr) => {
        if (error) reject(new Error(`${command} failed: ${stderr || stdout || error.message}`));
        else resolve();
      });
    });
  if (asRoot) chownSync(root, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()), 0);
  const port = await freePort();
  run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  const settings = { listen_addresses: '127.0.0.1', fsync: 'off', max_connections: 200, ...options.settings };
  const serverOptions = [`-p ${port}`, `-k ${root}`, ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`)].join(' ');
  const log = join(root, 'server.log');
  let destroyed = false;
  const cluster: PgCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    stop(mode = 'fast') {
      run('pg_ctl', ['-D', dataDir, '-m', mode, '-w', 'stop']);
    },
    start() {
      run('pg_ctl', ['-D', dataDir, '-l', log, '-w', '-o', serverOptions, 'start']);
    },
    stopAsync(mode = 'fast') {
      return runAsync('pg_ctl', ['-D', dataDir, '-m', mode, '-w', 'stop']);
    },
    startAsync() {
      return runAsync('pg_ctl', ['-D', dataDir, '-l', log, '-w', '-o', serverOptions, 'start']);
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      try {
        run('pg_ctl', ['-D', dataDir, '-m', 'immediate', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
  cluster.start();
  return cluster;
}

/** The same server URL, naming another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Runs `fn` with a client on `url`, closed afterwards. */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
