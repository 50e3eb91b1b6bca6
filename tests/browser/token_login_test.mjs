// The login form of a daemon that wants tokens (auth.mode = "token"): the page asks for one,
// shows the server's refusal of a bad one and stays usable, and logs in with a good one.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { Daemon } from './support/daemon.mjs';
import { launchChromium, openPage, screenshot, sendMessage, waitForTexts, waitOnline } from './support/browser.mjs';
import { inAnHour, token, tokenAuthConfig } from './support/token.mjs';

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

test('the page asks for a token, refuses bad ones with the reason and logs in with a good one', async () => {
  const page = await openPage(browser, daemon.url);
  await page.locator('#login-token').waitFor();   // shown only because the daemon wants tokens

  // Without a token the form says so before anything is sent.
  await page.fill('#login-name', 'grace');
  await page.press('#login-name', 'Enter');
  await page.locator('#login-error', { hasText: 'needs an access token' }).waitFor();

  // Signed with another key: the server refuses, the form shows it and can be used again.
  await page.fill('#login-token', token({ sub: 'grace', exp: inAnHour() }, 'another-key-0123456789-0123456789-xyz'));
  await page.press('#login-name', 'Enter');
  await page.locator('#login-error:not(:empty)').waitFor();
  assert.equal(await page.locator('#chat-screen').isVisible(), false);
  await screenshot(page, '11-token-refused');

  // Made out to someone else: refused too.
  await page.fill('#login-token', token({ sub: 'mallory', exp: inAnHour() }));
  await page.press('#login-name', 'Enter');
  await page.locator('#login-submit:not([disabled])').waitFor();
  assert.equal(await page.locator('#chat-screen').isVisible(), false);

  // Expired: the message says so.
  await page.fill('#login-token', token({ sub: 'grace', exp: Math.floor(Date.now() / 1000) - 3600 }));
  await page.press('#login-name', 'Enter');
  await page.locator('#login-error', { hasText: 'expired' }).waitFor();

  await page.fill('#login-token', token({ sub: 'grace', exp: inAnHour() }));
  await page.press('#login-name', 'Enter');
  await waitOnline(page);
  await page.locator('#view-title', { hasText: '# lobby' }).waitFor();
  await sendMessage(page, 'signed in with a token');
  await waitForTexts(page, ['signed in with a token']);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
