// parley's JavaScript client: one ES module, no dependencies, for browsers and Node.js (22+, or
// 20 with --experimental-websocket, or any WebSocket class passed in). The chat page served by
// parleyd runs on it too.
//
// It keeps one WebSocket to parleyd that comes back by itself: requests are numbered and each
// reply (`re`) settles its promise; after every drop it waits (Backoff), reconnects, logs in
// again and rejoins each room with the last seq it holds (join `after` + `epoch`), so the
// server sends exactly what was missed; where it cannot send all of it, the gap is paged in
// with `history after`. Every numbered event of a room goes through its RoomLog, which drops
// seqs already held: no duplicates, no gaps, in seq order. The protocol is docs/protocol.md.

// ---- errors ---------------------------------------------------------------------------------

// The server refused a request: `code` is the protocol's error code (`not_in_room`, ...).
export class ServerError extends Error {
  constructor(reply) {
    super(reply.message || reply.code);
    this.name = 'ServerError';
    this.code = reply.code;
    this.reply = reply;
  }
}

// The socket went away before the reply came (or there was none): whether a say arrived is
// then told by the rejoin's catch-up.
export class Disconnected extends Error {
  constructor() { super('not connected'); this.name = 'Disconnected'; this.code = 'disconnected'; }
}

export class Timeout extends Error {
  constructor() { super('no reply from the server'); this.name = 'Timeout'; this.code = 'timeout'; }
}

// ---- Backoff ----------------------------------------------------------------------------------

// Delays between reconnection attempts: doubling from base to cap, each drawn at random from
// the upper half of its step, so that a thousand clients dropped by one restart do not all
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

// ---- RoomLog ----------------------------------------------------------------------------------

// The numbered events of one room (or direct conversation) as the client holds them: ordered
// by seq, each seq at most once, whatever order and overlap they arrive in (live events, a
// join's history, pages back, the catch-up after a reconnect). applyChanges() brings the
// messages that `edited` and `deleted` events point at up to date.
export class RoomLog {
  constructor() {
    this.epoch = null;       // the life of the room's history these seqs belong to
    this.messages = [];      // oldest first
    this.seqs = new Set();
    this.olderAvailable = true;  // false once a page back came up short
  }

  get lastSeq() { return this.messages.length ? this.messages[this.messages.length - 1].seq : null; }
  get firstSeq() { return this.messages.length ? this.messages[0].seq : null; }

  // Forgets everything: the history started a new life (another epoch), so the seqs held mean
  // nothing any more.
  reset(epoch) {
    this.epoch = epoch;
    this.messages = [];
    this.seqs = new Set();
    this.olderAvailable = true;
  }

  // Adds events in any order; returns the ones that were new, oldest first.
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
    if (last === null || fresh[0].seq > last) this.messages.push(...fresh);  // the common case
    else this.messages = mergeBySeq(this.messages, fresh);
    return fresh;
  }

  // Applies the `edited` and `deleted` events among `fresh` (what add() just returned) to the
  // messages they point at; returns the messages changed, in seq order. A message that came in
  // the same batch is left alone (the server sent it as it is now, after those events), and so
  // is one not held (when it comes, it comes as it is now).
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

  // The event just older than seq (for a day or sender break); null at the start.
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

// Binary search: the index of the event with this seq, or -1.
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

// ---- Connection -------------------------------------------------------------------------------

const OPEN = 1;   // WebSocket.OPEN, the same in every implementation

// One WebSocket that comes back by itself. After every open it runs the caller's `resume`
// step (log in, rejoin) before it reports itself online; a heartbeat request every
// heartbeatMs finds a network that went away without a close (a phone changing networks).
export class Connection {
  // resume(connection): async; throws to refuse the connection: an error for which
  // fatal(error) is true ends the retries, any other is retried. onEvent(message): every
  // server message that is not a reply. onState(state): each change of this.state.
  constructor(url, { resume, onEvent, onState, onHeartbeat, fatal = () => false, WebSocket: Socket = globalThis.WebSocket,
                     backoff = new Backoff(), replyTimeoutMs = 15000, heartbeatMs = 20000 }) {
    if (typeof Socket !== 'function') throw new TypeError('no WebSocket class: pass one as the WebSocket option');
    Object.assign(this, { url, resume, onEvent, onState, onHeartbeat, fatal, Socket, backoff, replyTimeoutMs, heartbeatMs });
    this.socket = null;
    this.nextId = 1;
    this.pending = new Map();   // id -> {resolve, reject, timer}
    this.retryTimer = null;
    this.heartbeatTimer = null;
    this.stopped = false;
    // {name: 'connecting' | 'resuming' | 'online' | 'waiting' | 'stopped', retryAt, reason}
    this.state = { name: 'connecting' };
  }

