// The admin page (/admin/) in headless Chromium against the real parleyd with an admin token:
// a wrong token is refused and shows nothing; with the right one the charts move while bots
// chat, the filter filters, a kick from the page closes the user's socket with 4000, a refused
// action shows the server's error, and the page says when the daemon is away and carries on
// when it is back.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { Bot } from './support/bot.mjs';
import { Daemon } from './support/daemon.mjs';
import { launchChromium, screenshot } from './support/browser.mjs';

const adminToken = 'browser-admin-token-0123456789';
let daemon;
let browser;

before(async () => {
  daemon = new Daemon({ config: `[admin]\ntoken = "${adminToken}"\n` });
  await daemon.start();
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (daemon) await daemon.dispose();
});

async function waitFor(check, what, timeout = 15000) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    last = await check();
    if (last === true) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

// The admin page in a fresh profile. Uncaught errors are recorded in page.problems; failed
// loads are not (a refused token and a stopped daemon make them on purpose).
async function openAdmin() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.problems = [];
  page.on('dialog', (dialog) => {
    page.problems.push(`dialog: ${dialog.message()}`);
    dialog.dismiss().catch(() => {});
  });
  page.on('pageerror', (error) => page.problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/^Failed to load resource/.test(message.text())) {
      page.problems.push(`console error: ${message.text()}`);
    }
  });
  await page.goto(`${daemon.url}/admin`);   // redirects to /admin/
  await page.locator('#token-input').waitFor();
  return page;
}

async function signIn(page, token) {
  await page.fill('#token-input', token);
  await page.press('#token-input', 'Enter');
}

// The figure a chart shows now, and how many values it has drawn.
const chartState = (page, key) => page.$eval(`[data-chart="${key}"]`, (card) => ({
  latest: card.dataset.latest === undefined || card.dataset.latest === '' ? null : Number(card.dataset.latest),
  samples: Number(card.dataset.samples ?? 0),
  pixels: card.querySelector('canvas').toDataURL(),
}));
const usersShown = (page) => page.$$eval('#user-list li[data-user]', (rows) => rows.map((r) => r.dataset.user));
const roomsShown = (page) => page.$$eval('#room-list li[data-room]', (rows) => rows.map((r) => r.dataset.room));

// A bot in `room`, whose socket's close (code and reason) is kept for the test to read.
async function botIn(name, room) {
  const bot = await Bot.create(browser, daemon.url, name);
  await bot.connect();
  await bot.join(room);
  await bot.page.evaluate(() => {
    window.closeInfo = new Promise((resolve) => {
      window.botSocket.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason }));
    });
    window.systemTexts = [];
    window.botSocket.addEventListener('message', (e) => {
      const m = JSON.parse(e.data);
      if (m.type === 'system') window.systemTexts.push(m.text);
    });
  });
  return bot;
}

test('a wrong token is refused and shows nothing of the admin data', async () => {
  const alice = await botIn('alice', 'secretroom');
  const page = await openAdmin();
  await signIn(page, 'not-the-admin-token');
  await page.locator('#token-error', { hasText: 'Wrong token' }).waitFor();
  assert.match(await page.textContent('#token-error'), /401/);
  assert.equal(await page.locator('#dashboard').isVisible(), false);
  assert.equal(await page.locator('#sign-in').isVisible(), true);
  const text = await page.textContent('body');
  assert.equal(text.includes('alice'), false);
  assert.equal(text.includes('secretroom'), false);
  assert.deepEqual(await usersShown(page), []);
  assert.equal(await page.evaluate(() => sessionStorage.length + localStorage.length), 0, 'a refused token is not kept');
  await screenshot(page, '60-admin-wrong-token');
  assert.deepEqual(page.problems, []);
  await page.context().close();
  await alice.close();
});

