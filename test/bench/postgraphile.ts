// The bench's peer: PostGraphile v5 (amber preset, grafserv on node:http) over the bench's database,
// as its documentation sets it up, with two additions: executions.audience_id has no foreign key (an
// audience can be deleted while its executions stay), so a smart tag declares the relation that a
// foreign key would; and every column may be ordered by (v4's default `ignoreIndexes`). Amber names
// the primary key `rowId` (`id` is the global Node id). It answers the same data as the gateway in
// its own schema names (the queries are in peer.ts); the bench maps its answers to the gateway's
// shape and checks them equal before any load (equivalence.ts).
//
// It does less than the gateway and the baseline: no authentication (the bench scopes every query to
// organization A with a `condition` instead), no rate limit, no request log. Env: DATABASE_URL
// (required), PORT (default 0), HOST (default 127.0.0.1), DB_POOL_MAX (default 10, the gateway's).
import { createServer } from 'node:http';
import { postgraphile } from 'postgraphile';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { jsonPgSmartTags } from 'postgraphile/utils';
import { runAsProcess } from './contender-process.ts';

export interface PostGraphileServer {
  port: number;
  close(): Promise<void>;
}

export async function startPostGraphile(options: { databaseUrl: string; port?: number; host?: string; poolMax?: number }): Promise<PostGraphileServer> {
  const preset: GraphileConfig.Preset = {
    extends: [PostGraphileAmberPreset],
    plugins: [
      jsonPgSmartTags({
        version: 1,
        config: { class: { executions: { tags: { foreignKey: '(audience_id) references audiences (id)' } } } },
      }),
    ],
    pgServices: [makePgService({ connectionString: options.databaseUrl, schemas: ['public'], poolConfig: { max: options.poolMax ?? 10 } })],
    // As PostGraphile v4 by default (ignoreIndexes): order and condition on any column, not only indexed ones.
    disablePlugins: ['PgIndexBehaviorsPlugin'],
    grafserv: { graphqlPath: '/graphql', watch: false },
    grafast: { explain: false },
  };
  const pgl = postgraphile(preset);
  const serv = pgl.createServ(grafserv);
  const server = createServer();
  await serv.addTo(server);
  await pgl.getSchema(); // introspection done before the first request
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await serv.release();
      await pgl.release();
    },
  };
}

runAsProcess(import.meta.url, startPostGraphile);
