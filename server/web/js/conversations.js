// Direct conversations and read markers as this page holds them. No DOM and no socket: the
// client feeds in what the server says (welcome's `conversations`, dms, pages of dm_history,
// `read` replies and events) and what the user has looked at, and asks what to show and what
// to send.
//
// Unread counts are the server's arithmetic: the last seq of a room or conversation minus the
// user's marker in it. A marker only moves forward, here as on the server, so a `read` from
// another tab, a reply and a welcome may arrive in any order.

import { RoomLog } from './parley.js';

// Views and markers are named the same way: {kind: 'room' | 'dm', name}.
export const keyOf = (kind, name) => `${kind}:${name}`;
export function parseKey(key) {
  const colon = key.indexOf(':');
  return { kind: key.slice(0, colon), name: key.slice(colon + 1) };
}

// One direct conversation. Where the daemon stores conversations (token mode) every dm has a
// seq, and they are kept in a RoomLog so that history pages, live dms and the catch-up after
// a reconnect merge without duplicates. Without tokens dms have no seq and nothing earlier
// can be fetched: they are kept in arrival order.
export class DirectConversation {
  constructor(peer) {
    this.peer = peer;
    this.log = new RoomLog();
    this.live = [];            // dms without a seq, oldest first
    this.loaded = false;       // the newest page of its history has been fetched
    this.loading = null;       // the promise of that fetch while it runs
    this.loadingOlder = false;
    this.liveUnread = 0;       // dms without a seq that came while it was not being read
  }

  get messages() { return this.live.length ? this.log.messages.concat(this.live) : this.log.messages; }

  // Adds dms in any order; returns the ones that were new.
  add(batch) {
    const numbered = batch.filter((m) => typeof m.seq === 'number');
    const fresh = this.log.add(numbered);
    for (const m of batch) {
      if (typeof m.seq !== 'number') {
        this.live.push(m);
        fresh.push(m);
      }
    }
    return fresh;
  }

  // Forgets what is held: the server numbers the conversation anew (a memory-only store
  // restarted), so the seqs held mean nothing any more. A conversation that was loaded stays
  // so: the catch-up pages it in again from its start.
  startOver() {
    this.log.reset(null);
  }

  // Drops the numbered dms older than seq. The newest page fetched at opening may start
  // after dms that arrived live before it, with dms missing between: those go, and paging
  // back fetches them again in order.
  dropBefore(seq) {
    const kept = this.log.messages.filter((m) => m.seq >= seq);
    if (kept.length === this.log.messages.length) return;
    this.log.reset(this.log.epoch);
    this.log.add(kept);
  }
}

// The user's read markers and the last seq known of each room and conversation.
//   last:      the newest seq known (from welcome, live messages, pages)
//   read:      what the badge counts from: the server's marker, or further if read here
//   viewed:    the furthest this page has shown the user, to be sent as `read`
//   confirmed: the marker as the server last said it is
export class ReadMarks {
  constructor() {
    this.entries = new Map();
    this.inFlight = new Set();   // keys with a `read` request on its way
  }

  entry(key) {
    let e = this.entries.get(key);
    if (!e) {
      e = { last: 0, read: 0, viewed: 0, confirmed: 0 };
      this.entries.set(key, e);
    }
    return e;
  }

  has(key) { return this.entries.has(key); }

  unread(key) {
    const e = this.entries.get(key);
    return e ? Math.max(0, e.last - e.read) : 0;
  }

  // A welcome entry: {seq, read} as the server keeps them.
  fromServer(key, seq, read) {
    const e = this.entry(key);
    e.last = Math.max(e.last, seq);
    this.confirm(key, read);
  }

  // A room joined for the first time with no marker on the server: what the join shows is
  // the room's past, not news.
  baseline(key, seq) {
    if (this.entries.has(key)) return;
    const e = this.entry(key);
    e.last = seq;
    e.read = seq;
  }

  // A message with this seq exists. The sender of a dm has read it: the server moved their
  // marker when it stored it.
  seen(key, seq, { mine = false } = {}) {
    const e = this.entry(key);
    e.last = Math.max(e.last, seq);
    if (mine) this.confirm(key, seq);
  }

  // The user has seen everything up to seq here.
  viewed(key, seq) {
    const e = this.entry(key);
    e.read = Math.max(e.read, seq);
    e.viewed = Math.max(e.viewed, seq);
  }

  // The server's marker (a reply to our `read`, another session's `read`, a welcome).
  confirm(key, seq) {
    const e = this.entry(key);
    e.confirmed = Math.max(e.confirmed, seq);
    e.read = Math.max(e.read, seq);
    e.last = Math.max(e.last, seq);
  }

  // The server refused to mark it (we left the room, the conversation is gone): stop asking.
  abandon(key) {
    const e = this.entry(key);
    e.viewed = Math.min(e.viewed, e.confirmed);
  }

  forget(key) {
    this.entries.delete(key);
  }

  // What to send now: [{key, seq}] for each marker viewed past the server's, not already on
  // its way.
  due() {
    const out = [];
    for (const [key, e] of this.entries) {
      if (e.viewed > e.confirmed && !this.inFlight.has(key)) out.push({ key, seq: e.viewed });
    }
    return out;
  }
}

// Runs `run` at most once per `everyMs`: the first call at once, the calls that follow
// within the interval folded into one at its end. The clock and timer are parameters so the
// unit tests drive them by hand.
export class Throttle {
  // (The defaults wrap the browser's timers: called as this.setTimer, a bare setTimeout
  // would run with the throttle as `this`, which browsers refuse.)
  constructor(everyMs, run, { now = () => Date.now(), setTimer = (fn, ms) => setTimeout(fn, ms),
                              clearTimer = (t) => clearTimeout(t) } = {}) {
    this.everyMs = everyMs;
    this.run = run;
    this.now = now;
    this.setTimer = setTimer;
    this.clearTimer = clearTimer;
    this.lastRun = -Infinity;
    this.timer = null;
  }

  poke() {
    if (this.timer !== null) return;
    const wait = this.lastRun + this.everyMs - this.now();
    if (wait <= 0) {
      this.fire();
      return;
    }
    this.timer = this.setTimer(() => {
      this.timer = null;
      this.fire();
    }, wait);
  }

  fire() {
    this.lastRun = this.now();
    this.run();
  }

  cancel() {
    if (this.timer !== null) this.clearTimer(this.timer);
    this.timer = null;
  }
}
