// The chat page in real headless Chromium against a daemon with permessage-deflate on: Chromium
// offers the extension, takes parley's answer (no context takeover either way), and two people
// chat with messages that travel compressed in both directions. Chromium fails the connection
// on any compressed frame it cannot inflate, so a conversation that arrives whole is the proof.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { Daemon } from './support/daemon.mjs';
import { launchChromium, openChat, screenshot, sendMessage, waitForTexts } from './support/browser.mjs';

let daemon;
let browser;

before(async () => {
  // Every message compressed, the short ones too.
  daemon = new Daemon({ config: '[server]\ncompression = "on"\ncompression_min_bytes = 0\n' });
  await daemon.start();
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (daemon) await daemon.dispose();
});

test('Chromium negotiates permessage-deflate and the page chats over it', async () => {
  const alice = await openChat(browser, daemon.url, 'alice');
  const bob = await openChat(browser, daemon.url, 'bob');
  await alice.locator('#view-title', { hasText: '# lobby' }).waitFor();
  await bob.locator('#view-title', { hasText: '# lobby' }).waitFor();

  // What this browser agrees with this daemon, seen from a socket of the page's own origin.
  const extensions = await alice.evaluate(() => new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${location.host}/ws`);
    ws.onopen = () => { resolve(ws.extensions); ws.close(); };
    ws.onerror = () => reject(new Error('the WebSocket did not open'));
  }));
  assert.match(extensions, /^permessage-deflate/);
  assert.match(extensions, /client_no_context_takeover/);
  assert.match(extensions, /server_no_context_takeover/);

  const long = 'the quarterly numbers are in and they look good across every region we track, '.repeat(8).trim();
  await sendMessage(alice, 'short hello');
  await sendMessage(alice, long);
  await waitForTexts(bob, ['short hello', long]);
  await sendMessage(bob, `${long} (agreed)`);
  await sendMessage(bob, 'ok');
  const all = ['short hello', long, `${long} (agreed)`, 'ok'];
  await waitForTexts(alice, all);
  await waitForTexts(bob, all);
  await screenshot(alice, 'compression-01-conversation');
  assert.deepEqual(alice.problems, []);
  assert.deepEqual(bob.problems, []);
});
