// The chat page in real headless Chromium against the real daemon: two people log in, chat,
// write privately, see each other; markup arrives as text; a daemon restart in the middle of
// a conversation leaves every message on screen exactly once. Screenshots of each step go
// to SCREENSHOT_DIR (ctest: the build folder's browser-screenshots/).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { Bot } from './support/bot.mjs';
import { Daemon } from './support/daemon.mjs';
import {
  launchChromium, memberNames, openChat, openPage, logIn, screenshot, sendMessage, seqsShown, textsShown,
  waitForTexts, waitOnline,
} from './support/browser.mjs';

let daemon;
let browser;

before(async () => {
  daemon = new Daemon();
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

test('two people chat in a room, write privately and see each other', async () => {
  const alicePage = await openPage(browser, daemon.url);
  await screenshot(alicePage, '01-login');
  await logIn(alicePage, 'alice');
  // A first visit lands in the lobby.
  await alicePage.locator('#view-title', { hasText: '# lobby' }).waitFor();

  const bobPage = await openChat(browser, daemon.url, 'bob');
  await bobPage.locator('#view-title', { hasText: '# lobby' }).waitFor();

  // Presence: each sees the other in the room, and the room list counts two members.
  await waitFor(async () => JSON.stringify(await memberNames(alicePage)) === '["alice","bob"]' || await memberNames(alicePage),
                'alice to see bob arrive');
  assert.deepEqual(await memberNames(bobPage), ['alice', 'bob']);
  await alicePage.locator('#room-list [data-room="lobby"] .count', { hasText: '2' }).waitFor();
  await screenshot(alicePage, '02-presence');

  await sendMessage(alicePage, 'hello bob');
  await waitForTexts(bobPage, ['hello bob']);
  await sendMessage(bobPage, 'hi alice, how are you?');
  await waitForTexts(alicePage, ['hello bob', 'hi alice, how are you?']);
  await waitForTexts(bobPage, ['hello bob', 'hi alice, how are you?']);
  // Sender and a local time on each message.
  const first = bobPage.locator('#messages article.msg').first();
  assert.equal(await first.locator('.from').textContent(), 'alice');
  assert.match(await first.locator('time').textContent(), /\d{1,2}[:.]\d{2}/);
  assert.ok(Date.parse(await first.locator('time').getAttribute('datetime')) > Date.now() - 60000);
  await screenshot(alicePage, '03-conversation');

  // A direct message: alice picks bob from the member list; bob gets it with an unread mark.
  await alicePage.click('#member-list [data-member="bob"]');
  await alicePage.locator('#view-title', { hasText: '@ bob' }).waitFor();
  await sendMessage(alicePage, 'just between us');
  await waitForTexts(alicePage, ['just between us']);
  const bobsConversation = bobPage.locator('#dm-list [data-peer="alice"]');
  await bobsConversation.locator('.unread', { hasText: '1' }).waitFor();
  await bobsConversation.click();
  await waitForTexts(bobPage, ['just between us']);
  await sendMessage(bobPage, 'sure');
  await waitForTexts(alicePage, ['just between us', 'sure']);
  await screenshot(bobPage, '04-direct-message');

  // Markup typed by a person is shown as the characters typed, never run.
  const markup = '<img src=x onerror=alert(1)> <b>bold?</b> <script>alert(2)</script>';
  await bobPage.click('#room-list [data-room="lobby"]');
  await sendMessage(bobPage, markup);
  await alicePage.click('#room-list [data-room="lobby"]');
  await waitForTexts(alicePage, ['hello bob', 'hi alice, how are you?', markup]);
  for (const page of [alicePage, bobPage]) {
    assert.equal(await page.locator('#messages img, #messages b, #messages script').count(), 0);
  }
  await screenshot(alicePage, '05-markup-shown-as-text');

  // Join, switch and leave: bob opens a second room, alice sees it listed and joins it.
  await bobPage.fill('#join-name', 'ops');
  await bobPage.press('#join-name', 'Enter');
  await bobPage.locator('#view-title', { hasText: '# ops' }).waitFor();
  await sendMessage(bobPage, 'ops check');
  await waitForTexts(bobPage, ['ops check']);
  // Going to the join box refreshes the room list (it also refreshes every 10 s).
  await alicePage.focus('#join-name');
  await alicePage.locator('#room-list [data-room="ops"] .count', { hasText: '1' }).waitFor({ timeout: 5000 });
  await alicePage.click('#room-list [data-room="ops"]');
  await waitForTexts(alicePage, ['ops check']);
  await bobPage.locator('#member-list [data-member="alice"]').waitFor();
  await alicePage.click('#room-list li:has([data-room="ops"]) .leave-button');
  await alicePage.locator('#view-title', { hasText: '# lobby' }).waitFor();
  await waitFor(async () => (await memberNames(bobPage)).join() === 'bob' || await memberNames(bobPage), 'alice to leave ops');

  for (const page of [alicePage, bobPage]) {
    assert.deepEqual(page.problems, []);
    await page.context().close();
  }
});

test('a restart in the middle of a conversation: the pages come back and show every message once', async (t) => {
  // A daemon of its own that keeps only 8 messages per room in memory: a page that missed
  // more must page the rest in from the history file.
  const restarting = new Daemon({ config: '[rooms]\nhistory_per_room = 8\njoined_history = 8\n' });
  t.after(() => restarting.dispose());
  await restarting.start();
  const room = 'standup';
  const bot = await Bot.create(browser, restarting.url, 'reporter');
  await bot.connect();
  await bot.join(room);
  const pages = [];
  for (const name of ['carol', 'dave']) {
    const page = await openChat(browser, restarting.url, name);
    await page.fill('#join-name', room);
    await page.press('#join-name', 'Enter');
    await page.locator('#view-title', { hasText: `# ${room}` }).waitFor();
    pages.push(page);
  }
  const [carol, dave] = pages;
  for (let i = 1; i <= 5; i += 1) await bot.say(room, `before ${i}`);
  await sendMessage(carol, 'carol before the restart');
  const before5 = ['before 1', 'before 2', 'before 3', 'before 4', 'before 5', 'carol before the restart'];
  await waitForTexts(dave, before5);
  await waitForTexts(carol, before5);

  // Stop the daemon: the pages see it go (1001) and wait to reconnect. Carol's network is
  // then cut, so she cannot come back before the bot has talked.
  const status = await restarting.stop();
  assert.equal(status.code, 0);
  await carol.locator('#connection-state[data-state="waiting"]').waitFor();
  await screenshot(carol, '06-daemon-restarting');
  await carol.context().setOffline(true);

  await restarting.start();
  await bot.connectWhenUp();
  await bot.join(room);
  for (let i = 1; i <= 12; i += 1) await bot.say(room, `after ${i}`);
  await waitOnline(dave, 20000);
  await sendMessage(dave, 'dave is back');
  await waitFor(async () => (await bot.allMessages(room)).length === 19, 'the server to hold 19 messages');
  await carol.context().setOffline(false);
  await waitOnline(carol, 20000);

  const expected = await bot.allMessages(room);
  assert.deepEqual(expected.map((m) => m.seq), [...Array(19).keys()].map((i) => i + 1),
                   'seqs continue across the restart');
  for (const page of pages) {
    await waitForTexts(page, expected.map((m) => m.text), 15000);
    const seqs = await seqsShown(page);
    assert.deepEqual(seqs, expected.map((m) => m.seq), 'each message once, in seq order');
    assert.deepEqual(page.problems, []);
  }
  await screenshot(carol, '07-reconnected-nothing-missing');
  await bot.close();
  for (const page of pages) await page.context().close();
});

test('earlier history loads when scrolling up, each message once', async () => {
  const room = 'archive';
  const bot = await Bot.create(browser, daemon.url, 'archivist');
  await bot.connect();
  await bot.join(room);
  for (let i = 1; i <= 130; i += 1) await bot.say(room, `archived message ${i}`);
  const page = await openChat(browser, daemon.url, 'erin');
  await page.fill('#join-name', room);
  await page.press('#join-name', 'Enter');
  await page.locator('#view-title', { hasText: `# ${room}` }).waitFor();
  await waitFor(async () => (await seqsShown(page)).length === 50, 'the newest 50 after joining');
  // Scrolling to the top loads the page before, until the start of the room.
  await waitFor(async () => {
    await page.$eval('#messages', (box) => { box.scrollTop = 0; box.dispatchEvent(new Event('scroll')); });
    return (await seqsShown(page)).length === 130;
  }, 'all 130 messages after scrolling up', 20000);
  assert.deepEqual(await seqsShown(page), [...Array(130).keys()].map((i) => i + 1));
  await page.locator('#older-row', { hasText: 'start of the room' }).waitFor();
  assert.equal((await textsShown(page))[0], 'archived message 1');
  await screenshot(page, '08-history-scrolled-up');
  assert.deepEqual(page.problems, []);
  await bot.close();
  await page.context().close();
});

test('phone width, keyboard only', async () => {
  const page = await openPage(browser, daemon.url, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  // Keyboard only: the name field has focus, Enter logs in, the message box has focus after.
  assert.equal(await page.evaluate(() => document.activeElement.id), 'login-name');
  await page.keyboard.type('frank');
  await page.keyboard.press('Enter');
  await waitOnline(page);
  await page.locator('#view-title', { hasText: '# lobby' }).waitFor();
  assert.equal(await page.evaluate(() => document.activeElement.id), 'composer-text');
  await page.keyboard.type('typed on a phone');
  await page.keyboard.press('Enter');
  await page.locator('#messages .text', { hasText: 'typed on a phone' }).waitFor();
  // Nothing wider than the screen; the room list is a panel behind a button.
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
  assert.equal(await page.locator('#sidebar').isVisible(), false);
  await screenshot(page, '09-phone');
  await page.focus('#toggle-sidebar');
  await page.keyboard.press('Enter');
  await page.locator('#sidebar').waitFor();
  assert.equal(await page.evaluate(() => document.activeElement.closest('#sidebar') !== null), true);
  await screenshot(page, '10-phone-rooms');
  await page.keyboard.press('Escape');
  await page.locator('#sidebar').waitFor({ state: 'hidden' });
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
