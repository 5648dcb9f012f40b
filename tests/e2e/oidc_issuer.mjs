// A real OpenID provider for the end-to-end tests: npm `oidc-provider` (a
// certified implementation) on a loopback port, issuing JWT access tokens
// (RS256, typ at+jwt) for one resource (RFC 8707), by client credentials and
// by authorization code with PKCE. Its interaction pages are replaced by one
// that logs in whoever `login` names and grants what was asked, so that a
// test can follow the browser's redirects with fetch.

import http from 'node:http';
import net from 'node:net';

import Provider from 'oidc-provider';

/** A free TCP port on 127.0.0.1 (closed again: the caller binds it). */
export async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts the provider for `resource`, knowing `scopes`; `t` stops it after
 * the test. Clients: "machine" (client_credentials, secret "machine-secret",
 * or any client_id of `machines`), "desktop" (public, authorization code +
 * PKCE, redirect to `redirectUri`), and whatever registers dynamically.
 * Returns { issuer, token(clientId, scope), login: {as}, keyFetches(), close }.
 */
export async function startIssuer(t, { resource, scopes, redirectUri = 'http://127.0.0.1/callback', machines = ['machine'] }) {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const resourceInfo = (scope) => ({
    scope: scope ?? scopes.join(' '),
    audience: resource,
    accessTokenTTL: 600,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: 'RS256' } },
  });
  const login = { as: 'alice' };
  const provider = new Provider(issuer, {
    clients: [
      ...machines.map((id) => ({
        client_id: id,
        client_secret: `${id}-secret`,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      })),
      {
        client_id: 'desktop',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        redirect_uris: [redirectUri],
        response_types: ['code'],
      },
    ],
    scopes: ['openid', 'offline_access', ...scopes],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => {
          if (indicator !== resource) throw new Error(`unknown resource ${indicator}`);
          return resourceInfo();
        },
      },
    },
    pkce: { required: () => true },
    findAccount: (ctx, accountId) => ({ accountId, claims: () => ({ sub: accountId }) }),
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['toolmux-e2e-cookie-key'] },
    // Quiet: the provider's own warnings about development settings.
    renderError: (ctx, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  });
  const callback = provider.callback();
  let keyFetches = 0;
  const server = http.createServer(async (req, res) => {
    if (req.url.startsWith('/jwks')) keyFetches += 1;
    if (req.url.startsWith('/interaction/')) {
      // Logs in `login.as` and grants everything asked for.
      try {
        const details = await provider.interactionDetails(req, res);
        const accountId = login.as;
        const grant = details.grantId
          ? await provider.Grant.find(details.grantId)
          : new provider.Grant({ accountId, clientId: details.params.client_id });
        const asked = details.prompt.details;
        if (asked.missingOIDCScope) grant.addOIDCScope(asked.missingOIDCScope.join(' '));
        if (asked.missingResourceScopes) {
          for (const [indicator, list] of Object.entries(asked.missingResourceScopes)) {
            grant.addResourceScope(indicator, list.join(' '));
          }
        }
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: true });
      } catch (error) {
        res.statusCode = 500;
        res.end(String(error));
      }
      return;
    }
    callback(req, res);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const close = () => new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });
  if (t) t.after(close);

  /** An access token for `clientId` by client credentials, with `scope`. */
  async function token(clientId = 'machine', scope = scopes.join(' ')) {
    const response = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:${clientId}-secret`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }).toString(),
    });
    const body = await response.json();
    if (!response.ok) throw new Error(`token: ${response.status} ${JSON.stringify(body)}`);
    return body.access_token;
  }

  return { issuer, provider, token, login, close, keyFetches: () => keyFetches };
}

/**
 * Plays the browser: follows `authorizationUrl` through the provider's
 * redirects (cookies kept) until it redirects to `redirectUri`; returns that
 * URL's search params (code, state, iss).
 */
export async function followAuthorization(authorizationUrl, redirectUri) {
  const cookies = new Map();
  let url = String(authorizationUrl);
  for (let hops = 0; hops < 10; hops++) {
    if (url.startsWith(redirectUri)) return new URL(url).searchParams;
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = response.headers.get('location');
    await response.text();
    if (!location) throw new Error(`the authorization stopped at ${url} with ${response.status}`);
    url = new URL(location, url).toString();
  }
  throw new Error('the authorization took more than 10 redirects');
}
