import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * DATA_DIR/operator.json tells the operator CLI that a running server holds the embedded database
 * and where to send its commands instead: `{pid, socket, token}`. The door listens on a Unix socket
 * of its own (a named pipe on Windows), never on the public listener. The token is its secret, new
 * at every start; the file is 0600 in a 0700 directory, so only the user who runs the server (and
 * may read its database anyway) can read it. It is never logged.
 */
export const OPERATOR_FILE = 'operator.json';

export interface OperatorEndpoint {
  pid: number;
  /** The path of the door's Unix socket (a named pipe on Windows). */
  socket: string;
  token: string;
}

/** A fresh secret for this process's /operator door (256 random bits). */
export function newOperatorToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The longest socket path every Unix takes (sun_path is 104 bytes on macOS, 108 on Linux, the final NUL included). */
const SOCKET_PATH_MAX = 100;

/**
 * Where the door listens: DATA_DIR/operator.sock, or when that path is too long for a socket, in a
 * new 0700 folder of the temporary directory (operator.json says which). Only who may enter the
 * folder and write the socket (0600) can connect: the user who runs the server.
 */
export function operatorSocketPath(dataDir: string): string {
  if (process.platform === 'win32') return `\\\\.\\pipe\\gateway-operator-${randomBytes(12).toString('hex')}`;
  const inDataDir = join(dataDir, 'operator.sock');
  if (Buffer.byteLength(inDataDir) <= SOCKET_PATH_MAX) return inDataDir;
  return join(mkdtempSync(join(tmpdir(), 'gateway-operator-')), 'operator.sock');
}

/** Serves the operator door on `socket`; answers a function that closes it and removes the socket (and a temporary folder made for it). */
export async function listenOperatorSocket(server: Server, socket: string, dataDir: string): Promise<() => Promise<void>> {
  const onDisk = process.platform !== 'win32';
  // A socket left by a server that was killed: this process holds the database, so no other server uses it.
  if (onDisk) rmSync(socket, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => {
      server.off('error', reject);
      resolve();
    });
  });
  if (onDisk) chmodSync(socket, 0o600);
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (!onDisk) return;
    rmSync(socket, { force: true });
    if (dirname(socket) !== dataDir) rmSync(dirname(socket), { recursive: true, force: true });
  };
}

/** Writes DATA_DIR/operator.json (0600); answers a function that removes it, if it is still this process's. */
export function writeOperatorFile(dir: string, endpoint: OperatorEndpoint): () => void {
  const file = join(dir, OPERATOR_FILE);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  rmSync(file, { force: true }); // a left-over of a server that was killed: the mode applies only to a new file
  writeFileSync(file, JSON.stringify(endpoint) + '\n', { mode: 0o600, flag: 'wx' });
  return () => {
    if (readOperatorFile(dir)?.pid === endpoint.pid) rmSync(file, { force: true });
  };
}

/** The endpoint a server wrote, or undefined when there is none (or it cannot be read as one). */
export function readOperatorFile(dir: string): OperatorEndpoint | undefined {
  const file = join(dir, OPERATOR_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<OperatorEndpoint>;
    if (Number.isInteger(value.pid) && typeof value.socket === 'string' && typeof value.token === 'string') return value as OperatorEndpoint;
  } catch {
    // Half-written or damaged: as if there were none; the CLI then opens the database itself.
  }
  return undefined;
}
