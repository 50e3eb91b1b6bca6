// Moderation and edit/delete on the chat page, in headless Chromium against a daemon with
// login tokens (where rooms have owners and moderators): the owner sets the topic and bans
// from the member menu, a member is offered nothing and refused when they try anyway, and
// edits and deletes show in place on every page and after a reload.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { Bot } from './support/bot.mjs';
import { Daemon } from './support/daemon.mjs';
import {
  launchChromium, logIn, memberNames, openPage, screenshot, sendMessage, textsShown, waitForTexts,
} from './support/browser.mjs';
import { tokenAuthConfig, tokenFor } from './support/token.mjs';

let daemon;
let browser;

before(async () => {
  daemon = new Daemon({ config: tokenAuthConfig });
  await daemon.start();
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (daemon) await daemon.dispose();
});

async function waitFor(check, what, timeout = 10000) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    last = await check();
    if (last === true) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

// `user` logged in with a token, in `room` (which the first to join makes, and owns).
async function person(user, room) {
  const page = await openPage(browser, daemon.url);
  await logIn(page, user, tokenFor(user));
  await page.fill('#join-name', room);
  await page.press('#join-name', 'Enter');
  await page.locator('#view-title', { hasText: `# ${room}` }).waitFor();
  return page;
}

const moderationLines = (page) => page.$$eval('#messages .moderation-line', (lines) => lines.map((l) => l.textContent));
const menuActions = (page) => page.$$eval('#member-menu [data-action]', (buttons) => buttons.map((b) => b.dataset.action));
const rowOf = (page, seq) => page.locator(`#messages article.msg[data-seq="${seq}"]`);
async function sentSeq(page, text) {
  await page.locator('#messages article.msg:not(.outbox) .text', { hasText: text }).first().waitFor();
  return page.$eval('#messages', (box, t) => Number([...box.querySelectorAll('article.msg[data-seq]')]
    .find((row) => row.querySelector('.text')?.textContent === t).dataset.seq), text);
}

