// The page's store of direct conversations and read markers (conversations.js), and the
// throttle that spaces its `read` requests, under Node.js: no socket, no browser, no clock.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { DirectConversation, ReadMarks, Throttle, keyOf, parseKey } from '../../server/web/js/conversations.js';

const dm = (seq, from = 'bob', to = 'alice') => ({ type: 'dm', from, to, text: `d${seq}`, seq, ts: 1000 + seq });

test('keys name rooms and conversations apart and come back whole', () => {
  assert.notEqual(keyOf('room', 'bob'), keyOf('dm', 'bob'));
  assert.deepEqual(parseKey(keyOf('dm', 'a.b-c_d')), { kind: 'dm', name: 'a.b-c_d' });
  assert.deepEqual(parseKey(keyOf('room', 'lobby')), { kind: 'room', name: 'lobby' });
});

test('a conversation holds each numbered dm once, in seq order, whatever order pages come in', () => {
  const c = new DirectConversation('bob');
  assert.deepEqual(c.add([dm(51)]).map((m) => m.seq), [51]);          // live, before the history
  assert.deepEqual(c.add([dm(2), dm(50), dm(51)]).map((m) => m.seq), [2, 50]);  // the newest page
  assert.deepEqual(c.add([dm(1), dm(2)]).map((m) => m.seq), [1]);     // a page back, overlapping
  assert.deepEqual(c.messages.map((m) => m.seq), [1, 2, 50, 51]);
  assert.equal(c.log.lastSeq, 51);
});

test('dms without a seq (nothing stored) are kept in arrival order after the numbered ones', () => {
  const c = new DirectConversation('bob');
  const a = { type: 'dm', from: 'bob', to: 'alice', text: 'live 1', ts: 5 };
  const b = { type: 'dm', from: 'alice', to: 'bob', text: 'live 2', ts: 6 };
  assert.deepEqual(c.add([a]), [a]);
  assert.deepEqual(c.add([b]), [b]);
  assert.deepEqual(c.messages.map((m) => m.text), ['live 1', 'live 2']);
  assert.equal(c.log.lastSeq, null);
});

test('starting over forgets the numbered dms; the same seqs are new again', () => {
  const c = new DirectConversation('bob');
  c.add([dm(1), dm(2)]);
  c.loaded = true;
  c.startOver();
  assert.deepEqual(c.messages, []);
  assert.equal(c.loaded, true, 'still loaded: the catch-up fetches it from its start');
  assert.deepEqual(c.add([dm(1)]).map((m) => m.seq), [1]);
});

test('dropping what is older than a page leaves no hole in the middle', () => {
  const c = new DirectConversation('bob');
  c.add([dm(3), dm(5)]);            // live, before the conversation was opened
  c.dropBefore(60);                 // the newest page starts at 60: 6-59 were never held
  assert.deepEqual(c.messages, []);
  assert.deepEqual(c.add([dm(60), dm(61)]).map((m) => m.seq), [60, 61]);
  c.dropBefore(60);
  assert.deepEqual(c.messages.map((m) => m.seq), [60, 61]);
  assert.deepEqual(c.add([dm(5)]).map((m) => m.seq), [5], 'paged back in later');
});

test('unread is the last seq minus the marker, from welcome and then live', () => {
  const marks = new ReadMarks();
  const key = keyOf('dm', 'bob');
  assert.equal(marks.unread(key), 0);
  marks.fromServer(key, 12, 9);
  assert.equal(marks.unread(key), 3);
  marks.seen(key, 13);
  marks.seen(key, 11);            // an older one paged in changes nothing
  assert.equal(marks.unread(key), 4);
  // One's own dm is read up to it: the server moved the marker when it stored the dm.
  marks.seen(key, 14, { mine: true });
  assert.equal(marks.unread(key), 0);
  assert.deepEqual(marks.due(), [], 'nothing to send for a marker the server moved itself');
});

