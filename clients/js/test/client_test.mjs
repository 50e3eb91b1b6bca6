// The client library under Node.js against the real parleyd: log in, rooms, says acked as
// promises, direct messages, typing, history paged back, refusals, and a restart of the daemon
// in the middle of a conversation, after which every client holds every message once and in
// order (caught up by seq, the gap beyond the daemon's memory paged in, a new epoch replacing
// what was held). PARLEYD names the daemon. The WebSocket is Node.js's own where it has one
// (22, or 20 with --experimental-websocket, which ctest passes where it exists), else the `ws`
// package of tests/browser (Node.js 18, Debian 12's): the WebSocket option at work.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

import { Backoff, Disconnected, ParleyClient, ServerError } from '../parley.js';
import { Daemon } from '../../../tests/browser/support/daemon.mjs';

const WebSocketClass = globalThis.WebSocket ??
  createRequire(new URL('../../../tests/browser/package.json', import.meta.url))('ws').WebSocket;

const daemons = [];
after(async () => { for (const d of daemons) await d.dispose(); });

async function startDaemon(config) {
  const daemon = new Daemon({ config });
  daemons.push(daemon);
  await daemon.start();
  return daemon;
}

const wsUrl = (daemon) => `ws://127.0.0.1:${daemon.port}/ws`;

// A client that records what it hears. Reconnects fast unless `backoff` says otherwise.
function client(daemon, user, options = {}) {
  const c = new ParleyClient(wsUrl(daemon), { user, WebSocket: WebSocketClass, backoff: { base: 100, cap: 400 }, ...options });
  c.heard = { messages: [], dm: [], typing: [], states: [], resets: [], removed: [] };
  c.on('messages', ({ added }) => c.heard.messages.push(...added));
  c.on('dm', (m) => c.heard.dm.push(m));
  c.on('typing', (m) => c.heard.typing.push(m));
  c.on('state', (s) => c.heard.states.push(s.name));
  c.on('reset', (room) => c.heard.resets.push(room));
  c.on('removed', (r) => c.heard.removed.push(r));
  return c;
}

