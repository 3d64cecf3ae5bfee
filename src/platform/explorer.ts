import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import express, { type Router } from 'express';
import { PACKAGE_VERSION } from '../common/package-info.js';

const require = createRequire(import.meta.url);

/** The folder of an installed package, so its prebuilt browser files are served as they ship. */
function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

const ASSET_CACHE = { maxAge: '1d', index: false } as const;

/** Small HTML shell; the page's own script is a separate file, so a strict CSP needs no inline script. */
function page(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${head}
</head>
<body>
${body}
</body>
</html>
`;
}

const LANDING = page(
  'Telephony agent gateway',
  `<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 42rem; margin: 3rem auto; padding: 0 1rem; color: #1d2433; }
  code { background: #f2f4f8; padding: 0 .25rem; border-radius: 3px; }
  li { margin: .4rem 0; }
</style>`,
  `<h1>Telephony agent gateway</h1>
<p>Version ${PACKAGE_VERSION}. Every <code>/api</code> route and GraphQL operation needs
<code>x-api-key: &lt;key&gt;</code> or <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<ul>
  <li><a href="/docs/guides">Guides</a>: how to do each thing, from a first key to voice campaigns (works offline)</li>
  <li><a href="/docs">REST API reference</a> (Swagger UI, works offline)</li>
  <li><a href="/graphiql">GraphiQL</a> with the explorer (works offline)</li>
  <li><a href="/graphql">Apollo Sandbox</a> (needs the internet)</li>
  <li><a href="/api/openapi.json">OpenAPI document</a> (<code>/api/openapi.json</code>)</li>
  <li><a href="/docs/errors">Error codes</a>: what each problem's <code>code</code> means and what to do about it</li>
  <li><a href="/healthz">Health</a> (<code>/healthz</code>) and readiness (<code>/readyz</code>)</li>
</ul>`,
);

const SWAGGER_PAGE = page(
  'REST API reference · Telephony agent gateway',
  `<link rel="stylesheet" href="/docs/assets/swagger-ui/swagger-ui.css">
<style>#gateway-nav { font: 15px/1.5 system-ui, sans-serif; padding: .6rem 1rem; background: #f2f4f8; border-bottom: 1px solid #d8dde6; } #gateway-nav a { margin-right: 1rem; }</style>`,
  `<nav id="gateway-nav"><a href="/">Telephony agent gateway</a><a href="/docs/guides">Guides</a><a href="/graphiql">GraphiQL</a><a href="/docs/errors">Error codes</a></nav>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>`,
);

// No validator badge (it would call validator.swagger.io); "Authorize" keeps the key for the tab's life only.
const SWAGGER_INIT = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
  displayRequestDuration: true,
});
`;

const GRAPHIQL_PAGE = page(
  'GraphiQL · Telephony agent gateway',
  `<link rel="stylesheet" href="/graphiql/assets/graphiql.min.css">
<link rel="stylesheet" href="/graphiql/assets/explorer.css">
<style>body { margin: 0; } #graphiql { height: 100dvh; }</style>`,
  `<div id="graphiql">Loading GraphiQL…</div>
<script src="/graphiql/assets/react.production.min.js"></script>
<script src="/graphiql/assets/react-dom.production.min.js"></script>
<script src="/graphiql/assets/graphiql.min.js"></script>
<script src="/graphiql/assets/explorer.umd.js"></script>
<script src="/graphiql/assets/init.js"></script>`,
);

// The key goes in the Headers tab. It starts empty: introspection needs no credentials, but a placeholder
// key would be refused (401) and leave the explorer without a schema. Headers are not kept in localStorage.
const GRAPHIQL_INIT = `const fetcher = GraphiQL.createFetcher({ url: new URL('/graphql', location.href).toString() });
const explorer = GraphiQLPluginExplorer.explorerPlugin();
ReactDOM.createRoot(document.getElementById('graphiql')).render(
  React.createElement(GraphiQL, {
    fetcher,
    plugins: [explorer],
    defaultEditorToolsVisibility: 'headers',
    defaultHeaders: '{}',
    defaultQuery: '# Put {"x-api-key": "<your key>"} in the Headers tab below, then run this query.\\n{\\n  me {\\n    id\\n    email\\n    organization { id name }\\n  }\\n}\\n',
  }),
);
`;

function sendScript(source: string) {
  return (_req: express.Request, res: express.Response) => {
    res.type('text/javascript').send(source);
  };
}

function sendHtml(html: string) {
  return (_req: express.Request, res: express.Response) => {
    res.type('html').send(html);
  };
}

/**
 * `/` (links), `/docs` (Swagger UI over /api/openapi.json) and `/graphiql` (GraphiQL with the
 * explorer plugin), all from files installed with the gateway: nothing is loaded from a CDN,
 * so both work on a machine without the internet. No credentials are needed to load them.
 */
export function explorerRouter(): Router {
  const router = express.Router();
  const swagger = packageDir('swagger-ui-dist');
  const graphiql = packageDir('graphiql');
  const explorer = packageDir('@graphiql/plugin-explorer');
  const react = join(packageDir('react'), 'umd');
  const reactDom = join(packageDir('react-dom'), 'umd');

  router.get('/', sendHtml(LANDING));
  router.get('/docs', sendHtml(SWAGGER_PAGE));
  router.get('/docs/assets/init.js', sendScript(SWAGGER_INIT));
  router.use('/docs/assets/swagger-ui', express.static(swagger, ASSET_CACHE));

  router.get('/graphiql', sendHtml(GRAPHIQL_PAGE));
  router.get('/graphiql/assets/init.js', sendScript(GRAPHIQL_INIT));
  const files: Record<string, string> = {
    'react.production.min.js': join(react, 'react.production.min.js'),
    'react-dom.production.min.js': join(reactDom, 'react-dom.production.min.js'),
    'graphiql.min.js': join(graphiql, 'graphiql.min.js'),
    'graphiql.min.css': join(graphiql, 'graphiql.min.css'),
    'explorer.umd.js': join(explorer, 'dist', 'index.umd.js'),
    'explorer.css': join(explorer, 'dist', 'style.css'),
  };
  router.get('/graphiql/assets/:file', (req, res, next) => {
    const file = files[req.params.file];
    if (!file) return next();
    res.sendFile(file, { maxAge: ASSET_CACHE.maxAge });
  });
  return router;
}
