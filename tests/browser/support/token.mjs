// Login tokens for a daemon with auth.mode = "token": HS256 JWTs, as the web application in
// front of parley would mint them (docs/security.md).

import { createHmac } from 'node:crypto';

export const testSecret = 'browser-test-secret-0123456789-abcdefghij';

// The [auth] section of a daemon config that wants tokens signed with testSecret.
export const tokenAuthConfig = `[auth]\nmode = "token"\ntoken_secret = "${testSecret}"\n`;

export function token(claims, key = testSecret) {
  const part = (object) => Buffer.from(JSON.stringify(object)).toString('base64url');
  const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
}

export const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

// A token for `user`, valid for an hour.
export const tokenFor = (user) => token({ sub: user, exp: inAnHour() });
