// What the page knows about the chat, kept in step with the server over a Connection: the
// rooms this user is in (with their messages, members and who is typing), direct-message
// conversations, the room directory and who is online. It has no DOM: the view listens to
// `changed` notifications and reads the state.
//
// After every reconnect it logs in again and rejoins each room with the last seq it holds
// (join `after` + `epoch`), so the server sends exactly what was missed; where the server
// cannot send all of it, the gap is paged in with `history after`. Every message goes
// through RoomLog.add, which drops seqs already held: no duplicates, no gaps. Direct
// conversations and read markers are ConversationSync's (this.sync).
//
// A room's other numbered events go through the log too: moderation events (each shown as a
// line, and applied to the room's RoomModeration, which each `joined` gives whole), and edits
// and deletes (applied to the message they point at: a `revised` notification).

import { Connection, Disconnected, ServerError } from './connection.js';
import { ConversationSync } from './conversation_sync.js';
import { keyOf } from './conversations.js';
import { RoomLog } from './room_log.js';
import { RoomModeration } from './room_moderation.js';

const TYPING_SHOWN_MS = 4000;
const TYPING_SENT_EVERY_MS = 2500;
const HISTORY_PAGE = 50;
const GAP_PAGE = 500;    // the server's largest page
// The room list and who is online are asked for again this often while the page is visible
// (and whenever the user goes to join a room or write to someone).
const DIRECTORY_EVERY_MS = 10000;

class JoinedRoom {
  constructor(name) {
    this.name = name;
    this.log = new RoomLog();
    this.members = new Set();
    this.moderation = new RoomModeration();
    this.typing = new Map();     // user -> time the notice expires
    this.outbox = [];            // says not yet confirmed: {key, text, state, afterSeq, error}
    this.loadingOlder = false;
    this.lastTypingSent = 0;
  }
}

export class ChatClient {
  constructor({ wsUrl, onChange }) {
    this.wsUrl = wsUrl;
    this.onChange = onChange;    // (what, detail) => void
    this.user = null;
    this.token = null;
    this.rooms = new Map();      // joined rooms, in the order they were joined
    this.sync = new ConversationSync(this);   // direct conversations, read markers
    this.directory = [];         // [{name, members}] as the server last listed them
    this.online = [];            // user names
    this.connection = null;
    this.loggedInOnce = false;
    this.nextKey = 1;
    this.directoryTimer = null;
    this.directoryInterval = setInterval(() => {
      if (document.visibilityState === 'visible') this.scheduleDirectoryRefresh();
    }, DIRECTORY_EVERY_MS);
  }

  get state() { return this.connection ? this.connection.state : { name: 'stopped' }; }
  get conversations() { return this.sync.conversations; }

  // Connects and logs in. Resolves once logged in; rejects with the server's error when the
  // first login is refused (bad name, name taken, bad token), so the login form can say why.
  // Later drops are retried without end; `rooms` are joined (or rejoined) each time.
  logIn(user, token, rooms = []) {
    this.user = user;
    this.token = token || null;
    for (const name of rooms) if (!this.rooms.has(name)) this.rooms.set(name, new JoinedRoom(name));
    return new Promise((resolve, reject) => {
      this.connection = new Connection(this.wsUrl, {
        resume: (c) => this.resume(c),
        onEvent: (m) => this.onEvent(m),
        onState: (s) => {
          if (s.name === 'online' && !this.loggedInOnce) {
            this.loggedInOnce = true;
            resolve();
          }
          if (s.name === 'stopped' && !this.loggedInOnce) reject(new Error(s.reason));
          if (s.name === 'online') this.sync.readThrottle.poke();  // markers read while offline
          this.onChange('state', s);
        },
        onHeartbeat: () => this.refreshDirectory(),
        // Before the first login succeeded a refusal is the user's to fix; afterwards only a
        // refused token ends the retries (a name still held by our own dropped connection
        // frees itself within moments).
        fatal: (e) => e instanceof ServerError &&
          (e.code === 'unauthorized' || (!this.loggedInOnce && e.code !== 'rate_limited')),
      });
      this.connection.start();
    });
  }

  logOut() {
    if (this.connection) this.connection.stop('logged out');
    clearTimeout(this.directoryTimer);
    clearInterval(this.directoryInterval);
    this.sync.stop();
  }