  start() {
    this.stopped = false;
    this.open();
  }

  // Ends the connection for good (log out, kicked, refused login: `error`, the refusal).
  stop(reason, error) {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.dropSocket(1000);
    this.setState({ name: 'stopped', reason, ...(error ? { error } : {}) });
  }

  // Skips the rest of the wait and reconnects now.
  retryNow() {
    if (this.state.name !== 'waiting') return;
    clearTimeout(this.retryTimer);
    this.open();
  }

  get online() { return this.state.name === 'online'; }

  // Sends a request with an id; resolves with the reply, rejects with a ServerError,
  // Disconnected (the socket went away first) or Timeout.
  request(message, { whileResuming = false } = {}) {
    const ready = this.socket && this.socket.readyState === OPEN &&
                  (this.state.name === 'online' || (whileResuming && this.state.name === 'resuming'));
    if (!ready) return Promise.reject(new Disconnected());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Timeout());
      }, this.replyTimeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.socket.send(JSON.stringify({ ...message, id }));
    });
  }

  // Sends something that has no reply (typing notices); dropped when offline.
  send(message) {
    if (this.online) this.socket.send(JSON.stringify(message));
  }

  open() {
    this.setState({ name: 'connecting' });
    let socket;
    try {
      socket = new this.Socket(this.url);
    } catch (e) {
      this.scheduleRetry(String(e.message || e));
      return;
    }
    this.socket = socket;
    socket.onopen = () => this.onOpen(socket);
    socket.onmessage = (event) => this.onMessage(socket, event);
    socket.onclose = (event) => this.onClose(socket, event);
  }

  async onOpen(socket) {
    if (socket !== this.socket) return;
    this.setState({ name: 'resuming' });
    try {
      await this.resume(this);
    } catch (e) {
      if (socket !== this.socket) return;
      if (this.fatal(e)) {
        this.stop(e.message, e);
      } else {
        this.dropSocket(1000);
        this.scheduleRetry(e.message);
      }
      return;
    }
    if (socket !== this.socket) return;
    this.backoff.reset();
    this.setState({ name: 'online' });
    this.startHeartbeat(socket);
  }

  onMessage(socket, event) {
    if (socket !== this.socket) return;
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;  // the server only sends JSON text
    }
    if (message.re !== undefined && this.pending.has(message.re)) {
      const { resolve, reject, timer } = this.pending.get(message.re);
      this.pending.delete(message.re);
      clearTimeout(timer);
      if (message.type === 'error') reject(new ServerError(message)); else resolve(message);
      return;
    }
    this.onEvent(message);
  }

  onClose(socket, event) {
    if (socket !== this.socket) return;
    this.socket = null;
    this.failPending();
    clearInterval(this.heartbeatTimer);
    if (this.stopped) return;
    if (event.code === 4000) {
      // Kicked by an administrator: coming straight back would defeat the point.
      this.stop(`removed by an administrator${event.reason ? ': ' + event.reason : ''}`);
      return;
    }
    this.scheduleRetry(describeClose(event));
  }

  scheduleRetry(reason) {
    if (this.stopped) return;
    const delay = this.backoff.next();
    this.setState({ name: 'waiting', retryAt: Date.now() + delay, reason });
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.open(), delay);
  }

  startHeartbeat(socket) {
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = setInterval(() => {
      if (socket !== this.socket || !this.online) return;
      const probe = this.onHeartbeat ? this.onHeartbeat(this) : this.request({ type: 'users' });
      probe.catch((e) => {
        if (socket === this.socket && !(e instanceof ServerError)) this.dropSocket(4001);
      });
    }, this.heartbeatMs);
  }

  // Closes the current socket without waiting for the close handshake; onClose will not run.
  dropSocket(code) {
    const socket = this.socket;
    if (!socket) return;
    this.socket = null;
    clearInterval(this.heartbeatTimer);
    this.failPending();
    socket.onopen = socket.onmessage = socket.onclose = null;
    try { socket.close(code === 1000 ? 1000 : 4001); } catch { /* already closing */ }
    if (code !== 1000 && !this.stopped) this.scheduleRetry('the server stopped answering');
  }

  failPending() {
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(new Disconnected());
    }
    this.pending.clear();
  }

  setState(state) {
    this.state = state;
    this.onState(state);
  }
}

