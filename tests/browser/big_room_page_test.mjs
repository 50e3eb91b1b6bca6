// The chat page in a room of 19,901: the viewer joins first, then the load generator's 19,900
// connections join the same room (as many as the 20,000 descriptors a process may open allow,
// with the daemon's own). The page shows the count as presence and then presence_count bring it,
// lists the members on request a page at a time, and keeps chatting.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';

import { Daemon } from './support/daemon.mjs';
import { launchChromium, memberNames, openChat, screenshot, sendMessage, waitForTexts } from './support/browser.mjs';

const CROWD = 19900;
let daemon;
let browser;
let load;

before(async () => {
  if (!process.env.PARLEY_LOAD) throw new Error('set PARLEY_LOAD to the parley-load binary (ctest does)');
  daemon = new Daemon({ config: '[rooms]\npresence_count_interval_ms = 1000\n' });
  await daemon.start();
  browser = await launchChromium();
});

after(async () => {
  if (load && load.exitCode === null) load.kill('SIGKILL');
  if (browser) await browser.close();
  if (daemon) await daemon.dispose();
});

const headingCount = async (page) => {
  const text = await page.textContent('#members-heading');
  const match = text.match(/\(([\d,]+)\)/);
  return match ? Number(match[1].replace(/,/g, '')) : null;
};

async function waitFor(what, check, timeoutMs) {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a room of 19,901: the count, the member list paged on demand, chat going on', async () => {
  const page = await openChat(browser, daemon.url, 'viewer');
  await page.fill('#join-name', 'r0');
  await page.press('#join-name', 'Enter');
  await page.locator('#view-title', { hasText: '# r0' }).waitFor();

  // parley-load idle: connection i logs in as u<i> and joins r0 (one room), then holds.
  load = spawn(process.env.PARLEY_LOAD, ['idle', '--port', String(daemon.port), '--connections', String(CROWD),
                                         '--rooms', '1', '--hold', '300', '--setup-timeout', '120'],
               { stdio: ['ignore', 'ignore', 'pipe'] });
  let loadLog = '';
  load.stderr.on('data', (d) => { loadLog = (loadLog + d.toString()).slice(-4000); });
  await waitFor('the page to count everyone', async () => (await headingCount(page)) === CROWD + 1, 180000)
    .catch((e) => { throw new Error(`${e.message}; parley-load said:\n${loadLog}`); });
  await screenshot(page, '70-big-room-counted');

  // Past presence_max_members the page heard counts, not names: it pages the list from the start.
  const more = page.locator('#members-more');
  await more.waitFor({ state: 'visible' });
  const before = (await memberNames(page)).length;
  assert.ok(before >= 900 && before < 1200, `the names heard by presence: ${before}`);
  for (let i = 0; i < 3; i += 1) {
    const shown = (await memberNames(page)).length;
    await more.click();
    await waitFor('another page of members', async () => (await memberNames(page)).length > shown, 10000);
  }
  const names = await memberNames(page);
  assert.deepEqual(names, [...names].sort(), 'the list stays sorted');
  assert.equal(new Set(names).size, names.length, 'each name once');
  assert.ok(names.includes('u0') && names.includes('u1') && names.includes('u10'), 'paged from the start');

  // The room list counts the whole room too, and the page still chats.
  const listed = await page.textContent('#room-list');
  assert.match(listed, /19,?901/);
  await sendMessage(page, 'hello, crowd');
  await waitForTexts(page, ['hello, crowd']);
  await screenshot(page, '71-big-room-paged');
  assert.deepEqual(page.problems, []);
  load.kill('SIGTERM');
});
