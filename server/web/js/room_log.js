// The messages of one room as this page holds them: ordered by seq, each seq at most once.
// Everything that arrives (live messages, the join's history, pages of older history, the
// catch-up after a reconnect) goes through add(), so overlaps can never show a message twice.
// The room's other numbered events (moderation, edited, deleted) are held the same way;
// applyChanges() then brings the messages that edits and deletes point at up to date.

export class RoomLog {
  constructor() {
    this.epoch = null;       // the life of the room's history these seqs belong to
    this.messages = [];      // oldest first
    this.seqs = new Set();
    this.olderAvailable = true;  // false once a page back came up short
  }

  get lastSeq() { return this.messages.length ? this.messages[this.messages.length - 1].seq : null; }
  get firstSeq() { return this.messages.length ? this.messages[0].seq : null; }

  // Forgets everything: the room's history started a new life (another epoch), so the seqs
  // held here mean nothing any more.
  reset(epoch) {
    this.epoch = epoch;
    this.messages = [];
    this.seqs = new Set();
    this.olderAvailable = true;
  }

  // Adds messages in any order; returns the ones that were new, oldest first.
  add(batch) {
    const fresh = [];
    for (const m of batch) {
      if (typeof m.seq !== 'number' || this.seqs.has(m.seq)) continue;
      this.seqs.add(m.seq);
      fresh.push(m);
    }
    if (fresh.length === 0) return fresh;
    fresh.sort((a, b) => a.seq - b.seq);
    const last = this.lastSeq;
    if (last === null || fresh[0].seq > last) {
      this.messages.push(...fresh);  // the common case: newer than everything held
    } else {
      this.messages = mergeBySeq(this.messages, fresh);
    }
    return fresh;
  }

  // Applies the `edited` and `deleted` events among `fresh` (what add() just returned) to the
  // messages they point at; returns the messages changed, in seq order. A message that came
  // in the same batch is left alone: the server sent it as it is now, after those events. A
  // message not held is no matter: when it comes, it comes as it is now.
  applyChanges(fresh) {
    const inBatch = new Set(fresh.map((m) => m.seq));
    const changed = new Map();
    for (const event of fresh) {
      if (event.type !== 'edited' && event.type !== 'deleted') continue;
      if (typeof event.target !== 'number' || inBatch.has(event.target)) continue;
      const i = indexOfSeq(this.messages, event.target);
      if (i < 0) continue;
      const m = this.messages[i];
      if (m.type !== 'message' || m.deleted) continue;
      if (event.type === 'deleted' || event.deleted) {
        delete m.text;
        delete m.edited;
        m.deleted = true;
      } else if (typeof event.text === 'string') {
        m.text = event.text;
        m.edited = true;
      }
      changed.set(m.seq, m);
    }
    return [...changed.values()].sort((a, b) => a.seq - b.seq);
  }

  // The message just older than seq, for rendering a day or sender break; null at the start.
  before(seq) {
    const i = indexOfSeq(this.messages, seq);
    return i > 0 ? this.messages[i - 1] : null;
  }
}

function mergeBySeq(a, b) {
  const out = new Array(a.length + b.length);
  let i = 0, j = 0, k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i].seq < b[j].seq ? a[i++] : b[j++];
  while (i < a.length) out[k++] = a[i++];
  while (j < b.length) out[k++] = b[j++];
  return out;
}

// Binary search: the index of the message with this seq, or -1.
export function indexOfSeq(messages, seq) {
  let lo = 0, hi = messages.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = messages[mid].seq;
    if (s === seq) return mid;
    if (s < seq) lo = mid + 1; else hi = mid - 1;
  }
  return -1;
}
