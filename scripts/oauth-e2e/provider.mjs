// A real OAuth 2.1 authorization server on loopback for otc-bridge's OAuth end-to-end tests: npm
// `oidc-provider` (pinned by scripts/oauth-e2e/package-lock.json, installed by
// scripts/install-oauth-server.sh), configured the way an MCP server's authorization server is
// (authorization code + PKCE S256, RFC 8707 resource indicators, RFC 7591 dynamic registration,
// client credentials, RFC 7662 introspection, RFC 7009 revocation, refresh tokens).
//
//   node scripts/oauth-e2e/provider.mjs --port PORT --resource RESOURCE_URL [--modules DIR]
//
//   PORT          0 picks a free port. The issuer is `http://127.0.0.1:PORT` (no trailing slash).
//   RESOURCE_URL  the one resource (RFC 8707) this server issues tokens for, e.g. the MCP server's
//                 `http://127.0.0.1:PORT/mcp`; any other `resource` value is refused (invalid_target).
//   DIR           the directory holding node_modules/oidc-provider: --modules, else the env var
//                 OTC_OAUTH_SERVER_DIR, else $OTC_CORPUS_DIR/oauth-server, else
//                 <repo>/.corpus/oauth-server (found from this file's location).
//
// Run it with the pinned Node 22: .corpus/node22/node_modules/.bin/node (scripts/install-mcp-conformance.sh).
// Stdout carries exactly one line, `READY http://127.0.0.1:PORT`, once the server listens; every log
// line (oidc-provider's own notices included) goes to stderr. SIGTERM/SIGINT stop it.
//
// What it serves (issuer I = http://127.0.0.1:PORT):
//   I/.well-known/oauth-authorization-server and I/.well-known/openid-configuration (the same
//     metadata, both served by oidc-provider itself), I/auth, I/token,
//     I/reg (open registration), I/token/introspection, I/token/revocation, I/jwks, I/me,
//     I/interaction/UID (the dev login and consent forms).
//   Access tokens for RESOURCE_URL: opaque, aud = RESOURCE_URL, scope `tools`, 300 s.
//   Static clients: `otc-bridge-service` / `service-secret` (client_credentials,
//     client_secret_basic), `mcp-server` / `rs-secret` (no grants: introspection only,
//     client_secret_basic).
//   The login form takes any login (it becomes the subject) and any password.
import * as http from 'node:http';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// oidc-provider prints its NOTICEs with console.info (stdout): keep stdout for the READY line only.
console.info = (...args) => console.error(...args);
console.log = (...args) => console.error(...args);

function usage(message) {
  console.error(`provider.mjs: ${message}\nusage: node provider.mjs --port PORT --resource RESOURCE_URL [--modules DIR]`);
  process.exit(2);
}

const opts = { port: undefined, resource: undefined, modules: undefined };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 1) {
  const arg = argv[i];
  if (['--port', '--resource', '--modules'].includes(arg) && i + 1 < argv.length) {
    opts[arg.slice(2)] = argv[i + 1];
    i += 1;
  } else {
    usage(`unexpected argument ${JSON.stringify(arg)}`);
  }
}
if (opts.port === undefined || !/^\d+$/.test(opts.port)) usage('--port PORT is required (0 = any free port)');
if (!opts.resource) usage('--resource RESOURCE_URL is required');
try {
  const u = new URL(opts.resource);
  if (u.hash) usage('RESOURCE_URL must not have a fragment');
} catch {
  usage(`RESOURCE_URL is not an absolute URL: ${opts.resource}`);
}
const RESOURCE = opts.resource;

const here = path.dirname(fileURLToPath(import.meta.url));
const modulesDir = opts.modules
  || process.env.OTC_OAUTH_SERVER_DIR
  || (process.env.OTC_CORPUS_DIR ? path.join(process.env.OTC_CORPUS_DIR, 'oauth-server') : undefined)
  || path.join(here, '..', '..', '.corpus', 'oauth-server');
const entry = path.resolve(modulesDir, 'node_modules', 'oidc-provider', 'lib', 'index.js');
let oidc;
try {
  oidc = await import(pathToFileURL(entry).href);
} catch (err) {
  console.error(`provider.mjs: cannot load oidc-provider from ${entry} (run scripts/install-oauth-server.sh): ${err.message}`);
  process.exit(1);
}
const { Provider, errors } = oidc;

// Listen first (port 0 → a free port), then build the provider for the issuer that port gives.
const server = http.createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(Number(opts.port), '127.0.0.1', resolve);
});
const { port } = server.address();
const ISSUER = `http://127.0.0.1:${port}`;

const configuration = {
  clients: [
    {
      client_id: 'otc-bridge-service',
      client_secret: 'service-secret',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    {
      // The MCP server (the resource server): it only calls the introspection endpoint.
      client_id: 'mcp-server',
      client_secret: 'rs-secret',
      grant_types: [],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  responseTypes: ['code'], // OAuth 2.1: no implicit / hybrid
  // scopes_supported in the metadata; `tools` is also the resource server's scope below.
  scopes: ['openid', 'offline_access', 'tools'],
  async findAccount(ctx, id) {
    return { accountId: id, async claims() { return { sub: id }; } };
  },
  pkce: { required: () => true }, // S256 is the only method oidc-provider supports
  // A refresh token whenever the client registered the refresh_token grant (OAuth 2.1 / MCP
  // clients do not ask for `offline_access`).
  async issueRefreshToken(ctx, client, code) {
    return client.grantTypeAllowed('refresh_token');
  },
  ttl: {
    AccessToken: 300,
    ClientCredentials: 300,
    AuthorizationCode: 60,
    RefreshToken: 24 * 60 * 60,
    Grant: 24 * 60 * 60,
    Session: 24 * 60 * 60,
    Interaction: 10 * 60,
    IdToken: 300,
  },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true }, // open: no initial access token
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // No resource on the authorization request: none (the token is then not for RESOURCE_URL).
      async defaultResource(ctx, client, oneOf) {
        return oneOf || undefined;
      },
      async getResourceServerInfo(ctx, resourceIndicator, client) {
        if (resourceIndicator !== RESOURCE) {
          throw new errors.InvalidTarget(`unknown resource ${resourceIndicator}`);
        }
        return {
          scope: 'tools',
          audience: RESOURCE,
          accessTokenFormat: 'opaque',
          accessTokenTTL: 300,
        };
      },
      // A code/refresh token granted for exactly one resource may be exchanged without `resource`.
      async useGrantedResource(ctx, model) {
        return true;
      },
    },
  },
};

let provider;
try {
  provider = new Provider(ISSUER, configuration);
} catch (err) {
  console.error(`provider.mjs: bad configuration: ${err.stack || err}`);
  process.exit(1);
}

for (const event of ['server_error', 'authorization.error', 'grant.error', 'registration_create.error',
  'introspection.error', 'revocation.error', 'end_session.error']) {
  provider.on(event, (ctx, err) => console.error(`provider.mjs: ${event}: ${err.name}: ${err.message}${err.error_description ? ` (${err.error_description})` : ''}${err.error_detail ? ` [${err.error_detail}]` : ''}`));
}
provider.on('grant.success', (ctx) => console.error(`provider.mjs: token issued to ${ctx.oidc.client?.clientId} (${ctx.oidc.params?.grant_type})`));

server.on('request', provider.callback());
process.stdout.write(`READY ${ISSUER}\n`);

function stop() {
  server.close(() => process.exit(0));
  server.closeAllConnections?.();
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