test('with the right token: live charts, the filter, a kick, a refusal, and the daemon going away', async () => {
  const alice = await botIn('alice', 'lobby');
  const bob = await botIn('bob', 'lobby');
  const carol = await botIn('carol', 'garden');
  const page = await openAdmin();
  await signIn(page, adminToken);
  await page.locator('#dashboard').waitFor();
  await page.locator('#daemon-state[data-state="up"]').waitFor();

  // The token lives in this tab's sessionStorage only.
  assert.deepEqual(await page.evaluate(() => ({
    session: sessionStorage.getItem('parley-admin-token'), local: localStorage.length, cookies: document.cookie,
  })), { session: adminToken, local: 0, cookies: '' });

  // Lists from the admin API.
  await waitFor(async () => (await usersShown(page)).join() === 'alice,bob,carol' || await usersShown(page), 'the users');
  await waitFor(async () => (await roomsShown(page)).join() === 'garden,lobby' || await roomsShown(page), 'the rooms');
  assert.equal(await page.textContent('#room-list li[data-room="lobby"] .entity-detail'), '2 members');

  // Figures: three connections and users; the rates start at the second scrape.
  await waitFor(async () => (await chartState(page, 'connections')).latest === 3 || await chartState(page, 'connections'), '3 connections');
  await waitFor(async () => (await chartState(page, 'users')).latest === 3, '3 users');
  await waitFor(async () => (await chartState(page, 'messages')).samples >= 1, 'a first rate');

  // Alice chats: messages and deliveries per second rise above zero, and the line is redrawn.
  const quiet = await chartState(page, 'messages');
  let chatting = true;
  const chat = (async () => {
    for (let i = 0; chatting; i += 1) {
      await alice.say('lobby', `message ${i}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await waitFor(async () => (await chartState(page, 'messages')).latest > 1, 'messages per second above 1');
  await waitFor(async () => (await chartState(page, 'deliveries')).latest > 1, 'deliveries per second above 1');
  const busy = await chartState(page, 'messages');
  assert.ok(busy.samples > quiet.samples, 'more values drawn');
  assert.notEqual(busy.pixels, quiet.pixels, 'the chart was redrawn with the new values');
  const memory = await chartState(page, 'memory');
  assert.ok(memory.latest > 1024 * 1024, `RSS ${memory.latest}`);
  await screenshot(page, '61-admin-charts-while-chatting');
  chatting = false;
  await chat;
  await waitFor(async () => (await chartState(page, 'messages')).latest === 0, 'the rate back to zero once quiet');

  // A fourth user: the gauge follows.
  const dave = await botIn('dave', 'garden');
  await waitFor(async () => (await chartState(page, 'connections')).latest === 4, '4 connections');

  // The filter narrows both lists, case-insensitively, and clearing it shows everything.
  await page.fill('#filter', 'GAR');
  await waitFor(async () => (await roomsShown(page)).join() === 'garden' || await roomsShown(page), 'rooms filtered');
  assert.deepEqual(await usersShown(page), []);
  assert.equal(await page.textContent('#user-list'), 'No user matches.');
  await page.fill('#filter', 'o');
  assert.deepEqual(await usersShown(page), ['bob', 'carol']);
  assert.deepEqual(await roomsShown(page), ['lobby']);
  assert.equal(await page.textContent('#user-count'), '(2 of 4)');
  await screenshot(page, '62-admin-filtered');
  await page.fill('#filter', '');
  assert.deepEqual(await usersShown(page), ['alice', 'bob', 'carol', 'dave']);

  // Kick bob from the page: asked first (cancel does nothing), then his socket closes with 4000.
  await page.click('#user-list li[data-user="bob"] [data-action="kick"]');
  await page.locator('#confirm-dialog[open]').waitFor();
  await page.click('#confirm-cancel');
  await page.locator('#confirm-dialog').waitFor({ state: 'hidden' });
  await page.click('#user-list li[data-user="bob"] [data-action="kick"]');
  await page.fill('#confirm-reason', 'spamming');
  await screenshot(page, '63-admin-confirm-kick');
  await page.click('#confirm-ok');
  const closed = await bob.page.evaluate(() => window.closeInfo);
  assert.deepEqual(closed, { code: 4000, reason: 'spamming' });
  await page.locator('#action-result', { hasText: 'Kicked bob (1 connection)' }).waitFor();
  await waitFor(async () => !(await usersShown(page)).includes('bob') || await usersShown(page), 'bob gone from the list');

  // An announcement to one room reaches its members.
  await page.click('#room-list li[data-room="garden"] [data-action="announce"]');
  assert.equal(await page.inputValue('#announce-room'), 'garden');
  await page.fill('#announce-text', 'Garden closes at noon');
  await page.click('#announce-form button[type="submit"]');
  await page.locator('#action-result', { hasText: 'Announced in #garden.' }).waitFor();
  await waitFor(async () => (await carol.page.evaluate(() => window.systemTexts)).includes('Garden closes at noon')
    || await carol.page.evaluate(() => window.systemTexts), 'carol to hear the announcement');

  // A ban needs token logins: the server refuses, and the page shows its reason.
  await page.click('#room-list li[data-room="lobby"] [data-action="moderate"]');
  await page.selectOption('#moderate-action', 'ban');
  await page.fill('#moderate-user', 'alice');
  await page.click('#moderate-form button[type="submit"]');
  await page.locator('#confirm-dialog[open]').waitFor();
  assert.match(await page.textContent('#confirm-text'), /Ban alice from #lobby/);
  await page.click('#confirm-ok');
  await page.locator('#action-result[data-kind="error"]', { hasText: 'auth.mode = "token"' }).waitFor();
  assert.match(await page.textContent('#action-result'), /HTTP 403/);
  await screenshot(page, '64-admin-refused');

  // Closing a room, confirmed: its members leave it.
  await page.click('#room-list li[data-room="garden"] [data-action="close"]');
  await page.click('#confirm-ok');
  await page.locator('#action-result', { hasText: 'Closed #garden (2 members).' }).waitFor();
  await waitFor(async () => !(await roomsShown(page)).includes('garden') || await roomsShown(page), 'garden gone');

  // A reload keeps the sign-in (same tab); the daemon going away shows, and polling goes on
  // until it is back.
  await page.reload();
  await page.locator('#dashboard').waitFor();
  await page.locator('#daemon-state[data-state="up"]').waitFor();
  await daemon.stop();
  await page.locator('#daemon-state[data-state="down"]').waitFor();
  assert.match(await page.textContent('#daemon-state'), /not answering/);
  await screenshot(page, '65-admin-daemon-away');
  await daemon.start();
  await page.locator('#daemon-state[data-state="up"]').waitFor({ timeout: 15000 });
  await waitFor(async () => (await chartState(page, 'connections')).latest === 0, 'the restarted daemon\'s figures');
  assert.equal(await page.locator('#dashboard').isVisible(), true);

  assert.deepEqual(page.problems, []);
  await page.context().close();
  for (const bot of [alice, bob, carol, dave]) await bot.close();
});