test('the owner sets the topic and bans from the member menu; a member is offered nothing and refused', async () => {
  const olivia = await person('olivia', 'townhall');   // made the room: its owner
  const mike = await person('mike', 'townhall');
  await waitFor(async () => (await memberNames(olivia)).join() === 'mike,olivia' || await memberNames(olivia), 'olivia to see mike');
  await olivia.locator('#member-list [data-member="mike"]').waitFor();
  // The owner is marked in everyone's member list.
  await mike.locator('#member-list [data-member="olivia"][data-role="owner"]').waitFor();

  // The owner may set the topic, the member may not; the topic shows on both pages.
  assert.equal(await olivia.locator('#topic-edit').isVisible(), true);
  assert.equal(await mike.locator('#topic-line').isVisible(), false);
  await olivia.click('#topic-edit');
  await olivia.fill('#topic-input', 'Release day <b>not bold</b>');
  await olivia.press('#topic-input', 'Enter');
  for (const page of [olivia, mike]) {
    await page.locator('#topic-text', { hasText: 'Release day <b>not bold</b>' }).waitFor();
    await page.locator('#messages .moderation-line', { hasText: 'olivia set the topic: Release day' }).waitFor();
    assert.equal(await page.locator('.view-heading b').count(), 0);
  }
  assert.equal(await mike.locator('#topic-edit').isVisible(), false);
  await screenshot(mike, '31-topic-set-by-owner');

  // The owner's menu on a member: write, kick, ban, mute, make moderator.
  await olivia.click('#member-list [data-member="mike"]');
  await olivia.locator('#member-menu').waitFor();
  assert.deepEqual(await menuActions(olivia), ['message', 'kick', 'ban', 'mute', 'set_role:moderator']);
  await screenshot(olivia, '32-owner-member-menu');
  await olivia.keyboard.press('Escape');
  await olivia.locator('#member-menu').waitFor({ state: 'detached' });

  // The member's menu on the owner: only writing to her.
  await mike.click('#member-list [data-member="olivia"]');
  await mike.locator('#member-menu').waitFor();
  assert.deepEqual(await menuActions(mike), ['message']);
  await screenshot(mike, '33-member-menu-without-actions');
  await mike.keyboard.press('Escape');

  // Mike asks anyway, from another connection of his (same token): refused, nothing changes.
  const linesBefore = await moderationLines(olivia);
  const mikeBot = await Bot.create(browser, daemon.url, 'mike', { token: tokenFor('mike') });
  await mikeBot.connect();
  await mikeBot.join('townhall');
  for (const request of [
    { type: 'ban', room: 'townhall', user: 'olivia', reason: 'mutiny' },
    { type: 'kick', room: 'townhall', user: 'olivia' },
    { type: 'set_topic', room: 'townhall', text: 'taken over' },
    { type: 'set_role', room: 'townhall', user: 'mike', role: 'owner' },
  ]) {
    await assert.rejects(mikeBot.request(request), /Error: forbidden:/, `${request.type} by a member`);
  }
  // A message said after the refusals arrives after anything they could have caused.
  await sendMessage(olivia, 'still in charge');
  await waitForTexts(mike, ['still in charge']);
  for (const page of [olivia, mike]) {
    assert.deepEqual(await moderationLines(page), linesBefore);
    assert.equal(await page.locator('#topic-text').textContent(), 'Release day <b>not bold</b>');
    assert.deepEqual(await memberNames(page), ['mike', 'olivia']);
  }

  // The owner bans mike for an hour, with a reason: mike's pages leave the room and say why.
  await olivia.click('#member-list [data-member="mike"]');
  await olivia.click('#member-menu [data-action="ban"]');
  await olivia.fill('#member-menu-reason', 'spam');
  await olivia.selectOption('#member-menu-duration', '3600');
  await screenshot(olivia, '34-ban-form');
  await olivia.click('#member-menu [data-confirm="ban"]');
  await olivia.locator('#messages .moderation-line', { hasText: /^olivia banned mike until .+: spam$/ }).waitFor();
  await waitFor(async () => (await memberNames(olivia)).join() === 'olivia' || await memberNames(olivia), 'mike to leave');
  await mike.locator('#messages .notice', { hasText: "you were banned from 'townhall' by olivia: spam" }).waitFor();
  await mike.locator('#view-title', { hasText: '# lobby' }).waitFor();   // back in the room he was in before
  assert.equal(await mike.locator('#room-list [data-room="townhall"]:not(.not-joined)').count(), 0);
  await screenshot(olivia, '35-owner-after-ban');
  await screenshot(mike, '36-banned-member');

  // Joining again is refused, and the page says so.
  await mike.fill('#join-name', 'townhall');
  await mike.press('#join-name', 'Enter');
  await mike.locator('#composer-error', { hasText: 'could not join townhall' }).waitFor();
  await screenshot(mike, '37-banned-join-refused');

  await mikeBot.close();
  for (const page of [olivia, mike]) {
    assert.deepEqual(page.problems, []);
    await page.context().close();
  }
});

