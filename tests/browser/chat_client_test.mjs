// ChatClient, the page's chat state, fed server events directly (no socket, no browser): a
// `joined` the server sends without a request replaces what the page held for that room.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { ChatClient } from '../../server/web/js/chat_client.js';

const msg = (seq, text) => ({ type: 'message', room: 'lobby', from: 'bob', text, seq, ts: 1000 + seq });

function clientInLobby() {
  const changes = [];
  const client = new ChatClient({ wsUrl: 'ws://unused/ws', onChange: (what, detail) => changes.push({ what, detail }) });
  clearInterval(client.directoryInterval);  // no timers left behind in a test
  client.onEvent({ type: 'joined', room: 'lobby', epoch: 1, members: [], history: [] });  // not joined yet: ignored
  assert.equal(client.rooms.size, 0);
  return { client, changes };
}

test('a joined without a request starts a joined room over in its new epoch', async () => {
  const { client, changes } = clientInLobby();
  // As catchUp leaves a room after a join: epoch 1, three messages.
  const { RoomLog } = await import('../../server/web/js/parley.js');
  const room = { name: 'lobby', log: new RoomLog(), members: new Set(['bob']), typing: new Map(), outbox: [] };
  room.log.reset(1);
  room.log.add([msg(1, 'a'), msg(2, 'b'), msg(3, 'c')]);
  client.rooms.set('lobby', room);

  // The node lost the cluster: its own numbering, in epoch 2, from seq 4 on.
  client.onEvent({ type: 'joined', room: 'lobby', epoch: 2, members: ['alice', 'bob'], recovered: false,
                   history: [msg(1, 'a'), msg(2, 'b'), msg(3, 'c')] });
  assert.equal(room.log.epoch, 2);
  assert.deepEqual([...room.members].sort(), ['alice', 'bob']);
  assert.deepEqual(room.log.messages.map((m) => m.text), ['a', 'b', 'c']);
  client.onEvent(msg(4, 'alone'));

  // The cluster is back: its history, in which the message said meanwhile has seq 5 (another
  // node's message took 4). The page holds the cluster's version, each message once.
  client.onEvent({ type: 'joined', room: 'lobby', epoch: 1, members: ['alice', 'bob'], recovered: false,
                   history: [msg(1, 'a'), msg(2, 'b'), msg(3, 'c'), msg(4, 'elsewhere'), msg(5, 'alone')] });
  assert.equal(room.log.epoch, 1);
  assert.deepEqual(room.log.messages.map((m) => m.text), ['a', 'b', 'c', 'elsewhere', 'alone']);
  assert.deepEqual(room.log.messages.map((m) => m.seq), [1, 2, 3, 4, 5]);
  assert.equal(changes.filter((c) => c.what === 'reset').length, 2);
  assert.ok(changes.some((c) => c.what === 'joined' && c.detail.room === 'lobby' && !c.detail.firstJoin));
});

test('a joined in the same epoch adds what is new and keeps the rest', async () => {
  const { client } = clientInLobby();
  const { RoomLog } = await import('../../server/web/js/parley.js');
  const room = { name: 'lobby', log: new RoomLog(), members: new Set(), typing: new Map(), outbox: [] };
  room.log.reset(9);
  room.log.add([msg(1, 'a')]);
  client.rooms.set('lobby', room);
  client.onEvent({ type: 'joined', room: 'lobby', epoch: 9, members: ['x'], history: [msg(1, 'a'), msg(2, 'b')] });
  assert.deepEqual(room.log.messages.map((m) => m.seq), [1, 2]);
});

test('a say or a page refused as unavailable can be tried again', async () => {
  const { client } = clientInLobby();
  const { RoomLog } = await import('../../server/web/js/parley.js');
  const { ServerError } = await import('../../server/web/js/parley.js');
  const room = { name: 'lobby', log: new RoomLog(), members: new Set(), typing: new Map(), outbox: [] };
  room.log.reset(1);
  room.log.add([msg(40, 'a')]);
  room.log.olderAvailable = true;
  client.rooms.set('lobby', room);
  const unavailable = new ServerError({ type: 'error', code: 'unavailable', message: 'try again shortly' });
  client.connection = { online: true, state: { name: 'online' }, request: () => Promise.reject(unavailable) };

  client.say('lobby', 'hello');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(room.outbox.length, 1);
  assert.equal(room.outbox[0].state, 'failed');
  assert.match(room.outbox[0].error, /try again/);

  await assert.rejects(client.loadOlder('lobby'), (e) => e.code === 'unavailable');
  assert.equal(room.log.olderAvailable, true, 'the next scroll must ask again');
  assert.equal(room.loadingOlder, false);
});