test('markers only move forward, whatever order replies, events and welcomes come in', () => {
  const marks = new ReadMarks();
  const key = keyOf('room', 'lobby');
  marks.fromServer(key, 340, 330);
  marks.confirm(key, 338);        // another tab read further
  assert.equal(marks.unread(key), 2);
  marks.confirm(key, 335);        // a late reply from before: no step back
  assert.equal(marks.unread(key), 2);
  marks.fromServer(key, 340, 320);  // a welcome after a reconnect that lost a write: ours stays
  assert.equal(marks.unread(key), 2);
  marks.confirm(key, 345);        // read past what we knew of: the room is that far at least
  assert.equal(marks.unread(key), 0);
  assert.equal(marks.entries.get(key).last, 345);
});

test('what the user viewed is due to be sent until the server confirms it', () => {
  const marks = new ReadMarks();
  const key = keyOf('dm', 'bob');
  marks.fromServer(key, 5, 2);
  marks.viewed(key, 5);
  assert.equal(marks.unread(key), 0, 'the badge clears at once');
  assert.deepEqual(marks.due(), [{ key, seq: 5 }]);
  marks.inFlight.add(key);
  assert.deepEqual(marks.due(), [], 'one request per marker at a time');
  marks.seen(key, 7);
  marks.viewed(key, 7);
  marks.inFlight.delete(key);
  marks.confirm(key, 5);          // the reply to the first
  assert.deepEqual(marks.due(), [{ key, seq: 7 }], 'the newer one goes next');
  marks.confirm(key, 7);
  assert.deepEqual(marks.due(), []);
});

test('a marker read elsewhere first is not sent again from here', () => {
  const marks = new ReadMarks();
  const key = keyOf('dm', 'bob');
  marks.fromServer(key, 9, 0);
  marks.confirm(key, 9);          // the other tab's `read`
  marks.viewed(key, 9);
  assert.deepEqual(marks.due(), []);
});

test('a refused marker stops being sent', () => {
  const marks = new ReadMarks();
  const key = keyOf('room', 'gone');
  marks.baseline(key, 3);
  marks.seen(key, 4);
  marks.viewed(key, 4);
  assert.equal(marks.due().length, 1);
  marks.abandon(key);
  assert.deepEqual(marks.due(), []);
  assert.equal(marks.unread(key), 0, 'it was still read here');
});

test('a first join without a server marker counts nothing of the past; a marker wins over it', () => {
  const marks = new ReadMarks();
  marks.baseline(keyOf('room', 'new'), 120);
  assert.equal(marks.unread(keyOf('room', 'new')), 0);
  assert.deepEqual(marks.due(), [], 'not viewed: nothing is sent');
  marks.seen(keyOf('room', 'new'), 121);
  assert.equal(marks.unread(keyOf('room', 'new')), 1);

  marks.fromServer(keyOf('room', 'known'), 50, 40);
  marks.baseline(keyOf('room', 'known'), 50);
  assert.equal(marks.unread(keyOf('room', 'known')), 10);
  marks.forget(keyOf('room', 'known'));
  assert.equal(marks.has(keyOf('room', 'known')), false);
});

// A clock and timers driven by hand.
function fakeTime() {
  const time = { now: 0, timers: [] };
  time.setTimer = (fn, ms) => { const t = { fn, at: time.now + ms }; time.timers.push(t); return t; };
  time.clearTimer = (t) => { time.timers = time.timers.filter((x) => x !== t); };
  time.advance = (ms) => {
    time.now += ms;
    for (const t of time.timers.filter((x) => x.at <= time.now)) {
      time.timers = time.timers.filter((x) => x !== t);
      t.fn();
    }
  };
  return time;
}

test('the throttle runs at once, then folds a burst into one run at the end of the interval', () => {
  const time = fakeTime();
  let runs = 0;
  const throttle = new Throttle(1000, () => { runs += 1; }, { now: () => time.now, setTimer: time.setTimer, clearTimer: time.clearTimer });
  throttle.poke();
  assert.equal(runs, 1);
  for (let i = 0; i < 20; i += 1) {
    time.advance(10);
    throttle.poke();
  }
  assert.equal(runs, 1, 'a burst waits');
  assert.equal(time.timers.length, 1, 'one run scheduled for all of it');
  time.advance(1000);
  assert.equal(runs, 2);
  time.advance(5000);
  throttle.poke();
  assert.equal(runs, 3, 'after a quiet spell the next one goes at once');
  throttle.poke();
  throttle.cancel();
  time.advance(5000);
  assert.equal(runs, 3, 'cancelled');
});
