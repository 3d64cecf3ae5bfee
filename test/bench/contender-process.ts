// What the bench's contender servers (baseline.ts, postgraphile.ts) do when run as their own process:
// configuration from the environment, the chosen port printed as JSON on stdout, closed on SIGTERM or
// SIGINT. Self-contained (node: only) so that it runs with Node's own type stripping, as they do; they
// import it by its `.ts` name, which type stripping needs (tsconfig's rewriteRelativeImportExtensions).
import { pathToFileURL } from 'node:url';

export interface ContenderOptions {
  databaseUrl: string;
  port: number;
  host: string;
  poolMax: number;
}

/**
 * Starts the contender when `moduleUrl` (the caller's `import.meta.url`) is the script Node was asked
 * to run, and does nothing when the module was imported. Env: DATABASE_URL (required), PORT (default
 * 0, any free port), HOST (default 127.0.0.1), DB_POOL_MAX (default 10, the gateway's).
 */
export function runAsProcess(moduleUrl: string, start: (options: ContenderOptions) => Promise<{ port: number; close(): Promise<void> }>): void {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  const main = async () => {
    const databaseUrl = process.env.DATABASE_URL;
    if (!databaseUrl) throw new Error('DATABASE_URL is required');
    const server = await start({
      databaseUrl,
      port: Number(process.env.PORT ?? 0),
      host: process.env.HOST ?? '127.0.0.1',
      poolMax: Number(process.env.DB_POOL_MAX ?? 10),
    });
    process.stdout.write(`${JSON.stringify({ listening: server.port })}\n`);
    const stop = () => {
      server.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  };
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
