// The admin page's logic without a browser: reading /metrics, rates from counters across
// scrapes (and across a restart), the list filter, and the moderation request bodies.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FigureTracker, formatFigure, parseMetrics } from '../../server/web/admin/figures.js';
import { matching } from '../../server/web/admin/lists.js';
import { confirmationOf, moderationBody } from '../../server/web/admin/moderation.js';

const scrape = (messages, errorsA, errorsB, connections = 3) => `# HELP parley_connections Open WebSocket connections.
# TYPE parley_connections gauge
parley_connections ${connections}
parley_users 2
parley_rooms 1
parley_messages_received_total ${messages}
parley_fanout_deliveries_total ${messages * 2}
parley_errors_total{code="bad_request"} ${errorsA}
parley_errors_total{code="rate_limited"} ${errorsB}
parley_broadcast_fanout_seconds_bucket{le="+Inf"} 7
process_resident_memory_bytes 1.2e+07
`;

test('metrics are summed over their labels', () => {
  const sums = parseMetrics(scrape(10, 1, 2));
  assert.equal(sums.get('parley_connections'), 3);
  assert.equal(sums.get('parley_errors_total'), 3);
  assert.equal(sums.get('process_resident_memory_bytes'), 12000000);
  assert.equal(sums.has('# HELP'), false);
});

test('rates come from the difference of two scrapes; a restart gives no rate for its step', () => {
  const tracker = new FigureTracker();
  const first = tracker.add(parseMetrics(scrape(10, 0, 0)), 0);
  assert.equal(first.connections, 3);
  assert.equal(first.messages, null, 'a rate needs two scrapes');
  const second = tracker.add(parseMetrics(scrape(30, 1, 3)), 2000);
  assert.equal(second.messages, 10);
  assert.equal(second.deliveries, 20);
  assert.equal(second.errors, 2);
  assert.equal(second.memory, 12000000);
  const restarted = tracker.add(parseMetrics(scrape(2, 0, 0, 0)), 4000);
  assert.equal(restarted.messages, null);
  assert.equal(restarted.connections, 0);
  assert.equal(tracker.add(parseMetrics(scrape(7, 0, 0)), 5000).messages, 5);
  tracker.reset();
  assert.equal(tracker.add(parseMetrics(scrape(9, 0, 0)), 6000).messages, null);
});

test('figures read as people read them', () => {
  assert.equal(formatFigure(12000000, 'bytes'), '11.4 MiB');
  assert.equal(formatFigure(512, 'bytes'), '512 B');
  assert.equal(formatFigure(3), '3');
  assert.equal(formatFigure(2.345), '2.3');
  assert.equal(formatFigure(null), '–');
});

test('the filter keeps names containing the text, in any case', () => {
  const rooms = [{ name: 'lobby' }, { name: 'Garden' }, { name: 'dev-ops' }];
  assert.deepEqual(matching(rooms, 'gar').map((r) => r.name), ['Garden']);
  assert.deepEqual(matching(rooms, ' O ').map((r) => r.name), ['lobby', 'dev-ops']);
  assert.equal(matching(rooms, '').length, 3);
});

test('a moderation body has only its action\'s fields, numbers as numbers', () => {
  const typed = { user: ' mallory ', reason: 'spam', duration_s: '3600', text: 'ignored', role: 'owner', seq: '' };
  assert.deepEqual(moderationBody(' lobby ', 'ban', typed),
    { room: 'lobby', action: 'ban', user: 'mallory', reason: 'spam', duration_s: 3600 });
  assert.deepEqual(moderationBody('lobby', 'set_topic', { text: 'Be kind' }), { room: 'lobby', action: 'set_topic', text: 'Be kind' });
  assert.deepEqual(moderationBody('lobby', 'set_slow_mode', { interval_s: '0' }), { room: 'lobby', action: 'set_slow_mode', interval_s: 0 });
  assert.deepEqual(moderationBody('lobby', 'unban', { user: 'm', duration_s: '60' }), { room: 'lobby', action: 'unban', user: 'm' });
  assert.throws(() => moderationBody('lobby', 'delete', { seq: '1.5' }), /seq must be a whole number/);
  assert.throws(() => moderationBody('lobby', 'explode', {}), /unknown action/);
  assert.match(confirmationOf({ room: 'lobby', action: 'delete', seq: 4 }), /Delete message 4 of #lobby/);
});
