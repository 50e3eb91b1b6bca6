// Direct conversations and read markers in the page, on a daemon that keeps them (token mode):
// one user on two devices (two browser profiles) and others talking to them from a bot.
// Everything the page shows comes from the server, so it survives a reload and shows the
// same on both devices; what is read on one is read on the other.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { Bot } from './support/bot.mjs';
import { Daemon } from './support/daemon.mjs';
import {
  launchChromium, logIn, openPage, screenshot, sendMessage, seqsShown, textsShown, waitForTexts, waitOnline,
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

// A device of `user`: a browser profile of its own, logged in. Counts the `read` requests
// the page sends (page.readsSent: their seqs).
async function device(user, on = daemon) {
  const page = await openPage(browser, on.url);
  page.readsSent = [];
  page.on('websocket', (socket) => socket.on('framesent', (frame) => {
    const text = typeof frame.payload === 'string' ? frame.payload : frame.payload.toString();
    if (text.includes('"type":"read"')) page.readsSent.push(JSON.parse(text));
  }));
  await logIn(page, user, tokenFor(user));
  return page;
}

async function bot(name, on = daemon) {
  const b = await Bot.create(browser, on.url, name, { token: tokenFor(name) });
  await b.connect();
  return b;
}

// The unread badge of a conversation or room in the sidebar: its number, or 0 when there is none.
function badge(page, selector) {
  return page.$eval(selector, (item) => Number(item.querySelector('.unread')?.textContent ?? 0)).catch(() => null);
}
const dmBadge = (page, peer) => badge(page, `#dm-list [data-peer="${peer}"]`);
const roomBadge = (page, room) => badge(page, `#room-list [data-room="${room}"]`);
async function waitForBadge(page, read, expected, what) {
  await waitFor(async () => (await read()) === expected || await read(), `${what} to show ${expected}`);
}

test('dms sent while away: both devices list them unread, reading on one clears the other, a reload keeps them', async () => {
  const bob = await bot('bob');
  const away = ['while you were away 1', 'while you were away 2', 'while you were away 3'];
  for (const text of away) await bob.dm('alice', text);

  // Alice logs in on two devices: each lists the conversation with its three unread.
  const laptop = await device('alice');
  const phone = await device('alice');
  for (const page of [laptop, phone]) {
    await waitForBadge(page, () => dmBadge(page, 'bob'), 3, 'the conversation with bob');
    assert.deepEqual(await textsShown(page), [], 'the lobby, not the conversation, is open');
  }
  await screenshot(laptop, '12-conversation-unread');

  // The laptop opens it: the history is fetched from the server and read; the phone's mark clears.
  await laptop.click('#dm-list [data-peer="bob"]');
  await laptop.locator('#view-title', { hasText: '@ bob' }).waitFor();
  await waitForTexts(laptop, away);
  await waitForBadge(laptop, () => dmBadge(laptop, 'bob'), 0, 'the laptop\'s mark');
  await waitForBadge(phone, () => dmBadge(phone, 'bob'), 0, 'the phone\'s mark');
  assert.deepEqual(laptop.readsSent.map((r) => [r.with, r.seq]), [['bob', 3]]);
  assert.deepEqual(phone.readsSent, [], 'the phone read nothing itself');
  await screenshot(laptop, '13-conversation-read');

  // A burst while the laptop shows the conversation: the phone counts it, the laptop reads it
  // with a few markers (not one per dm), and the phone's mark clears again.
  const burst = Array.from({ length: 10 }, (_, i) => `burst ${i + 1}`);
  const seqs = await bob.dmBurst('alice', burst);
  assert.deepEqual(seqs, [...Array(10).keys()].map((i) => i + 4));
  await waitForTexts(laptop, [...away, ...burst]);
  await waitForBadge(phone, () => dmBadge(phone, 'bob'), 0, 'the phone\'s mark after the burst');
  const burstReads = laptop.readsSent.slice(1);
  assert.ok(burstReads.length >= 1 && burstReads.length <= 3, `reads sent for the burst: ${JSON.stringify(burstReads)}`);
  assert.equal(burstReads.at(-1).seq, 13, 'the last marker is the newest dm shown');

  // The phone answers in the conversation: the laptop shows it (sent from the same user), and
  // it is read everywhere.
  await phone.click('#dm-list [data-peer="bob"]');
  await waitForTexts(phone, [...away, ...burst]);
  await sendMessage(phone, 'answered from the phone');
  const all = [...away, ...burst, 'answered from the phone'];
  await waitForTexts(laptop, all);
  await waitForTexts(phone, all);
  assert.equal(await dmBadge(laptop, 'bob'), 0);
  assert.equal(await laptop.locator('#messages article.msg.mine').count(), 1);

  // A reload comes back to the conversation, its history fetched again.
  await laptop.reload();
  await logIn(laptop, 'alice');   // the name and the tab's token are filled in already
  await laptop.locator('#view-title', { hasText: '@ bob' }).waitFor();
  await waitForTexts(laptop, all);
  assert.deepEqual(await seqsShown(laptop), [...Array(14).keys()].map((i) => i + 1));
  assert.equal(await dmBadge(laptop, 'bob'), 0);

  // A third device, never used before, finds the conversation read, with its history.
  const tablet = await device('alice');
  await tablet.locator('#dm-list [data-peer="bob"]').waitFor();
  assert.equal(await dmBadge(tablet, 'bob'), 0);
  await tablet.click('#dm-list [data-peer="bob"]');
  await waitForTexts(tablet, all);
  await screenshot(tablet, '14-conversation-on-another-device');

  for (const page of [laptop, phone, tablet]) {
    assert.deepEqual(page.problems, []);
    await page.context().close();
  }
  await bob.close();
});

test('a long conversation pages back as the reader scrolls up', async () => {
  const dora = await bot('dora');
  const texts = Array.from({ length: 120 }, (_, i) => `old news ${i + 1}`);
  for (let i = 0; i < texts.length; i += 40) await dora.dmBurst('erin', texts.slice(i, i + 40));
  const page = await device('erin');
  await waitForBadge(page, () => dmBadge(page, 'dora'), 120, 'the conversation with dora');
  await page.click('#dm-list [data-peer="dora"]');
  await waitFor(async () => (await seqsShown(page)).length === 50 || (await seqsShown(page)).length, 'the newest 50');
  assert.deepEqual(await seqsShown(page), [...Array(50).keys()].map((i) => i + 71));
  await waitFor(async () => {
    await page.$eval('#messages', (box) => { box.scrollTop = 0; box.dispatchEvent(new Event('scroll')); });
    return (await seqsShown(page)).length === 120;
  }, 'all 120 dms after scrolling up', 20000);
  assert.deepEqual(await seqsShown(page), [...Array(120).keys()].map((i) => i + 1));
  await page.locator('#older-row', { hasText: 'start of the conversation' }).waitFor();
  assert.equal((await textsShown(page))[0], 'old news 1');
  assert.deepEqual(page.problems, []);
  await page.context().close();
  await dora.close();
});

test('a room read on one device is read on the other; its unread count survives a reload', async () => {
  const gina = await bot('gina');
  await gina.join('lobby');
  // Frank's first device lands in the lobby (nothing said yet), then opens a conversation.
  const desk = await device('frank');
  await desk.locator('#view-title', { hasText: '# lobby' }).waitFor();
  const openConversation = async (page, peer) => {
    await page.fill('#dm-name', peer);
    await page.press('#dm-name', 'Enter');
    await page.locator('#view-title', { hasText: `@ ${peer}` }).waitFor();
  };
  await openConversation(desk, 'gina');
  await gina.say('lobby', 'lobby 1');
  await gina.say('lobby', 'lobby 2');
  await waitForBadge(desk, () => roomBadge(desk, 'lobby'), 2, 'the lobby on the desk');

  // A second device lands in the lobby and reads it: the desk's count clears.
  const phone = await device('frank');
  await phone.locator('#view-title', { hasText: '# lobby' }).waitFor();
  await waitForTexts(phone, ['lobby 1', 'lobby 2']);
  await waitForBadge(desk, () => roomBadge(desk, 'lobby'), 0, 'the lobby on the desk after the phone read it');

  // Neither looks at the lobby now; three more arrive. The desk reloads: the count is the
  // server's, and reading on the phone clears it on the desk.
  await openConversation(phone, 'gina');
  for (const text of ['lobby 3', 'lobby 4', 'lobby 5']) await gina.say('lobby', text);
  await waitForBadge(phone, () => roomBadge(phone, 'lobby'), 3, 'the lobby on the phone');
  await desk.reload();
  await logIn(desk, 'frank');
  await desk.locator('#view-title', { hasText: '@ gina' }).waitFor();
  await waitForBadge(desk, () => roomBadge(desk, 'lobby'), 3, 'the lobby on the desk after a reload');
  await screenshot(desk, '15-room-unread-after-reload');
  await phone.click('#room-list [data-room="lobby"]');
  await waitForTexts(phone, ['lobby 1', 'lobby 2', 'lobby 3', 'lobby 4', 'lobby 5']);
  await waitForBadge(desk, () => roomBadge(desk, 'lobby'), 0, 'the lobby on the desk after the phone read it again');
  await waitForBadge(phone, () => roomBadge(phone, 'lobby'), 0, 'the lobby on the phone');

  for (const page of [desk, phone]) {
    assert.deepEqual(page.problems, []);
    await page.context().close();
  }
  await gina.close();
});

test('an open conversation catches up what it missed while the daemon restarted', async (t) => {
  // A daemon of its own, restarted; conversations are in its history file.
  const restarting = new Daemon({ config: tokenAuthConfig });
  t.after(() => restarting.dispose());
  await restarting.start();
  let hank = await bot('hank', restarting);
  await hank.dm('ivy', 'before 1');
  await hank.dm('ivy', 'before 2');
  const laptop = await device('ivy', restarting);
  const phone = await device('ivy', restarting);
  await laptop.click('#dm-list [data-peer="hank"]');
  await waitForTexts(laptop, ['before 1', 'before 2']);
  await waitForBadge(phone, () => dmBadge(phone, 'hank'), 0, 'the phone\'s mark');

  // The laptop cannot come back before hank has written again; the phone can.
  assert.equal((await restarting.stop()).code, 0);
  await laptop.locator('#connection-state[data-state="waiting"]').waitFor();
  await laptop.context().setOffline(true);
  await hank.close();
  await restarting.start();
  hank = await bot('hank', restarting);
  for (const text of ['after 1', 'after 2', 'after 3']) await hank.dm('ivy', text);
  await waitOnline(phone, 20000);
  await waitForBadge(phone, () => dmBadge(phone, 'hank'), 3, 'the phone\'s count of what came during the restart');

  // Back online, the laptop pages in what it missed, shows it once each, and reads it.
  await laptop.context().setOffline(false);
  await waitOnline(laptop, 20000);
  await waitForTexts(laptop, ['before 1', 'before 2', 'after 1', 'after 2', 'after 3'], 15000);
  assert.deepEqual(await seqsShown(laptop), [1, 2, 3, 4, 5]);
  await waitForBadge(phone, () => dmBadge(phone, 'hank'), 0, 'the phone\'s mark once the laptop read it');
  for (const page of [laptop, phone]) {
    assert.deepEqual(page.problems, []);
    await page.context().close();
  }
  await hank.close();
});
