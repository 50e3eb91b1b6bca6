// RoomModeration, the page's copy of a room's moderation state: taken whole from `joined`,
// then kept by the room's `moderation` events; and the line each event shows as.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { RoomModeration, describeModeration } from '../../server/web/js/room_moderation.js';

const event = (fields) => ({ type: 'moderation', room: 'r', seq: 9, ts: 1000, by: 'olivia', ...fields });

test('a joined gives the topic, roles, bans, mutes and slow mode; absent fields are empty', () => {
  const empty = RoomModeration.fromJoined({ type: 'joined', room: 'r', members: ['a'], history: [] });
  assert.equal(empty.topic, '');
  assert.equal(empty.roleOf('a'), 'member');
  assert.equal(empty.bans.size + empty.mutes.size + empty.roles.size, 0);
  assert.equal(empty.slowModeS, 0);

  const state = RoomModeration.fromJoined({
    type: 'joined', room: 'r', topic: 'Release day', members: ['maud', 'olivia'],
    roles: { maud: 'moderator', olivia: 'owner' }, slow_mode_s: 30,
    bans: [{ user: 'bob', by: 'olivia', reason: 'spam' }],
    mutes: [{ user: 'carl', by: 'maud', until: 5000 }],
    history: [],
  });
  assert.equal(state.topic, 'Release day');
  assert.equal(state.roleOf('olivia'), 'owner');
  assert.equal(state.roleOf('maud'), 'moderator');
  assert.equal(state.roleOf('carl'), 'member');
  assert.deepEqual(state.bans.get('bob'), { user: 'bob', by: 'olivia', reason: 'spam', until: null });
  assert.ok(state.isBanned('bob', 10 ** 15));       // without `until`: until lifted
  assert.ok(state.isMuted('carl', 4999));
  assert.ok(!state.isMuted('carl', 5000));           // a timed mute is over at `until`
  assert.equal(state.slowModeS, 30);
});

test('events change the state: topic, roles, bans, mutes, slow mode; a kick keeps nothing', () => {
  const state = RoomModeration.fromJoined({ roles: { olivia: 'owner' } });
  assert.ok(state.apply(event({ action: 'set_topic', topic: 'Hello' })));
  assert.equal(state.topic, 'Hello');
  state.apply(event({ action: 'set_topic', topic: '' }));
  assert.equal(state.topic, '');

  state.apply(event({ action: 'set_role', user: 'maud', role: 'moderator' }));
  assert.equal(state.roleOf('maud'), 'moderator');
  state.apply(event({ action: 'set_role', user: 'maud', role: 'member' }));
  assert.equal(state.roleOf('maud'), 'member');
  assert.ok(!state.roles.has('maud'));

  state.apply(event({ action: 'ban', user: 'bob', reason: 'spam', until: 9000 }));
  assert.ok(state.isBanned('bob', 8000));
  assert.ok(state.apply(event({ action: 'unban', user: 'bob' })));
  assert.ok(!state.isBanned('bob', 8000));
  assert.ok(!state.apply(event({ action: 'unban', user: 'bob' })));   // not banned: nothing changes

  state.apply(event({ action: 'mute', user: 'carl' }));
  assert.ok(state.isMuted('carl'));
  state.apply(event({ action: 'unmute', user: 'carl', by: '' }));     // a timed mute ended
  assert.ok(!state.isMuted('carl'));

  state.apply(event({ action: 'set_slow_mode', interval_s: 15 }));
  assert.equal(state.slowModeS, 15);
  assert.ok(!state.apply(event({ action: 'kick', user: 'dan' })));
  assert.ok(!state.apply(event({ action: 'something_newer' })));
});

test('each event reads as one line', () => {
  assert.equal(describeModeration(event({ action: 'ban', user: 'mike', reason: 'spam' })), 'olivia banned mike: spam');
  assert.equal(describeModeration(event({ action: 'ban', user: 'mike', until: 5 }), () => 'noon'), 'olivia banned mike until noon');
  assert.equal(describeModeration(event({ action: 'kick', user: 'mike' })), 'olivia removed mike from the room');
  assert.equal(describeModeration(event({ action: 'mute', user: 'mike', reason: 'calm down', until: 5 }), () => '12:10'),
               'olivia muted mike until 12:10: calm down');
  assert.equal(describeModeration(event({ action: 'unmute', user: 'mike' })), 'olivia unmuted mike');
  assert.equal(describeModeration(event({ action: 'unmute', user: 'mike', by: '' })), 'the mute on mike ended');
  assert.equal(describeModeration(event({ action: 'unban', user: 'mike', by: '' })), 'the ban on mike ended');
  assert.equal(describeModeration(event({ action: 'set_role', user: 'maud', role: 'moderator' })), 'olivia made maud a moderator');
  assert.equal(describeModeration(event({ action: 'set_role', user: 'maud', role: 'owner' })), 'olivia made maud an owner');
  assert.equal(describeModeration(event({ action: 'set_topic', topic: 'Release day' })), 'olivia set the topic: Release day');
  assert.equal(describeModeration(event({ action: 'set_topic', topic: '' })), 'olivia cleared the topic');
  assert.equal(describeModeration(event({ action: 'set_slow_mode', interval_s: 30 })),
               'olivia turned on slow mode: one message every 30 s');
  assert.equal(describeModeration(event({ action: 'set_slow_mode', interval_s: 0 })), 'olivia turned off slow mode');
  assert.equal(describeModeration(event({ action: 'ban', user: 'mike', by: '@admin' })), 'an administrator banned mike');
});
