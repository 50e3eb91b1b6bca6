// ConversationSync through ChatClient, fed server messages directly (a fake connection that
// records requests, no socket, no browser): what the welcome lists, history fetched on
// opening, live dms and another tab's `read` moving the counts, and the markers it sends.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { ChatClient } from '../../server/web/js/chat_client.js';
import { Throttle } from '../../server/web/js/conversations.js';

const dm = (seq, from = 'bob', to = 'alice') => ({ type: 'dm', from, to, text: `d${seq}`, seq, ts: 1000 + seq });

// A client logged in as alice over a connection that answers with `answer(request)`.
function aliceWith(answer) {
  const changes = [];
  const client = new ChatClient({ wsUrl: 'ws://unused/ws', onChange: (what, detail) => changes.push({ what, detail }) });
  clearInterval(client.directoryInterval);  // no timers left behind in a test
  client.user = 'alice';
  const sent = [];
  client.connection = {
    online: true,
    state: { name: 'online' },
    request: (m) => { sent.push(m); return Promise.resolve(answer(m)); },
  };
  return { client, sync: client.sync, sent, changes };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('the welcome lists conversations in the server order with their unread counts', () => {
  const { client, sync } = aliceWith(() => ({}));
  sync.takeWelcome({ type: 'welcome', user: 'alice', conversations: [
    { with: 'bob', seq: 12, read: 9, unread: 3 },
    { room: 'lobby', seq: 340, read: 338, unread: 2 },
    { with: 'carol', seq: 4, read: 4, unread: 0 },
  ] });
  assert.equal(sync.keepsHistory, true);
  assert.deepEqual([...client.conversations.keys()], ['bob', 'carol']);
  assert.equal(sync.unreadOf('dm', 'bob'), 3);
  assert.equal(sync.unreadOf('dm', 'carol'), 0);
  assert.equal(sync.unreadOf('room', 'lobby'), 2);
  assert.deepEqual(sync.roomsWithUnread(), ['lobby']);
});

test('without tokens there are no stored conversations: live dms are counted here and nothing is sent', async () => {
  const { client, sync, sent } = aliceWith(() => { throw new Error('nothing should be asked'); });
  sync.takeWelcome({ type: 'welcome', user: 'alice' });
  assert.equal(sync.keepsHistory, false);
  client.onEvent({ type: 'dm', from: 'bob', to: 'alice', text: 'hi', ts: 1 });
  client.onEvent({ type: 'dm', from: 'alice', to: 'bob', text: 'hello', ts: 2 });  // ours, from another tab
  client.onEvent({ type: 'dm', from: 'bob', to: 'alice', text: 'there?', ts: 3 });
  assert.deepEqual(client.conversations.get('bob').messages.map((m) => m.text), ['hi', 'hello', 'there?']);
  assert.equal(sync.unreadOf('dm', 'bob'), 2);
  await sync.load('bob');
  sync.viewed('dm', 'bob');
  sync.readThrottle.cancel();
  await settle();
  assert.equal(sync.unreadOf('dm', 'bob'), 0);
  assert.deepEqual(sent, []);
});

test('opening a conversation fetches its newest page once; scrolling up pages back to its start', async () => {
  const all = Array.from({ length: 70 }, (_, i) => dm(i + 1));
  const { client, sync, sent } = aliceWith((m) => {
    assert.equal(m.type, 'dm_history');
    const older = m.before === undefined ? all : all.filter((d) => d.seq < m.before);
    return { type: 'dm_history', with: m.with, messages: older.slice(-m.limit) };
  });
  sync.takeWelcome({ type: 'welcome', user: 'alice', conversations: [{ with: 'bob', seq: 70, read: 0, unread: 70 }] });
  await Promise.all([sync.load('bob'), sync.load('bob')]);
  assert.equal(sent.length, 1, 'one request however often it is opened');
  assert.deepEqual(sent[0], { type: 'dm_history', with: 'bob', limit: 50 });
  const conversation = client.conversations.get('bob');
  assert.deepEqual(conversation.messages.map((m) => m.seq), all.slice(20).map((m) => m.seq));
  assert.equal(conversation.log.olderAvailable, true);
  await sync.loadOlder('bob');
  assert.deepEqual(sent[1], { type: 'dm_history', with: 'bob', before: 21, limit: 50 });
  assert.deepEqual(conversation.messages.map((m) => m.seq), all.map((m) => m.seq));
  assert.equal(conversation.log.olderAvailable, false);
  assert.deepEqual(await sync.loadOlder('bob'), [], 'nothing more is asked at the start');
  assert.equal(sent.length, 2);
  assert.equal(sync.unreadOf('dm', 'bob'), 70, 'fetched is not read');
});

test('live dms count as unread and bring their conversation to the top; ours do not count', () => {
  const { client, sync } = aliceWith(() => ({}));
  sync.takeWelcome({ type: 'welcome', user: 'alice', conversations: [
    { with: 'carol', seq: 3, read: 3, unread: 0 }, { with: 'bob', seq: 2, read: 2, unread: 0 }] });
  client.onEvent(dm(3));
  client.onEvent(dm(3));            // the same dm twice (a catch-up overlapping): counted once
  client.onEvent(dm(4));
  assert.deepEqual([...client.conversations.keys()], ['bob', 'carol']);
  assert.equal(sync.unreadOf('dm', 'bob'), 2);
  client.onEvent(dm(5, 'alice', 'bob'));  // sent from another tab: all before it is read
  assert.equal(sync.unreadOf('dm', 'bob'), 0);
  client.onEvent(dm(1, 'dave'));           // someone new
  assert.deepEqual([...client.conversations.keys()], ['dave', 'bob', 'carol']);
  assert.equal(sync.unreadOf('dm', 'dave'), 1);
});

test('another tab reading clears the count; a read here is sent once per burst with the newest seq', async () => {
  const { client, sync, sent } = aliceWith((m) => ({ type: 'read', with: m.with, seq: m.seq, re: 1 }));
  // The throttle's interval ends when the test says so.
  let pending = null;
  sync.readThrottle = new Throttle(1000, () => sync.sendReads(), {
    now: () => 0, setTimer: (fn) => { pending = fn; return 1; }, clearTimer: () => { pending = null; },
  });
  sync.takeWelcome({ type: 'welcome', user: 'alice', conversations: [{ with: 'bob', seq: 6, read: 1, unread: 5 }] });
  client.onEvent({ type: 'read', with: 'bob', seq: 4 });
  assert.equal(sync.unreadOf('dm', 'bob'), 2);
  client.onEvent({ type: 'read', with: 'bob', seq: 2 });  // older news: no step back
  assert.equal(sync.unreadOf('dm', 'bob'), 2);

  // Shown here: the badge clears at once and the marker goes out.
  client.conversations.get('bob').add([dm(5), dm(6)]);
  sync.viewed('dm', 'bob');
  assert.equal(sync.unreadOf('dm', 'bob'), 0);
  await settle();
  assert.deepEqual(sent, [{ type: 'read', with: 'bob', seq: 6 }]);

  // A burst right after: the throttle holds it, and one request carries the newest seq.
  for (let seq = 7; seq <= 30; seq += 1) {
    client.onEvent(dm(seq));
    sync.viewed('dm', 'bob');
  }
  await settle();
  assert.equal(sent.length, 1, 'held until the interval ends');
  pending();
  await settle();
  assert.deepEqual(sent.slice(1), [{ type: 'read', with: 'bob', seq: 30 }]);
  assert.deepEqual(sync.marks.due(), []);
});

test('after a reconnect a fetched conversation is paged forward from its newest dm', async () => {
  const all = Array.from({ length: 8 }, (_, i) => dm(i + 1));
  const { client, sync, sent } = aliceWith((m) => ({
    type: 'dm_history', with: m.with,
    messages: (m.after === undefined ? all.slice(0, 5) : all.filter((d) => d.seq > m.after)).slice(0, m.limit),
  }));
  sync.takeWelcome({ type: 'welcome', user: 'alice', conversations: [{ with: 'bob', seq: 5, read: 5, unread: 0 }] });
  await sync.load('bob');
  // Dropped, dms 6-8 sent meanwhile; the next welcome says so.
  sync.takeWelcome({ type: 'welcome', user: 'alice', conversations: [{ with: 'bob', seq: 8, read: 5, unread: 3 }] });
  await sync.catchUp(client.connection);
  assert.deepEqual(sent.at(-1), { type: 'dm_history', with: 'bob', after: 5, limit: 500 });
  assert.deepEqual(client.conversations.get('bob').messages.map((m) => m.seq), [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal(sync.unreadOf('dm', 'bob'), 3);
  const asked = sent.length;
  await sync.catchUp(client.connection);
  assert.equal(sent.length, asked, 'nothing newer: nothing asked');
});

test('a welcome numbering a conversation below what is held starts it over from the server', async () => {
  let server = Array.from({ length: 40 }, (_, i) => dm(i + 1));
  const { client, sync, sent, changes } = aliceWith((m) => ({
    type: 'dm_history', with: m.with,
    messages: (m.after === undefined ? server : server.filter((d) => d.seq > m.after)).slice(-m.limit),
  }));
  sync.takeWelcome({ type: 'welcome', user: 'alice', conversations: [{ with: 'bob', seq: 40, read: 40, unread: 0 }] });
  await sync.load('bob');
  // The daemon came back with an empty memory store; two new dms are numbered 1 and 2.
  server = [dm(1), dm(2)].map((d) => ({ ...d, text: `new ${d.seq}` }));
  sync.takeWelcome({ type: 'welcome', user: 'alice', conversations: [{ with: 'bob', seq: 2, read: 0, unread: 2 }] });
  assert.deepEqual(client.conversations.get('bob').messages, []);
  assert.equal(sync.unreadOf('dm', 'bob'), 2);
  assert.ok(changes.some((c) => c.what === 'dm-reset' && c.detail === 'bob'));
  await sync.catchUp(client.connection);
  assert.deepEqual(sent.at(-1), { type: 'dm_history', with: 'bob', after: 0, limit: 500 });
  assert.deepEqual(client.conversations.get('bob').messages.map((m) => m.text), ['new 1', 'new 2']);
});

test('live dms held before the conversation is opened leave no hole when its newest page is fetched', async () => {
  const server = Array.from({ length: 120 }, (_, i) => dm(i + 1));
  const { client, sync } = aliceWith((m) => ({
    type: 'dm_history', with: m.with,
    messages: (m.before === undefined ? server : server.filter((d) => d.seq < m.before)).slice(-m.limit),
  }));
  sync.takeWelcome({ type: 'welcome', user: 'alice', conversations: [] });
  client.onEvent(dm(3));            // seen live, then the page was away while 4-120 were sent
  await sync.load('bob');
  assert.deepEqual(client.conversations.get('bob').messages.map((m) => m.seq), server.slice(70).map((m) => m.seq));
  await sync.loadOlder('bob');
  await sync.loadOlder('bob');
  assert.deepEqual(client.conversations.get('bob').messages.map((m) => m.seq), server.map((m) => m.seq));
});