function describeClose(event) {
  switch (event.code) {
    case 1001: return 'the server is restarting';
    case 1006: return 'the connection was lost';
    case 1008: return event.reason || 'the server closed the connection';
    default: return event.reason || `the connection closed (${event.code})`;
  }
}

// ---- ParleyClient -----------------------------------------------------------------------------

export const HISTORY_PAGE = 50;
const GAP_PAGE = 500;               // the server's largest page
const TYPING_SENT_EVERY_MS = 2500;  // a typing notice at most this often per room

// A room this client is in: its log, its members as last heard, the `joined` it last got.
// In a big room `members` starts as the first names of the sorted list (joined lists at most
// rooms.joined_members_max) and grows as loadMoreMembers pages in the rest; memberCount is
// always the whole room's.
export class Room {
  constructor(name) {
    this.name = name;
    this.log = new RoomLog();
    this.members = new Set();
    this.memberCount = 0;
    this.membersComplete = true;   // false while names of the sorted list are still to page in
    this.membersPagedTo = null;    // the last name of the sorted list paged in so far
    this.joined = null;
    this.loadingOlder = false;
    this.lastTypingSent = 0;
  }
}

// A chat client: log in, rooms, says with acks, direct messages, history, typing, and the
// reconnect with catch-up. Events (on(type, listener)), each listener called with one value:
//   state       {name, retryAt?, reason?}: connecting, resuming, online, waiting, stopped
//   welcome     the login's reply, after every (re)login
//   joined      {room, added, firstJoin, unasked, reply}: a join or rejoin done (added: events
//               new here; unasked: a `joined` the server sent by itself, see onEvent)
//   messages    {room, added}: live numbered events of a room (message, moderation, edited,
//               deleted), each seq once and in order
//   revised     {room, messages}: held messages changed in place by an edit or a delete
//   older       {room, added}: a page back added by loadOlder
//   reset       room name: the room's history started a new life; what was held is gone
//   removed     {room, reason, rejoin}: out of a room by a kick or a ban, or refused at a
//               rejoin (rejoin: true)
//   members     {room, added}: names paged in by loadMoreMembers
//   presence, presence_count, typing, dm, read, system, event: the server's events as they come
//               (`event`: any other type, for protocol additions this version does not know)
export class ParleyClient {
  // options: user, token (token mode), rooms (joined at every login), WebSocket (a class, for
  // Node.js without a global one), backoff ({base, cap} or a Backoff), replyTimeoutMs,
  // heartbeatMs, heartbeat (async (connection) => ...: the request that proves the link is
  // alive), afterResume (async (connection) => ...: more catch-up before `online`),
  // createRoom (name => a Room or a subclass of it, for an app that keeps more per room).
  constructor(url, options = {}) {
    this.url = url;
    this.options = options;
    this.user = options.user ?? null;
    this.token = options.token || null;
    this.createRoom = options.createRoom || ((name) => new Room(name));
    this.rooms = new Map();         // joined rooms, in the order they were joined
    for (const name of options.rooms || []) this.rooms.set(name, this.createRoom(name));
    this.welcome = null;
    this.connection = null;
    this.loggedInOnce = false;
    this.listeners = new Map();
  }

