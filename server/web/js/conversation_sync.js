// Direct conversations and read markers kept in step with the server, for ChatClient.
//
// Where the daemon stores conversations (token mode; its welcome lists them), everything
// comes from the server, so a reload or another device shows the same: the conversations and
// their unread counts from welcome, a conversation's history fetched with dm_history when it
// is opened (and paged back), the catch-up after a reconnect paged forward, and what the user
// reads here sent as `read` (throttled), which the user's other connections hear of. Without
// tokens nothing is stored: dms are live only, counted here, and no marker is sent.

import { Disconnected, ServerError } from './parley.js';
import { DirectConversation, ReadMarks, Throttle, keyOf, parseKey } from './conversations.js';

const HISTORY_PAGE = 50;
const GAP_PAGE = 500;    // the server's largest page
// Markers are sent at most this often, however many messages arrive while the user reads.
const READ_EVERY_MS = 1000;

export class ConversationSync {
  // client: the ChatClient (its connection, user, rooms and onChange are read as they are now).
  constructor(client) {
    this.client = client;
    this.conversations = new Map();   // peer -> DirectConversation, most recent activity first
    this.marks = new ReadMarks();
    this.keepsHistory = false;        // true once a welcome listed conversations
    this.readThrottle = new Throttle(READ_EVERY_MS, () => this.sendReads());
  }

  changed(what, detail) { this.client.onChange(what, detail); }

  stop() { this.readThrottle.cancel(); }

  // Where the user left off, from the login's reply: the conversations in the server's order
  // (newest activity first; any others held here after them) and the markers.
  takeWelcome(welcome) {
    this.keepsHistory = Array.isArray(welcome.conversations);
    if (!this.keepsHistory) return;
    const listed = new Map();
    for (const c of welcome.conversations) {
      if (typeof c.seq !== 'number' || typeof c.read !== 'number') continue;
      if (typeof c.room === 'string') {
        this.marks.fromServer(keyOf('room', c.room), c.seq, c.read);
        continue;
      }
      if (typeof c.with !== 'string') continue;
      const conversation = this.conversations.get(c.with) || new DirectConversation(c.with);
      if (conversation.log.lastSeq !== null && c.seq < conversation.log.lastSeq) {
        // The server's numbering went back (a memory-only store restarted): what we hold is gone.
        conversation.startOver();
        this.marks.forget(keyOf('dm', c.with));
        this.changed('dm-reset', c.with);
      }
      this.marks.fromServer(keyOf('dm', c.with), c.seq, c.read);
      listed.set(c.with, conversation);
    }
    for (const [peer, conversation] of this.conversations) if (!listed.has(peer)) listed.set(peer, conversation);
    this.conversations = listed;
    this.changed('conversations');
  }

  // After a reconnect: each conversation whose history was fetched is paged forward from its
  // newest dm held (the others are fetched when opened).
  async catchUp(connection) {
    if (!this.keepsHistory) return;
    for (const conversation of [...this.conversations.values()]) {
      if (!conversation.loaded) continue;
      let cursor = conversation.log.lastSeq ?? 0;
      const known = this.marks.entries.get(keyOf('dm', conversation.peer));
      if (known && known.last <= cursor) continue;   // the welcome says nothing is newer
      const added = [];
      for (;;) {
        const page = await connection.request({ type: 'dm_history', with: conversation.peer, after: cursor, limit: GAP_PAGE },
                                              { whileResuming: true });
        added.push(...conversation.add(page.messages));
        if (page.messages.length < GAP_PAGE) break;
        cursor = page.messages[page.messages.length - 1].seq;
      }
      this.noteDms(conversation, added);
      if (added.length) this.changed('dm', { peer: conversation.peer, added });
    }
  }

  conversation(peer) {
    if (!this.conversations.has(peer)) {
      this.conversations.set(peer, new DirectConversation(peer));
      this.changed('conversations');
    }
    return this.conversations.get(peer);
  }

  // A dm from the server, live (ours from another connection included).
  onDm(m) {
    const peer = m.from === this.client.user ? m.to : m.from;
    const conversation = this.conversation(peer);
    const added = conversation.add([m]);
    if (!added.length) return;
    this.noteDms(conversation, added);
    this.bringForward(peer);
    this.changed('dm', { peer, added });
  }

  // A `read` without re: the user read this on another connection.
  onRead(m) {
    if (typeof m.seq !== 'number') return;
    const key = typeof m.room === 'string' ? keyOf('room', m.room) : typeof m.with === 'string' ? keyOf('dm', m.with) : null;
    if (!key) return;
    this.marks.confirm(key, m.seq);
    this.changed('unread', key);
  }

