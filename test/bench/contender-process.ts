import { pathToFileURL } from 'node:url';

export interface ContenderOptions {
  databaseUrl: string;
  port?: number;
  host?: string;
  poolMax?: number;
}

/**
 * Runs a contender (the baseline, PostGraphile) as its own process when `moduleUrl` is the script
 * Node was started with: options from DATABASE_URL, PORT, HOST and DB_POOL_MAX, `{"listening": port}`
 * on stdout once it listens, closed on SIGTERM or SIGINT.
 */
export function runContenderProcess(
  moduleUrl: string,
  start: (options: ContenderOptions) => Promise<{ port: number; close(): Promise<void> }>,
): void {
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
