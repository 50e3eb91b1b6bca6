// Delays between reconnection attempts: doubling from base to cap, each drawn at random from
// the upper half of its step, so that a thousand pages dropped by one restart do not all
// come back in the same millisecond.

export class Backoff {
  constructor({ base = 500, cap = 15000, random = Math.random } = {}) {
    this.base = base;
    this.cap = cap;
    this.random = random;
    this.attempt = 0;
  }

  // The delay before the next attempt, in milliseconds.
  next() {
    const step = Math.min(this.cap, this.base * 2 ** Math.min(this.attempt, 30));
    this.attempt += 1;
    return Math.round(step / 2 + this.random() * (step / 2));
  }

  // A connection that got as far as logging in starts the sequence again.
  reset() { this.attempt = 0; }
}