  on(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type).add(listener);
    return () => this.off(type, listener);
  }

  off(type, listener) { this.listeners.get(type)?.delete(listener); }

  emit(type, value) {
    for (const listener of [...(this.listeners.get(type) || [])]) listener(value);
  }

  get state() { return this.connection ? this.connection.state : { name: 'stopped' }; }
  get online() { return Boolean(this.connection && this.connection.online); }

  // Connects and logs in; resolves with the welcome. Rejects when the first login is refused
  // (bad name, name taken, bad token: a ServerError with its code): the caller's to fix. Later drops are retried without
  // end, and only a refused token stops them then.
  connect(user = this.user, token = this.token) {
    this.user = user;
    this.token = token || null;
    if (this.connection) this.connection.stop('reconnecting');
    const { backoff } = this.options;
    return new Promise((resolve, reject) => {
      this.connection = new Connection(this.url, {
        WebSocket: this.options.WebSocket,
        backoff: backoff instanceof Backoff ? backoff : new Backoff(backoff),
        replyTimeoutMs: this.options.replyTimeoutMs,
        heartbeatMs: this.options.heartbeatMs,
        resume: (c) => this.resume(c),
        onEvent: (m) => this.onEvent(m),
        onHeartbeat: this.options.heartbeat,
        onState: (s) => {
          if (s.name === 'online' && !this.loggedInOnce) {
            this.loggedInOnce = true;
            resolve(this.welcome);
          }
          if (s.name === 'stopped' && !this.loggedInOnce) reject(s.error || new Error(s.reason));
          this.emit('state', s);
        },
        fatal: (e) => e instanceof ServerError &&
          (e.code === 'unauthorized' || (!this.loggedInOnce && e.code !== 'rate_limited')),
      });
      this.connection.start();
    });
  }

  // Ends the connection for good.
  close(reason = 'closed') { if (this.connection) this.connection.stop(reason); }

  retryNow() { if (this.connection) this.connection.retryNow(); }

  // Any request; resolves with the reply (rejects: ServerError, Disconnected, Timeout).
  request(message) {
    return this.connection ? this.connection.request(message) : Promise.reject(new Disconnected());
  }

  async resume(connection) {
    const reply = await connection.request({ type: 'login', user: this.user, ...(this.token ? { token: this.token } : {}) },
                                           { whileResuming: true });
    this.user = reply.user;
    this.welcome = reply;
    this.emit('welcome', reply);
    for (const room of [...this.rooms.values()]) {
      try {
        await this.catchUp(connection, room);
      } catch (e) {
        if (!(e instanceof ServerError)) throw e;
        // The room refuses us now (made private, full, banned): let it go.
        this.rooms.delete(room.name);
        this.emit('removed', { room: room.name, reason: `could not rejoin ${room.name}: ${e.message}`, rejoin: true });
      }
    }
    if (this.options.afterResume) await this.options.afterResume(connection);
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
    this.takeJoined(room, joined);
    let added = this.addToLog(room, joined.history);
    if (request.after !== undefined && joined.recovered === false && joined.epoch === request.epoch) {
      // More was missed than the join sent back: page forward from what we hold up to where
      // the join's history starts.
      added = added.concat(await this.fillGap(connection, room, heldSeq, joined.history));
    }
    if (request.after === undefined) room.log.olderAvailable = room.log.firstSeq !== null && room.log.firstSeq > 1;
    this.emit('joined', { room: room.name, added, firstJoin: request.after === undefined, reply: joined });
  }

  // A `joined` (the reply, or one the server sends unasked): members, and a new epoch
  // replaces what was held.
  takeJoined(room, joined) {
    const listed = joined.members || [];
    room.members = new Set(listed);
    room.memberCount = typeof joined.member_count === 'number' ? joined.member_count : listed.length;
    room.membersComplete = !joined.members_truncated;
    room.membersPagedTo = listed.length ? listed[listed.length - 1] : null;
    room.joined = joined;
    if (joined.epoch !== room.log.epoch) {
      const wasHeld = room.log.epoch !== null;
      room.log.reset(joined.epoch);
      if (wasHeld) this.emit('reset', room.name);
    }
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

  // Joins a room; resolves with the Room once its log is there. Refused: rejects, and the
  // room is not kept (a drop meanwhile keeps it: the reconnect joins it).
  async join(name) {
    if (!this.rooms.has(name)) this.rooms.set(name, this.createRoom(name));
    const room = this.rooms.get(name);
    try {
      if (!this.connection) throw new Disconnected();
      await this.catchUp(this.connection, room);
    } catch (e) {
      if (!(e instanceof Disconnected)) this.rooms.delete(name);
      throw e;
    }
    return room;
  }

  async leave(name) {
    if (!this.rooms.has(name)) return;
    try {
      await this.request({ type: 'leave', room: name });
    } catch (e) {
      if (!(e instanceof ServerError && e.code === 'not_in_room')) throw e;
    }
    this.rooms.delete(name);
  }

  // Adds a batch of a room's events to its log and applies the edits and deletes among them;
  // returns what was new.
  addToLog(room, batch) {
    const added = room.log.add(batch || []);
    const revised = room.log.applyChanges(added);
    if (revised.length) this.emit('revised', { room: room.name, messages: revised });
    return added;
  }

  // Says something in a room; resolves with the ack ({seq, ...}) once the server numbered it.
  // A Disconnected rejection leaves it open whether it arrived: the rejoin's catch-up brings
  // it if it did.
  say(room, text) { return this.request({ type: 'say', room, text }); }

  // A direct message; resolves with the ack.
  dm(to, text) { return this.request({ type: 'dm', to, text }); }

  // Tells a room this user is typing; at most once every 2.5 s per room, dropped offline.
  typing(name) {
    const room = this.rooms.get(name);
    const now = Date.now();
    if (!room || !this.connection || now - room.lastTypingSent < TYPING_SENT_EVERY_MS) return;
    room.lastTypingSent = now;
    this.connection.send({ type: 'typing', room: name });
  }

  // A page of a room's history ({before} or {after} a seq, limit up to 500); the reply's
  // `messages`. For a joined room they are added to its log too.
  async history(name, { before, after, limit = HISTORY_PAGE } = {}) {
    const page = await this.request({ type: 'history', room: name, limit, ...(before !== undefined ? { before } : {}),
                                      ...(after !== undefined ? { after } : {}) });
    const room = this.rooms.get(name);
    if (room) this.addToLog(room, page.messages);
    return page.messages;
  }

  // The page before the oldest event held of a joined room; resolves with what was added.
  async loadOlder(name, limit = HISTORY_PAGE) {
    const room = this.rooms.get(name);
    if (!room || room.loadingOlder || !room.log.olderAvailable || room.log.firstSeq === null) return [];
    room.loadingOlder = true;
    try {
      const page = await this.request({ type: 'history', room: name, before: room.log.firstSeq, limit });
      if (page.messages.length < limit) room.log.olderAvailable = false;
      const added = this.addToLog(room, page.messages);
      this.emit('older', { room: name, added });
      return added;
    } finally {
      room.loadingOlder = false;
    }
  }

  // Pages in the next names of a big room's sorted member list (after those held); resolves
  // with the names added. Nothing to do once the list is complete.
  async loadMoreMembers(name, limit = 100) {
    const room = this.rooms.get(name);
    if (!room || room.membersComplete) return [];
    const after = room.membersPagedTo;
    const page = await this.request({ type: 'members', room: name, limit, ...(after !== null ? { after } : {}) });
    if (this.rooms.get(name) !== room) return [];
    const added = page.members.filter((user) => !room.members.has(user));
    for (const user of added) room.members.add(user);
    if (page.members.length) room.membersPagedTo = page.members[page.members.length - 1];
    room.membersComplete = !page.more;
    room.memberCount = page.member_count;
    this.emit('members', { room: name, added });
    return added;
  }

  // A page of a stored direct conversation (token mode): the reply's `messages`.
  async dmHistory(peer, { before, after, limit = HISTORY_PAGE } = {}) {
    const page = await this.request({ type: 'dm_history', with: peer, limit, ...(before !== undefined ? { before } : {}),
                                      ...(after !== undefined ? { after } : {}) });
    return page.messages;
  }

  onEvent(m) {
    switch (m.type) {
      case 'message': case 'moderation': case 'edited': case 'deleted': {
        const room = this.rooms.get(m.room);
        if (!room) return;
        const added = this.addToLog(room, [m]);
        if (added.length) this.emit('messages', { room: m.room, added });
        return;
      }
      case 'left': {
        // Without `re`: removed from the room by a kick or a ban (a `system` notice says why).
        if (!this.rooms.delete(m.room)) return;
        this.emit('removed', { room: m.room, reason: m.reason || 'removed from the room' });
        return;
      }
      case 'presence': {
        // Never about ourselves; a join is a new member, a leave one fewer (whether or not the
        // name was among those paged in).
        const room = this.rooms.get(m.room);
        if (room) {
          if (m.event === 'join') {
            room.members.add(m.user);
            room.memberCount += 1;
          } else {
            room.members.delete(m.user);
            room.memberCount = Math.max(room.members.size, room.memberCount - 1);
          }
        }
        this.emit('presence', m);
        return;
      }
      case 'presence_count': {
        // A big room's count, instead of each join and leave: the names heard so far are no
        // longer the whole list, which loadMoreMembers pages in again from its start.
        const room = this.rooms.get(m.room);
        if (room && typeof m.count === 'number') {
          room.memberCount = m.count;
          if (room.membersComplete && m.count !== room.members.size) {
            room.membersComplete = false;
            room.membersPagedTo = null;
          }
        }
        this.emit('presence_count', m);
        return;
      }
      case 'joined': {
        // Sent without a request when a room's history starts over under us: a node of a
        // cluster that lost its Redis numbers messages alone (a new epoch), and takes the
        // cluster's history back when Redis returns. What we hold is replaced.
        const room = this.rooms.get(m.room);
        if (!room) return;
        this.takeJoined(room, m);
        const added = this.addToLog(room, m.history);
        room.log.olderAvailable = room.log.firstSeq !== null && room.log.firstSeq > 1;
        this.emit('joined', { room: room.name, added, firstJoin: false, unasked: true, reply: m });
        return;
      }
      case 'typing': case 'dm': case 'read': case 'system':
        this.emit(m.type, m);
        return;
      default:
        this.emit('event', m);  // replies that came after their request gave up, newer types
    }
  }
}
