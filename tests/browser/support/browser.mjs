// Headless Chromium (Debian's /usr/bin/chromium) driven by playwright-core, and the few
// things the tests ask of the chat page.

import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export const screenshotDir = process.env.SCREENSHOT_DIR || join(process.cwd(), 'screenshots');
mkdirSync(screenshotDir, { recursive: true });

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // Chromium's sandbox refuses to run as root, which is how CI runs.
    args: process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [],
  });
}

export async function screenshot(page, name) {
  await page.screenshot({ path: join(screenshotDir, `${name}.png`) });
}

// A fresh browser profile with the page open at the login form. Any alert() or uncaught
// error in the page is recorded in page.problems, which tests check stays empty.
export async function openPage(browser, url, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 760 }, ...options });
  const page = await context.newPage();
  page.problems = [];
  page.on('dialog', (dialog) => {
    page.problems.push(`dialog: ${dialog.message()}`);
    dialog.dismiss().catch(() => {});
  });
  page.on('pageerror', (error) => page.problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // Chromium itself logs each failed connection attempt while the daemon is down or the
    // network is cut; those are expected. Anything else is the page's own error.
    if (message.type() === 'error' && !/^WebSocket connection to .* failed/.test(message.text())) {
      page.problems.push(`console error: ${message.text()}`);
    }
  });
  await page.goto(url);
  await page.locator('#login-name').waitFor();
  return page;
}

export async function logIn(page, name, token) {
  await page.fill('#login-name', name);
  if (token !== undefined) await page.fill('#login-token', token);
  await page.press('#login-name', 'Enter');
  await page.locator('#chat-screen').waitFor();
  await waitOnline(page);
}

export async function openChat(browser, url, name, options) {
  const page = await openPage(browser, url, options);
  await logIn(page, name);
  return page;
}

export function waitOnline(page, timeout = 15000) {
  return page.locator('#connection-state[data-state="online"]').waitFor({ timeout });
}

export async function sendMessage(page, text) {
  await page.fill('#composer-text', text);
  await page.press('#composer-text', 'Enter');
}

// The seqs of the room messages on screen, in screen order.
export function seqsShown(page) {
  return page.$$eval('#messages article.msg[data-seq]', (rows) => rows.map((r) => Number(r.dataset.seq)));
}

export function textsShown(page) {
  return page.$$eval('#messages article.msg:not(.outbox) .text', (rows) => rows.map((r) => r.textContent));
}

// Waits until the message list shows exactly `texts` in order (the last state seen is in the error).
export async function waitForTexts(page, texts, timeout = 10000) {
  const deadline = Date.now() + timeout;
  let shown = [];
  while (Date.now() < deadline) {
    shown = await textsShown(page);
    if (JSON.stringify(shown) === JSON.stringify(texts)) return;
    await page.waitForTimeout(50);
  }
  throw new Error(`expected messages ${JSON.stringify(texts)}, the page shows ${JSON.stringify(shown)}`);
}

export function memberNames(page) {
  return page.$$eval('#member-list li', (items) => items.map((i) => i.textContent.replace(' (you)', '')));
}
