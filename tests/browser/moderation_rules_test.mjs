// moderation_rules.js: what the page offers the viewer, by role, matching what the server
// allows (docs/protocol.md, "Moderation", "Edit and delete").

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { mayDelete, mayEdit, maySetTopic, memberActions } from '../../server/web/js/moderation_rules.js';

const names = (actions) => actions.map((a) => (a.role ? `${a.action}:${a.role}` : a.action));

test('only a higher role may kick, ban or mute; only owners change roles', () => {
  assert.deepEqual(names(memberActions('member', 'member')), []);
  assert.deepEqual(names(memberActions('member', 'moderator')), []);
  assert.deepEqual(names(memberActions('member', 'owner')), []);

  assert.deepEqual(names(memberActions('moderator', 'member')), ['kick', 'ban', 'mute']);
  assert.deepEqual(names(memberActions('moderator', 'member', { muted: true })), ['kick', 'ban', 'unmute']);
  assert.deepEqual(names(memberActions('moderator', 'moderator')), []);
  assert.deepEqual(names(memberActions('moderator', 'owner')), []);

  assert.deepEqual(names(memberActions('owner', 'member')), ['kick', 'ban', 'mute', 'set_role:moderator']);
  assert.deepEqual(names(memberActions('owner', 'moderator')), ['kick', 'ban', 'mute', 'set_role:member']);
  // Another owner: no kick, ban or mute; the roles can change (the server keeps one owner).
  assert.deepEqual(names(memberActions('owner', 'owner')), ['set_role:moderator', 'set_role:member']);
});

test('owners and moderators set the topic', () => {
  assert.ok(maySetTopic('owner'));
  assert.ok(maySetTopic('moderator'));
  assert.ok(!maySetTopic('member'));
});

test('the author edits; the author, moderators and owners delete; a tombstone is final', () => {
  const mine = { type: 'message', from: 'ann', text: 'hi', seq: 1 };
  const theirs = { type: 'message', from: 'bob', text: 'yo', seq: 2 };
  const gone = { type: 'message', from: 'ann', seq: 3, deleted: true };
  const line = { type: 'moderation', action: 'kick', by: 'ann', seq: 4 };
  assert.ok(mayEdit('ann', mine));
  assert.ok(!mayEdit('ann', theirs));
  assert.ok(!mayEdit('ann', gone));
  assert.ok(!mayEdit('ann', line));

  assert.ok(mayDelete('ann', 'member', mine));
  assert.ok(!mayDelete('ann', 'member', theirs));
  assert.ok(mayDelete('ann', 'moderator', theirs));
  assert.ok(mayDelete('ann', 'owner', theirs));
  assert.ok(!mayDelete('ann', 'owner', gone));
  assert.ok(!mayDelete('ann', 'owner', line));
});
