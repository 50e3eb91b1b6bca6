// Backoff, the client's waits between reconnection attempts.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Backoff } from '../parley.js';

test('doubles from the base to the cap, each delay in the upper half of its step', () => {
  const low = new Backoff({ base: 500, cap: 15000, random: () => 0 });
  const high = new Backoff({ base: 500, cap: 15000, random: () => 1 });
  const lows = Array.from({ length: 8 }, () => low.next());
  const highs = Array.from({ length: 8 }, () => high.next());
  assert.deepEqual(highs, [500, 1000, 2000, 4000, 8000, 15000, 15000, 15000]);
  assert.deepEqual(lows, [250, 500, 1000, 2000, 4000, 7500, 7500, 7500]);
});

test('reset starts again from the base', () => {
  const b = new Backoff({ base: 100, cap: 1000, random: () => 1 });
  b.next();
  b.next();
  b.next();
  b.reset();
  assert.equal(b.next(), 100);
});

test('a long outage never overflows the cap', () => {
  const b = new Backoff({ base: 500, cap: 15000, random: () => 1 });
  for (let i = 0; i < 2000; i += 1) b.next();
  assert.equal(b.next(), 15000);
});