  retryNow() { if (this.connection) this.connection.retryNow(); }

  async resume(connection) {
    const reply = await connection.request({ type: 'login', user: this.user, ...(this.token ? { token: this.token } : {}) },
                                           { whileResuming: true });
    this.user = reply.user;
    this.sync.takeWelcome(reply);
    for (const room of [...this.rooms.values()]) {
      try {
        await this.catchUp(connection, room);
      } catch (e) {
        if (!(e instanceof ServerError)) throw e;
        // The room refuses us now (made private, full): say so and let it go.
        this.rooms.delete(room.name);
        this.onChange('notice', `could not rejoin ${room.name}: ${e.message}`);
        this.onChange('rooms');
      }
    }
    await this.sync.catchUp(connection);
    await this.refreshDirectory(connection, true);
  }

  // Joins (or rejoins) a room and brings its log up to date.
  async catchUp(connection, room) {
    const request = { type: 'join', room: room.name };
    const heldSeq = room.log.lastSeq;
    if (heldSeq !== null && room.log.epoch !== null) {
      request.after = heldSeq;
      request.epoch = room.log.epoch;
    }
    const joined = await connection.request(request, { whileResuming: true });
    room.members = new Set(joined.members);
    // The room's state as of this join: the events in its history are in it already.
    room.moderation = RoomModeration.fromJoined(joined);
    if (joined.epoch !== room.log.epoch) {
      // A new life of the room's history: what we held is numbered differently now.
      if (room.log.epoch !== null) this.startOver(room);
      room.log.reset(joined.epoch);
    }
    let added = this.addToLog(room, joined.history);
    if (request.after !== undefined && joined.recovered === false && joined.epoch === request.epoch) {
      // More was missed than the server sent back: page forward from what we hold up to
      // where the join's history starts.
      added = added.concat(await this.fillGap(connection, room, heldSeq, joined.history));
    }
    if (request.after === undefined) {
      room.log.olderAvailable = room.log.firstSeq !== null && room.log.firstSeq > 1;
      // Without a marker from the server, what a first join shows is the room's past, not news.
      this.sync.marks.baseline(keyOf('room', room.name), room.log.lastSeq ?? 0);
    }
    if (room.log.lastSeq !== null) this.sync.marks.seen(keyOf('room', room.name), room.log.lastSeq);
    this.settleOutbox(room);
    this.onChange('joined', { room: room.name, added, firstJoin: request.after === undefined });
  }

  async fillGap(connection, room, fromSeq, tail) {
    const stopAt = tail.length ? tail[0].seq : Infinity;
    const added = [];
    let cursor = fromSeq;
    while (cursor < stopAt) {
      const page = await connection.request({ type: 'history', room: room.name, after: cursor, limit: GAP_PAGE },
                                            { whileResuming: true });
      added.push(...this.addToLog(room, page.messages));
      if (page.messages.length < GAP_PAGE) break;
      cursor = page.messages[page.messages.length - 1].seq;
    }
    return added;
  }

  async join(name) {
    if (!this.rooms.has(name)) this.rooms.set(name, new JoinedRoom(name));
    const room = this.rooms.get(name);
    try {
      await this.catchUp(this.connection, room);
    } catch (e) {
      if (!(e instanceof Disconnected)) {
        this.rooms.delete(name);     // refused: not ours after all
        this.onChange('rooms');
      }
      throw e;
    }
    this.onChange('rooms');
    this.scheduleDirectoryRefresh();
  }

  async leave(name) {
    if (!this.rooms.has(name)) return;
    try {
      await this.connection.request({ type: 'leave', room: name });
    } catch (e) {
      if (!(e instanceof ServerError && e.code === 'not_in_room')) throw e;
    }
    this.rooms.delete(name);
    // Without a stored marker, what was counted here means nothing at a later join.
    if (!this.sync.keepsHistory) this.sync.marks.forget(keyOf('room', name));
    this.onChange('rooms');
    this.scheduleDirectoryRefresh();
  }

  // Adds a batch of a room's events to its log and applies the edits and deletes among them;
  // returns what was new. Messages changed in place are announced as `revised`.
  addToLog(room, batch) {
    const added = room.log.add(batch);
    const revised = room.log.applyChanges(added);
    if (revised.length) this.onChange('revised', { room: room.name, messages: revised });
    return added;
  }