  // Moves a conversation to the top of the list.
  bringForward(peer) {
    const conversation = this.conversations.get(peer);
    if (!conversation || this.conversations.keys().next().value === peer) return;
    this.conversations.delete(peer);
    this.conversations = new Map([[peer, conversation], ...this.conversations]);
    this.changed('conversations');
  }

  // Fetches the newest page of a conversation the first time it is opened. Resolves once it
  // is there (at once without stored conversations: there is nothing to fetch).
  load(peer) {
    const conversation = this.conversation(peer);
    if (!this.keepsHistory || conversation.loaded) return Promise.resolve();
    if (!conversation.loading) {
      conversation.loading = this.request({ type: 'dm_history', with: peer, limit: HISTORY_PAGE })
        .then((page) => {
          conversation.loaded = true;
          if (page.messages.length === HISTORY_PAGE) conversation.dropBefore(page.messages[0].seq);
          const added = conversation.add(page.messages);
          conversation.log.olderAvailable = conversation.log.firstSeq !== null && conversation.log.firstSeq > 1;
          this.noteDms(conversation, added);
          this.changed('dm-page', { peer, added, older: false });
        })
        .finally(() => { conversation.loading = null; });
    }
    return conversation.loading;
  }

  // Asks for the page before the oldest dm held. Resolves with the dms added.
  async loadOlder(peer) {
    const conversation = this.conversations.get(peer);
    if (!conversation || !conversation.loaded || conversation.loadingOlder || !conversation.log.olderAvailable ||
        conversation.log.firstSeq === null) return [];
    conversation.loadingOlder = true;
    try {
      const page = await this.request({ type: 'dm_history', with: peer, before: conversation.log.firstSeq, limit: HISTORY_PAGE });
      if (page.messages.length < HISTORY_PAGE) conversation.log.olderAvailable = false;
      const added = conversation.add(page.messages);
      this.changed('dm-page', { peer, added, older: true });
      return added;
    } finally {
      conversation.loadingOlder = false;
    }
  }

  request(message) {
    return this.client.connection ? this.client.connection.request(message) : Promise.reject(new Disconnected());
  }

  // Dms that arrived (live, paged or caught up): the conversation's last seq moves, and the
  // user's own are read (the server moved the marker when it stored them). Dms without seq
  // (nothing stored) are counted here instead.
  noteDms(conversation, added) {
    const key = keyOf('dm', conversation.peer);
    for (const m of added) {
      if (typeof m.seq === 'number') this.marks.seen(key, m.seq, { mine: m.from === this.client.user });
      else if (m.from !== this.client.user) conversation.liveUnread += 1;
    }
  }

  // How many messages of a room or conversation the user has not read.
  unreadOf(kind, name) {
    const conversation = kind === 'dm' ? this.conversations.get(name) : null;
    return this.marks.unread(keyOf(kind, name)) + (conversation ? conversation.liveUnread : 0);
  }

  // Rooms with unread messages by the server's markers, joined here or not.
  roomsWithUnread() {
    const out = [];
    for (const key of this.marks.entries.keys()) {
      const { kind, name } = parseKey(key);
      if (kind === 'room' && this.marks.unread(key) > 0) out.push(name);
    }
    return out;
  }

  // The user is looking at the newest messages of this room or conversation: they are read.
  viewed(kind, name) {
    const key = keyOf(kind, name);
    const before = this.unreadOf(kind, name);
    const held = kind === 'room' ? this.client.rooms.get(name) : this.conversations.get(name);
    if (!held) return;
    if (kind === 'dm') held.liveUnread = 0;
    if (held.log.lastSeq !== null) this.marks.viewed(key, held.log.lastSeq);
    if (this.keepsHistory && this.marks.due().length) this.readThrottle.poke();
    if (this.unreadOf(kind, name) !== before) this.changed('unread', key);
  }

  // Sends each marker that moved here past the server's. Offline, they wait for the next
  // `online` (ChatClient pokes the throttle then).
  sendReads() {
    const connection = this.client.connection;
    if (!this.keepsHistory || !connection || !connection.online) return;
    for (const { key, seq } of this.marks.due()) {
      const { kind, name } = parseKey(key);
      this.marks.inFlight.add(key);
      connection.request({ type: 'read', [kind === 'room' ? 'room' : 'with']: name, seq }).then((reply) => {
        this.marks.confirm(key, reply.seq);
        this.changed('unread', key);
      }, (e) => {
        if (e instanceof ServerError) this.marks.abandon(key);  // left the room, or no such conversation
      }).finally(() => {
        this.marks.inFlight.delete(key);
        if (this.marks.due().length && this.client.connection && this.client.connection.online) this.readThrottle.poke();
      });
    }
  }
}
