import { PGliteAdapter, PGliteDialect, type DatabaseConnection, type Driver, type QueryCompiler, type TransactionSettings } from 'kysely';
import type { PGliteDialectConfig } from 'kysely';
import { ConnectionLine } from './connection-line.js';
import { inRequestScope } from './request-scope.js';

// PGlite is one session: Kysely lends its one connection to one query or transaction at a time, and
// the rest wait in line. This dialect replaces Kysely's own line (ConnectionMutex, first come, first
// served) with a ConnectionLine that serves requests before background work (connection-line.ts).

/** PGlite's adapter, telling Kysely not to keep a line of its own: the driver's ConnectionLine is it. */
class LinedAdapter extends PGliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

/** Kysely's PGlite driver, its one connection lent through the line. */
class LinedDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly line: ConnectionLine,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.line.acquire(inRequestScope());
    try {
      return await this.inner.acquireConnection();
    } catch (error) {
      this.line.release();
      throw error;
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.releaseConnection(connection);
    } finally {
      this.line.release();
    }
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.inner.savepoint!(connection, name, compile);
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.inner.rollbackToSavepoint!(connection, name, compile);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.inner.releaseSavepoint!(connection, name, compile);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** Kysely's PGlite dialect with requests served first (see above). */
export class LinedPGliteDialect extends PGliteDialect {
  readonly line = new ConnectionLine();

  constructor(config: PGliteDialectConfig) {
    super(config);
  }

  override createAdapter(): PGliteAdapter {
    return new LinedAdapter();
  }

  override createDriver(): Driver {
    return new LinedDriver(super.createDriver(), this.line);
  }
}
