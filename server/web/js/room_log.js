// The messages of one room as this page holds them: ordered by seq, each seq at most once.
// Everything that arrives (live messages, the join's history, pages of older history, the
// catch-up after a reconnect) goes through add(), so overlaps can never show a message twice.

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