  // The viewer's role in a joined room: 'owner', 'moderator' or 'member'.
  roleIn(name) {
    const room = this.rooms.get(name);
    return room ? room.moderation.roleOf(this.user) : 'member';
  }

  // A moderation request (kick, ban, unban, mute, unmute, set_role, set_topic): resolves with
  // the ack; the change itself arrives as the room's `moderation` event. Rejects with the
  // server's refusal.
  moderate(name, type, fields = {}) {
    return this.connection.request({ type, room: name, ...fields });
  }

  setTopic(name, text) { return this.moderate(name, 'set_topic', { text }); }

  // Edits or deletes a message of a room; the change arrives as the room's `edited` or
  // `deleted` event.
  editMessage(name, seq, text) { return this.connection.request({ type: 'edit', room: name, seq, text }); }
  deleteMessage(name, seq) { return this.connection.request({ type: 'delete', room: name, seq }); }

  // A room's history started a new life: its seqs, and a marker counted in them, are void.
  startOver(room) {
    this.sync.marks.forget(keyOf('room', room.name));
    this.onChange('reset', room.name);
  }

  // Sends a message to a room. It shows in the room's outbox until the server numbers it;
  // if the connection drops first, the rejoin tells whether it arrived.
  say(name, text) {
    const room = this.rooms.get(name);
    if (!room) return;
    const item = { key: this.nextKey++, text, state: 'sending', afterSeq: room.log.lastSeq ?? 0, seq: null };
    room.outbox.push(item);
    this.onChange('outbox', name);
    this.connection.request({ type: 'say', room: name, text }).then((ack) => {
      item.seq = ack.seq;
      this.settleOutbox(room);
    }, (e) => {
      item.state = e instanceof ServerError ? 'failed' : 'unconfirmed';
      item.error = !(e instanceof ServerError) ? 'not confirmed: the connection dropped'
        : e.code === 'unavailable' ? 'not sent: the server could not store it just now; try again'
        : e.message;
      this.onChange('outbox', name);
    });
  }

  retry(name, key) {
    const room = this.rooms.get(name);
    const item = room && room.outbox.find((i) => i.key === key);
    if (!item) return;
    room.outbox = room.outbox.filter((i) => i !== item);
    this.say(name, item.text);
  }

  discard(name, key) {
    const room = this.rooms.get(name);
    if (!room) return;
    room.outbox = room.outbox.filter((i) => i.key !== key);
    this.onChange('outbox', name);
  }

  // Drops outbox entries whose message is in the log; decides the fate of unconfirmed ones
  // once the log is caught up after a reconnect.
  settleOutbox(room) {
    const before = room.outbox.length;
    room.outbox = room.outbox.filter((item) => {
      if (item.seq !== null) return !room.log.seqs.has(item.seq);
      if (item.state !== 'unconfirmed' || !this.connection.online && this.connection.state.name !== 'resuming') return true;
      const arrived = room.log.messages.some((m) => m.seq > item.afterSeq && m.from === this.user && m.text === item.text);
      if (!arrived) {
        item.state = 'failed';
        item.error = 'not sent: the connection dropped first';
      }
      return !arrived;
    });
    if (room.outbox.length !== before || room.outbox.some((i) => i.state === 'failed')) this.onChange('outbox', room.name);
  }

  // Sends a direct message. It shows when the server sends it back (to every connection of
  // the user); the promise rejects with the server's refusal.
  dm(to, text) {
    this.sync.conversation(to);
    return this.connection.request({ type: 'dm', to, text });
  }

  typing(name) {
    const room = this.rooms.get(name);
    const now = Date.now();
    if (!room || now - room.lastTypingSent < TYPING_SENT_EVERY_MS) return;
    room.lastTypingSent = now;
    this.connection.send({ type: 'typing', room: name });
  }

  // Asks for the page of messages before the oldest held. Resolves with the added messages.
  async loadOlder(name) {
    const room = this.rooms.get(name);
    if (!room || room.loadingOlder || !room.log.olderAvailable || room.log.firstSeq === null) return [];
    room.loadingOlder = true;
    try {
      const page = await this.connection.request({ type: 'history', room: name, before: room.log.firstSeq, limit: HISTORY_PAGE });
      if (page.messages.length < HISTORY_PAGE) room.log.olderAvailable = false;
      const added = this.addToLog(room, page.messages);
      this.onChange('older', { room: name, added });
      return added;
    } finally {
      room.loadingOlder = false;
    }
  }