test('edits and deletes show in place on every page, and after a reload as the history has them', async () => {
  const ann = await person('ann', 'edits');    // owner
  const bob = await person('bob', 'edits');    // member
  await ann.locator('#member-list [data-member="bob"]').waitFor();

  await sendMessage(ann, 'welcome, bob');
  await sendMessage(bob, 'helo everyone');
  await sendMessage(bob, 'oops, wrong room');
  await sendMessage(bob, 'a rude remark');
  const texts = ['welcome, bob', 'helo everyone', 'oops, wrong room', 'a rude remark'];
  await waitForTexts(ann, texts);
  await waitForTexts(bob, texts);
  const [welcome, helo, oops, rude] = await Promise.all(texts.map((t) => sentSeq(bob, t)));

  // A member edits and deletes only his own messages; the owner deletes anyone's, edits only hers.
  assert.equal(await rowOf(bob, welcome).locator('.msg-actions button').count(), 0);
  assert.deepEqual(await rowOf(bob, helo).locator('.msg-actions button').evaluateAll((b) => b.map((x) => x.dataset.act)),
                   ['edit', 'delete']);
  assert.deepEqual(await rowOf(ann, helo).locator('.msg-actions button').evaluateAll((b) => b.map((x) => x.dataset.act)),
                   ['delete']);
  assert.deepEqual(await rowOf(ann, welcome).locator('.msg-actions button').evaluateAll((b) => b.map((x) => x.dataset.act)),
                   ['edit', 'delete']);

  // Bob corrects a message: both pages show the new text with the mark.
  await rowOf(bob, helo).hover();
  await rowOf(bob, helo).locator('[data-act="edit"]').click();
  await screenshot(bob, '41-editing');
  await bob.fill(`#messages article.msg[data-seq="${helo}"] .msg-edit textarea`, 'hello everyone');
  await bob.press(`#messages article.msg[data-seq="${helo}"] .msg-edit textarea`, 'Enter');
  for (const page of [ann, bob]) {
    await rowOf(page, helo).locator('.text', { hasText: 'hello everyone' }).waitFor();
    await rowOf(page, helo).locator('.edited-mark', { hasText: '(edited)' }).waitFor();
  }

  // Bob deletes his own slip, the owner deletes his remark: tombstones on both pages.
  await rowOf(bob, oops).hover();
  await rowOf(bob, oops).locator('[data-act="delete"]').click();
  await rowOf(bob, oops).locator('[data-act="confirm-delete"]').click();
  await rowOf(ann, rude).hover();
  await rowOf(ann, rude).locator('[data-act="delete"]').click();
  await screenshot(ann, '42-delete-asks');
  await rowOf(ann, rude).locator('[data-act="confirm-delete"]').click();
  const expectation = async (page) => {
    for (const seq of [oops, rude]) {
      await rowOf(page, seq).locator('.tombstone', { hasText: 'message deleted' }).waitFor();
      assert.equal(await rowOf(page, seq).locator('.msg-actions').count(), 0);
    }
    const shown = await textsShown(page);
    assert.deepEqual(shown, ['welcome, bob', 'hello everyone', 'message deleted', 'message deleted']);
    assert.equal(await rowOf(page, helo).locator('.edited-mark').count(), 1);
    const all = await page.locator('#messages').textContent();
    for (const gone of ['oops, wrong room', 'a rude remark', 'helo everyone']) assert.ok(!all.includes(gone), gone);
    // Edits and deletes are not lines of their own.
    assert.equal(await page.locator('#messages article.msg').count(), 4);
  };
  for (const page of [ann, bob]) await expectation(page);
  await screenshot(bob, '43-edited-and-deleted');

  // Bob asks anyway, from another connection: editing or deleting her message is refused.
  const bobBot = await Bot.create(browser, daemon.url, 'bob', { token: tokenFor('bob') });
  await bobBot.connect();
  await bobBot.join('edits');
  await assert.rejects(bobBot.request({ type: 'edit', room: 'edits', seq: welcome, text: 'hijacked' }), /Error: forbidden:/);
  await assert.rejects(bobBot.request({ type: 'delete', room: 'edits', seq: welcome }), /Error: forbidden:/);
  await bobBot.close();

  // After a reload the history shows the same: the tombstones without text, the edited mark.
  await bob.reload();
  await logIn(bob, 'bob');   // the name and the tab's token are filled in already
  await bob.locator('#view-title', { hasText: '# edits' }).waitFor();
  await waitForTexts(bob, ['welcome, bob', 'hello everyone', 'message deleted', 'message deleted']);
  await expectation(bob);
  await screenshot(bob, '44-after-reload');

  for (const page of [ann, bob]) {
    assert.deepEqual(page.problems, []);
    await page.context().close();
  }
});
