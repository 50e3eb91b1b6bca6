// The admin API (docs/operations.md, "Admin API") as the page calls it: every request carries
// the bearer token; the answer is { ok, status, body } with the server's own error text, and a
// daemon that cannot be reached throws DaemonAway.

export class DaemonAway extends Error {}

export class AdminApi {
  constructor(token) { this.token = token; }

  async request(method, path, body) {
    const headers = { Authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response;
    try {
      response = await fetch(path, {
        method, headers, cache: 'no-store', body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new DaemonAway(e.message);
    }
    let parsed = null;
    try { parsed = await response.json(); } catch { /* not JSON: a proxy's page, say */ }
    return { ok: response.ok, status: response.status, body: parsed };
  }

  users() { return this.request('GET', '/admin/users'); }
  rooms() { return this.request('GET', '/admin/rooms'); }
  kick(user, reason) { return this.request('POST', '/admin/kick', { user, reason }); }
  announce(text, room) { return this.request('POST', '/admin/announce', room ? { text, room } : { text }); }
  closeRoom(room, reason) { return this.request('POST', '/admin/close_room', { room, reason }); }
  moderate(body) { return this.request('POST', '/admin/moderate', body); }
}

// What a refusal says, for the page: the server's own error, else its status.
export function refusalText(reply) {
  const said = reply.body && typeof reply.body.error === 'string' ? reply.body.error : '';
  const what = reply.status === 401 ? 'the token was refused' : `HTTP ${reply.status}`;
  return said ? `${said} (${what})` : what;
}

// Scrapes /metrics: its text, or null when the daemon serves none (metrics.enabled = false).
// It needs no token (metrics.cpp: the same port, no auth), so none is sent.
export async function scrapeMetrics() {
  let response;
  try {
    response = await fetch('/metrics', { cache: 'no-store' });
  } catch (e) {
    throw new DaemonAway(e.message);
  }
  if (response.status === 404) return null;
  if (!response.ok) throw new DaemonAway(`/metrics answered ${response.status}`);
  return response.text();
}
