// RoomLog, the client's store of one room's messages: whatever order and overlap messages
// arrive in, each seq is held once and the list stays in seq order.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { RoomLog, indexOfSeq } from '../parley.js';

const msg = (seq) => ({ type: 'message', room: 'r', from: 'a', text: `m${seq}`, seq, ts: 1000 + seq });
const seqs = (log) => log.messages.map((m) => m.seq);

test('newer messages are appended and reported as new', () => {
  const log = new RoomLog();
  log.reset(7);
  assert.deepEqual(log.add([msg(1), msg(2)]).map((m) => m.seq), [1, 2]);
  assert.deepEqual(log.add([msg(3)]).map((m) => m.seq), [3]);
  assert.deepEqual(seqs(log), [1, 2, 3]);
  assert.equal(log.firstSeq, 1);
  assert.equal(log.lastSeq, 3);
});

test('a seq already held is dropped, however it comes back', () => {
  const log = new RoomLog();
  log.add([msg(1), msg(2), msg(3)]);
  // A live message that also arrives in the catch-up after a reconnect, and a page of history
  // overlapping what is held.
  assert.deepEqual(log.add([msg(3), msg(4)]).map((m) => m.seq), [4]);
  assert.deepEqual(log.add([msg(2), msg(3), msg(4)]), []);
  assert.deepEqual(log.add([msg(4), msg(4), msg(5)]).map((m) => m.seq), [5]);
  assert.deepEqual(seqs(log), [1, 2, 3, 4, 5]);
});

test('older pages and gap fills are merged into seq order', () => {
  const log = new RoomLog();
  log.add([msg(10), msg(11), msg(20)]);
  log.add([msg(5), msg(6)]);            // a page back
  log.add([msg(15), msg(12), msg(13)]); // a gap filled, out of order
  assert.deepEqual(seqs(log), [5, 6, 10, 11, 12, 13, 15, 20]);
  assert.equal(log.before(12).seq, 11);
  assert.equal(log.before(5), null);
  assert.equal(indexOfSeq(log.messages, 13), 5);
  assert.equal(indexOfSeq(log.messages, 14), -1);
});

test('seqs may jump (a crash skips some); nothing is invented', () => {
  const log = new RoomLog();
  log.add([msg(1), msg(2), msg(100002)]);
  assert.deepEqual(seqs(log), [1, 2, 100002]);
});

test('reset forgets the old life of the room', () => {
  const log = new RoomLog();
  log.reset(1);
  log.add([msg(1), msg(2)]);
  log.olderAvailable = false;
  log.reset(2);
  assert.equal(log.epoch, 2);
  assert.deepEqual(log.messages, []);
  assert.equal(log.lastSeq, null);
  assert.equal(log.olderAvailable, true);
  assert.deepEqual(log.add([msg(1)]).map((m) => m.seq), [1]);
});

test('messages without a seq are ignored', () => {
  const log = new RoomLog();
  assert.deepEqual(log.add([{ text: 'no seq' }, { seq: '3' }]), []);
  assert.deepEqual(log.messages, []);
});

test('edits and deletes change the message they point at, once it is held', () => {
  const log = new RoomLog();
  log.add([msg(1), msg(2), msg(3)]);
  const edit = { type: 'edited', room: 'r', seq: 4, ts: 2000, target: 2, by: 'a', text: 'm2, corrected' };
  const revised = log.applyChanges(log.add([edit]));
  assert.deepEqual(revised.map((m) => m.seq), [2]);
  assert.equal(log.messages[1].text, 'm2, corrected');
  assert.equal(log.messages[1].edited, true);
  // The event is held like any other numbered event, and not applied twice.
  assert.deepEqual(seqs(log), [1, 2, 3, 4]);
  assert.deepEqual(log.applyChanges(log.add([edit])), []);

  const del = { type: 'deleted', room: 'r', seq: 5, ts: 3000, target: 2, by: 'o' };
  assert.deepEqual(log.applyChanges(log.add([del])).map((m) => m.seq), [2]);
  assert.equal(log.messages[1].deleted, true);
  assert.equal('text' in log.messages[1], false);
  assert.equal('edited' in log.messages[1], false);
  // Nothing edits a tombstone; an event about a message not held changes nothing.
  assert.deepEqual(log.applyChanges(log.add([{ ...edit, seq: 6, text: 'back?' }])), []);
  assert.deepEqual(log.applyChanges(log.add([{ ...del, seq: 7, target: 99 }])), []);
  assert.equal(log.messages[1].deleted, true);
});

test('a message that comes with its edits is already as it is now; an edit rewritten by a delete deletes', () => {
  const log = new RoomLog();
  log.add([msg(10)]);
  // A page back holds message 5 as the server has it now ("second"), and its earlier edits:
  // replaying them would bring back an older text.
  const page = [
    { ...msg(5), text: 'second', edited: true },
    { type: 'edited', room: 'r', seq: 6, ts: 1, target: 5, by: 'a', text: 'first' },
    { type: 'edited', room: 'r', seq: 7, ts: 1, target: 5, by: 'a', text: 'second' },
  ];
  assert.deepEqual(log.applyChanges(log.add(page)), []);
  assert.equal(log.messages[0].text, 'second');
  // Caught up after a reconnect: the edit of a message held, its text removed by a later delete.
  const caughtUp = [{ type: 'edited', room: 'r', seq: 11, ts: 1, target: 10, by: 'a', deleted: true }];
  assert.deepEqual(log.applyChanges(log.add(caughtUp)).map((m) => m.seq), [10]);
  assert.equal(log.messages.find((m) => m.seq === 10).deleted, true);
});