  typingIn(name) {
    const room = this.rooms.get(name);
    if (!room) return [];
    const now = Date.now();
    return [...room.typing].filter(([, until]) => until > now).map(([user]) => user);
  }

  // The directory (every room with its member count, and everyone online). Also the
  // connection's heartbeat: it is asked every 20 s, and no answer drops the socket.
  async refreshDirectory(connection = this.connection, resuming = false) {
    const [rooms, users] = await Promise.all([
      connection.request({ type: 'rooms' }, { whileResuming: resuming }),
      connection.request({ type: 'users' }, { whileResuming: resuming }),
    ]);
    this.directory = rooms.rooms;
    this.online = users.users;
    this.onChange('directory');
  }

  // Refreshes the directory soon; calls close together make one request.
  scheduleDirectoryRefresh() {
    clearTimeout(this.directoryTimer);
    this.directoryTimer = setTimeout(() => {
      if (this.connection && this.connection.online) this.refreshDirectory().catch(() => {});
    }, 300);
  }

  onEvent(m) {
    switch (m.type) {
      case 'message': case 'moderation': case 'edited': case 'deleted': {
        const room = this.rooms.get(m.room);
        if (!room) return;
        const added = this.addToLog(room, [m]);
        if (added.length) {
          this.sync.marks.seen(keyOf('room', m.room), m.seq);
          if (m.type === 'message') {
            room.typing.delete(m.from);
            this.settleOutbox(room);
          }
          if (m.type === 'moderation' && room.moderation.apply(m)) this.onChange('moderation', m.room);
          this.onChange('message', { room: m.room, added });
        }
        return;
      }
      case 'left': {
        // Without `re`: removed from the room by a kick or a ban (a `system` notice says why).
        if (!this.rooms.has(m.room)) return;
        this.rooms.delete(m.room);
        if (!this.sync.keepsHistory) this.sync.marks.forget(keyOf('room', m.room));
        this.onChange('removed', m.room);
        this.onChange('rooms');
        this.scheduleDirectoryRefresh();
        return;
      }
      case 'presence': {
        const room = this.rooms.get(m.room);
        if (!room) return;
        if (m.event === 'join') room.members.add(m.user); else room.members.delete(m.user);
        room.typing.delete(m.user);
        this.onChange('members', m.room);
        this.scheduleDirectoryRefresh();
        return;
      }
      case 'typing': {
        const room = this.rooms.get(m.room);
        if (!room) return;
        room.typing.set(m.user, Date.now() + TYPING_SHOWN_MS);
        this.onChange('typing', m.room);
        return;
      }
      case 'dm':
        this.sync.onDm(m);
        return;
      case 'read':
        this.sync.onRead(m);
        return;
      case 'joined': {
        // Sent by the server without a request when a room's history starts over under us: a
        // node of a cluster that lost its Redis numbers messages alone (a new epoch), and
        // takes the cluster's history back when Redis returns. What we hold is replaced.
        const room = this.rooms.get(m.room);
        if (!room) return;
        room.members = new Set(m.members);
        room.moderation = RoomModeration.fromJoined(m);
        if (m.epoch !== room.log.epoch) {
          if (room.log.epoch !== null) this.startOver(room);
          room.log.reset(m.epoch);
        }
        const added = this.addToLog(room, m.history);
        room.log.olderAvailable = room.log.firstSeq !== null && room.log.firstSeq > 1;
        if (room.log.lastSeq !== null) {
          this.sync.marks.baseline(keyOf('room', room.name), room.log.lastSeq);
          this.sync.marks.seen(keyOf('room', room.name), room.log.lastSeq);
        }
        this.settleOutbox(room);
        this.onChange('members', room.name);
        this.onChange('moderation', room.name);
        this.onChange('joined', { room: room.name, added, firstJoin: false });
        return;
      }
      case 'system':
        this.onChange('notice', m.text);
        return;
      default:
        return;  // replies that came after their request gave up, and types newer than this page
    }
  }
}