async function until(what, predicate, timeoutMs = 10000) {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const texts = (c, room) => c.rooms.get(room).log.messages.filter((m) => m.type === 'message').map((m) => m.text);
const seqs = (c, room) => c.rooms.get(room).log.messages.map((m) => m.seq);
const consecutive = (list) => list.every((s, i) => i === 0 || s === list[i - 1] + 1);

test('log in, join, say with an ack, hear others, leave', async () => {
  const daemon = await startDaemon('');
  const alice = client(daemon, 'alice');
  const bob = client(daemon, 'bob');
  const welcome = await alice.connect();
  assert.equal(welcome.type, 'welcome');
  assert.equal(welcome.user, 'alice');
  await bob.connect();
  const room = await alice.join('lobby');
  assert.equal(room.name, 'lobby');
  await bob.join('lobby');
  await until('bob in the member list', () => alice.rooms.get('lobby').members.has('bob'));

  const ack = await alice.say('lobby', 'hello bob');
  assert.equal(typeof ack.seq, 'number');
  await until('bob hears alice', () => bob.heard.messages.some((m) => m.text === 'hello bob'));
  const heard = bob.heard.messages.find((m) => m.text === 'hello bob');
  assert.equal(heard.seq, ack.seq);
  assert.equal(heard.from, 'alice');
  // Her own say comes back to her as a message too, held once.
  await until('alice holds her own', () => texts(alice, 'lobby').includes('hello bob'));

  await assert.rejects(alice.say('nowhere', 'x'), (e) => e instanceof ServerError && e.code === 'not_in_room');

  await bob.leave('lobby');
  assert.equal(bob.rooms.has('lobby'), false);
  await until('bob gone from the member list', () => !alice.rooms.get('lobby').members.has('bob'));
  alice.close();
  bob.close();
  assert.equal(alice.state.name, 'stopped');
});

test('direct messages and typing notices', async () => {
  const daemon = await startDaemon('');
  const alice = client(daemon, 'alice');
  const bob = client(daemon, 'bob');
  await alice.connect();
  await bob.connect();
  await alice.join('den');
  await bob.join('den');

  await alice.dm('bob', 'psst');
  await until('bob gets the dm', () => bob.heard.dm.some((m) => m.text === 'psst' && m.from === 'alice'));
  await assert.rejects(alice.dm('nobody-here', 'x'), (e) => e instanceof ServerError);

  alice.typing('den');
  alice.typing('den');   // within the 2.5 s: not sent again
  await until('bob sees alice typing', () => bob.heard.typing.length === 1);
  assert.equal(bob.heard.typing[0].user, 'alice');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(bob.heard.typing.length, 1);
  alice.close();
  bob.close();
});

test('history pages back to the start of the room, each message once', async () => {
  const daemon = await startDaemon('[rooms]\njoined_history = 10\n');
  const writer = client(daemon, 'writer');
  await writer.connect();
  await writer.join('archive');
  for (let i = 1; i <= 120; i += 1) await writer.say('archive', `m${i}`);

  const reader = client(daemon, 'reader');
  await reader.connect();
  await reader.join('archive');
  assert.equal(seqs(reader, 'archive').length, 10, 'the join brings joined_history messages');
  let pages = 0;
  while ((await reader.loadOlder('archive', 50)).length) pages += 1;
  assert.equal(pages, 3);
  assert.equal(reader.rooms.get('archive').log.olderAvailable, false);
  assert.deepEqual(texts(reader, 'archive'), Array.from({ length: 120 }, (_, i) => `m${i + 1}`));
  assert.ok(consecutive(seqs(reader, 'archive')));
  // A raw page after a seq, without touching what is held.
  const page = await reader.history('archive', { after: 100, limit: 5 });
  assert.deepEqual(page.map((m) => m.text), ['m101', 'm102', 'm103', 'm104', 'm105']);
  writer.close();
  reader.close();
});

test('a refused first login rejects with the server error and does not retry', async () => {
  const daemon = await startDaemon('');
  const first = client(daemon, 'carol');
  await first.connect();
  const second = client(daemon, 'carol');
  await assert.rejects(second.connect(), (e) => e instanceof ServerError && e.code === 'username_taken');
  assert.equal(second.state.name, 'stopped');
  const bad = client(daemon, 'not a name!');
  await assert.rejects(bad.connect(), (e) => e instanceof ServerError);
  first.close();
});

test('a daemon restart mid-conversation: every message held once, in order, the gap paged in', async () => {
  // 20 messages per room in memory: a client away for 30 gets the newest 20 with its rejoin
  // (recovered: false) and pages in the rest from the history file.
  const daemon = await startDaemon('[rooms]\nhistory_per_room = 20\njoined_history = 20\n');
  const alice = client(daemon, 'alice');
  // Bob waits for a retry until told (retryNow), so what is said while he is away is known.
  const bob = client(daemon, 'bob', { backoff: new Backoff({ base: 600000, cap: 600000 }) });
  await alice.connect();
  await bob.connect();
  await alice.join('talk');
  await bob.join('talk');
  for (let i = 1; i <= 5; i += 1) await alice.say('talk', `before ${i}`);
  await until('bob has the first five', () => texts(bob, 'talk').length === 5);

  await daemon.restart();
  await until('bob waits to reconnect', () => bob.state.name === 'waiting');
  await assert.rejects(bob.say('talk', 'into the void'), (e) => e instanceof Disconnected);
  await until('alice is back', () => alice.state.name === 'online', 15000);
  assert.ok(alice.heard.states.includes('waiting'));
  for (let i = 1; i <= 30; i += 1) await alice.say('talk', `while away ${i}`);

  let rejoined = null;
  bob.on('joined', (j) => { rejoined = j; });
  bob.retryNow();
  await until('bob is back', () => bob.state.name === 'online', 15000);
  assert.equal(rejoined.firstJoin, false);
  assert.equal(rejoined.reply.recovered, false, 'more was missed than the daemon keeps in memory');
  assert.equal(rejoined.added.length, 30);
  const expected = [...Array.from({ length: 5 }, (_, i) => `before ${i + 1}`),
                    ...Array.from({ length: 30 }, (_, i) => `while away ${i + 1}`)];
  assert.deepEqual(texts(bob, 'talk'), expected);
  assert.ok(consecutive(seqs(bob, 'talk')));
  assert.deepEqual(bob.heard.resets, [], 'the history file kept the epoch');

  // The conversation goes on live.
  await bob.say('talk', 'back');
  await until('alice hears bob', () => texts(alice, 'talk').at(-1) === 'back');
  assert.deepEqual(texts(alice, 'talk'), [...expected, 'back']);
  alice.close();
  bob.close();
});

test('a restart that loses the history starts the room over in a new epoch', async () => {
  const daemon = await startDaemon('[history]\nstore = "memory"\n');
  const dana = client(daemon, 'dana');
  await dana.connect();
  await dana.join('fleeting');
  await dana.say('fleeting', 'old 1');
  await dana.say('fleeting', 'old 2');
  await until('dana holds both', () => texts(dana, 'fleeting').length === 2);
  const epoch = dana.rooms.get('fleeting').log.epoch;

  await daemon.restart();
  await until('dana is back', () => dana.heard.states.includes('waiting') && dana.state.name === 'online', 15000);
  assert.deepEqual(dana.heard.resets, ['fleeting']);
  assert.notEqual(dana.rooms.get('fleeting').log.epoch, epoch);
  assert.deepEqual(texts(dana, 'fleeting'), []);
  await dana.say('fleeting', 'new 1');
  await until('the new life', () => texts(dana, 'fleeting').length === 1);
  assert.equal(seqs(dana, 'fleeting')[0], 1);
  dana.close();
});

test('a big room: the count, the first names, the rest paged in, presence_count', async () => {
  const daemon = await startDaemon('[rooms]\njoined_members_max = 5\npresence_max_members = 8\n' +
                                   'presence_count_interval_ms = 1000\n');
  const crowd = [];
  for (let i = 0; i < 12; i += 1) {
    const c = client(daemon, `p${String(i).padStart(2, '0')}`);
    await c.connect();
    await c.join('stadium');
    crowd.push(c);
  }
  const watcher = client(daemon, 'watcher');
  await watcher.connect();
  const room = await watcher.join('stadium');
  assert.equal(room.memberCount, 13);
  assert.equal(room.membersComplete, false);
  assert.deepEqual([...room.members], ['p00', 'p01', 'p02', 'p03', 'p04']);
  while (!room.membersComplete) await watcher.loadMoreMembers('stadium', 3);
  assert.equal(room.members.size, 13);
  assert.deepEqual([...room.members].sort().slice(-2), ['p11', 'watcher']);

  const counts = [];
  watcher.on('presence_count', (m) => counts.push(m.count));
  const late = client(daemon, 'late');
  await late.connect();
  await late.join('stadium');
  await until('the watcher hears the count', () => counts.includes(14));
  assert.equal(room.memberCount, 14);
  for (const c of [...crowd, watcher, late]) c.close();
});
