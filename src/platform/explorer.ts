import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import express, { type Router } from 'express';
import { PACKAGE_VERSION } from '../common/package-info.js';

const require = createRequire(import.meta.url);

/** The folder of an installed package, so its prebuilt browser files are served as they ship. */
function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

const ASSET_CACHE = { maxAge: '1d' } as const;

/** An inline `<style>` element and the CSP source that allows exactly it. */
function inlineStyle(css: string): { element: string; source: string } {
  return { element: `<style>${css}</style>`, source: `'sha256-${createHash('sha256').update(css).digest('base64')}'` };
}

/**
 * The pages' Content-Security-Policy: their own scripts, styles and API only (no inline script, no
 * eval, nothing from another origin), images also as data: URIs (Swagger UI's icons), and the one
 * inline style each page has, by its hash. Checked in Chromium by the explorer tests.
 */
function pagePolicy(style: { source: string }): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' ${style.source}`,
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

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

const LANDING_STYLE = inlineStyle(`
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 42rem; margin: 3rem auto; padding: 0 1rem; color: #1d2433; }
  code { background: #f2f4f8; padding: 0 .25rem; border-radius: 3px; }
  li { margin: .4rem 0; }
`);
const LANDING = page(
  'Telephony agent gateway',
  LANDING_STYLE.element,
  `<h1>Telephony agent gateway</h1>
<p>Version ${PACKAGE_VERSION}. Every <code>/api</code> route and GraphQL operation needs
<code>x-api-key: &lt;key&gt;</code> or <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<ul>
  <li><a href="/console">Console</a>: agents, campaigns live, calls with their transcript and recording (works offline)</li>
  <li><a href="/docs/guides">Guides</a>: how to do each thing, from a first key to voice campaigns (works offline)</li>
  <li><a href="/docs">REST API reference</a> (Swagger UI, works offline)</li>
  <li><a href="/graphiql">GraphiQL</a> with the explorer (works offline)</li>
  <li><a href="/graphql">Apollo Sandbox</a> (needs the internet)</li>
  <li><a href="/api/openapi.json">OpenAPI document</a> (<code>/api/openapi.json</code>)</li>
  <li><a href="/docs/errors">Error codes</a>: what each problem's <code>code</code> means and what to do about it</li>
  <li><a href="/healthz">Health</a> (<code>/healthz</code>) and readiness (<code>/readyz</code>)</li>
</ul>`,
);

const SWAGGER_STYLE = inlineStyle(
  '#gateway-nav { font: 15px/1.5 system-ui, sans-serif; padding: .6rem 1rem; background: #f2f4f8; border-bottom: 1px solid #d8dde6; } #gateway-nav a { margin-right: 1rem; }',
);
const SWAGGER_PAGE = page(
  'REST API reference · Telephony agent gateway',
  `<link rel="stylesheet" href="/docs/assets/swagger-ui/swagger-ui.css">
${SWAGGER_STYLE.element}`,
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

const GRAPHIQL_STYLE = inlineStyle('body { margin: 0; } #graphiql { height: 100dvh; }');
const GRAPHIQL_PAGE = page(
  'GraphiQL · Telephony agent gateway',
  `<link rel="stylesheet" href="/graphiql/assets/graphiql.min.css">
<link rel="stylesheet" href="/graphiql/assets/explorer.css">
${GRAPHIQL_STYLE.element}`,
  `<div id="graphiql">Loading GraphiQL…</div>
<script src="/graphiql/assets/react.production.min.js"></script>
<script src="/graphiql/assets/react-dom.production.min.js"></script>
<script src="/graphiql/assets/graphiql.min.js"></script>
<script src="/graphiql/assets/explorer.umd.js"></script>
<script src="/graphiql/assets/init.js"></script>`,
);

// The key goes in the Headers tab. It starts empty: introspection needs no credentials, but a placeholder
// key would be refused (401) and leave the explorer without a schema. GraphiQL keeps its tabs, history
// and favorites in localStorage, and each history entry held the Headers tab, API key and all: the
// storage it is given drops every `headers` from what it keeps, and never keeps the Headers tab itself.
const GRAPHIQL_INIT = `const KEPT_WITHOUT_HEADERS = ['graphiql:queries', 'graphiql:favorites', 'graphiql:tabState'];
const ours = () => Object.keys(localStorage).filter((key) => key.startsWith('graphiql:'));
const storage = {
  getItem: (key) => localStorage.getItem(key),
  setItem(key, value) {
    if (key === 'graphiql:headers') return;
    if (KEPT_WITHOUT_HEADERS.includes(key)) {
      try {
        value = JSON.stringify(JSON.parse(value, (name, inner) => (name === 'headers' ? undefined : inner)));
      } catch {
        return;
      }
    }
    localStorage.setItem(key, value);
  },
  removeItem: (key) => localStorage.removeItem(key),
  clear: () => ours().forEach((key) => localStorage.removeItem(key)),
  get length() {
    return ours().length;
  },
};
for (const key of KEPT_WITHOUT_HEADERS) {
  const kept = localStorage.getItem(key);
  if (kept !== null) storage.setItem(key, kept); // what an earlier version of this page kept, headers and all
}
localStorage.removeItem('graphiql:headers');
const fetcher = GraphiQL.createFetcher({ url: new URL('/graphql', location.href).toString() });
const explorer = GraphiQLPluginExplorer.explorerPlugin();
ReactDOM.createRoot(document.getElementById('graphiql')).render(
  React.createElement(GraphiQL, {
    fetcher,
    storage,
    shouldPersistHeaders: false,
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

function sendHtml(html: string, policy: string) {
  return (_req: express.Request, res: express.Response) => {
    res.setHeader('Content-Security-Policy', policy);
    res.type('html').send(html);
  };
}

/** Serves the files of `files` by name, and no other: a name is looked up in a Map, never in an object's prototype. */
function fileRoute(files: Map<string, string>) {
  return (req: express.Request, res: express.Response, next: express.NextFunction) => {
    const file = files.get(String(req.params.file));
    if (!file) return next();
    res.sendFile(file, ASSET_CACHE);
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

  router.get('/', sendHtml(LANDING, pagePolicy(LANDING_STYLE)));
  router.get('/docs', sendHtml(SWAGGER_PAGE, pagePolicy(SWAGGER_STYLE)));
  router.get('/docs/assets/init.js', sendScript(SWAGGER_INIT));
  // The two files the page loads, not the package (its own index.html points at the petstore).
  const swaggerFiles = new Map(['swagger-ui.css', 'swagger-ui-bundle.js'].map((name) => [name, join(swagger, name)]));
  router.get('/docs/assets/swagger-ui/:file', fileRoute(swaggerFiles));

  router.get('/graphiql', sendHtml(GRAPHIQL_PAGE, pagePolicy(GRAPHIQL_STYLE)));
  router.get('/graphiql/assets/init.js', sendScript(GRAPHIQL_INIT));
  const graphiqlFiles = new Map([
    ['react.production.min.js', join(react, 'react.production.min.js')],
    ['react-dom.production.min.js', join(reactDom, 'react-dom.production.min.js')],
    ['graphiql.min.js', join(graphiql, 'graphiql.min.js')],
    ['graphiql.min.css', join(graphiql, 'graphiql.min.css')],
    ['explorer.umd.js', join(explorer, 'dist', 'index.umd.js')],
    ['explorer.css', join(explorer, 'dist', 'style.css')],
  ]);
  router.get('/graphiql/assets/:file', fileRoute(graphiqlFiles));
  return router;
}
