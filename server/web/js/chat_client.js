// What the page knows about the chat, kept in step with the server by the parley client
// library (parley.js, clients/js/ in the source tree): the rooms this user is in (with their
// messages, members, moderation state, who is typing and what is still being sent), direct
// conversations, the room directory and who is online. It has no DOM: the view listens to
// `changed` notifications and reads the state.
//
// The library reconnects, logs in again and rejoins each room from the last seq held, so each
// room's log has every message once and in order; this adds what the page shows on top: the
// outbox of says not yet confirmed, typing notices that expire, each room's RoomModeration
// (taken whole from each `joined`, then kept by its `moderation` events), and the direct
// conversations and read markers of ConversationSync (this.sync).

import { Disconnected, ParleyClient, Room, ServerError } from './parley.js';
import { ConversationSync } from './conversation_sync.js';
import { keyOf } from './conversations.js';
import { RoomModeration } from './room_moderation.js';

const TYPING_SHOWN_MS = 4000;
// The room list and who is online are asked for again this often while the page is visible
// (and whenever the user goes to join a room or write to someone).
const DIRECTORY_EVERY_MS = 10000;

// A joined room with what the page keeps beside the library's log and members.
class JoinedRoom extends Room {
  constructor(name) {
    super(name);
    this.moderation = new RoomModeration();
    this.typing = new Map();     // user -> time the notice expires
    this.outbox = [];            // says not yet confirmed: {key, text, state, afterSeq, error}
  }
}

export class ChatClient {
  constructor({ wsUrl, onChange }) {
    this.wsUrl = wsUrl;
    this.onChange = onChange;    // (what, detail) => void
    this.parley = this.makeParley([]);
    this.sync = new ConversationSync(this);   // direct conversations, read markers
    this.directory = [];         // [{name, members}] as the server last listed them
    this.online = [];            // user names
    this.nextKey = 1;
    this.directoryTimer = null;
    this.directoryInterval = setInterval(() => {
      if (document.visibilityState === 'visible') this.scheduleDirectoryRefresh();
    }, DIRECTORY_EVERY_MS);
  }

  get user() { return this.parley.user; }
  set user(user) { this.parley.user = user; }
  get rooms() { return this.parley.rooms; }
  get connection() { return this.parley.connection; }
  set connection(connection) { this.parley.connection = connection; }  // for tests
  get loggedInOnce() { return this.parley.loggedInOnce; }
  get state() { return this.parley.state; }
  get conversations() { return this.sync.conversations; }

  makeParley(rooms) {
    const parley = new ParleyClient(this.wsUrl, {
      rooms,
      createRoom: (name) => new JoinedRoom(name),
      heartbeat: () => this.refreshDirectory(),
      // After the rooms: the conversations opened here, then the directory.
      afterResume: async (connection) => {
        await this.sync.catchUp(connection);
        await this.refreshDirectory(connection, true);
      },
    });
    parley.on('state', (s) => {
      if (s.name === 'online') this.sync.readThrottle.poke();  // markers read while offline
      this.onChange('state', s);
    });
    parley.on('welcome', (welcome) => this.sync.takeWelcome(welcome));
    parley.on('joined', (detail) => this.onJoined(detail));
    parley.on('reset', (name) => this.startOver(name));
    parley.on('revised', (detail) => this.onChange('revised', detail));
    parley.on('older', (detail) => this.onChange('older', detail));
    parley.on('messages', (detail) => this.onMessages(detail));
    parley.on('removed', (detail) => this.onRemoved(detail));
    parley.on('presence', (m) => this.onPresence(m));
    parley.on('presence_count', (m) => this.onChange('members', m.room));
    parley.on('members', ({ room }) => this.onChange('members', room));
    parley.on('typing', (m) => {
      const room = this.rooms.get(m.room);
      if (!room) return;
      room.typing.set(m.user, Date.now() + TYPING_SHOWN_MS);
      this.onChange('typing', m.room);
    });
    parley.on('dm', (m) => this.sync.onDm(m));
    parley.on('read', (m) => this.sync.onRead(m));
    parley.on('system', (m) => this.onChange('notice', m.text));
    return parley;
  }

  // Connects and logs in. Resolves once logged in; rejects with the server's error when the
  // first login is refused (bad name, name taken, bad token), so the login form can say why.
  // Later drops are retried without end; `rooms` are joined (or rejoined) each time.
  async logIn(user, token, rooms = []) {
    for (const name of rooms) if (!this.rooms.has(name)) this.rooms.set(name, new JoinedRoom(name));
    await this.parley.connect(user, token);
  }

  logOut() {
    this.parley.close('logged out');
    clearTimeout(this.directoryTimer);
    clearInterval(this.directoryInterval);
    this.sync.stop();
  }

  retryNow() { this.parley.retryNow(); }

  // A join or a rejoin brought the room's log up to date (or the server started it over).
  onJoined({ room: name, added, firstJoin, unasked, reply }) {
    const room = this.rooms.get(name);
    if (!room) return;
    // The room's state as of this join: the events in its history are in it already.
    room.moderation = RoomModeration.fromJoined(reply);
    const key = keyOf('room', name);
    const last = room.log.lastSeq;
    // Without a marker from the server, what a first join shows is the room's past, not news;
    // so is what a room started over with.
    if (firstJoin) this.sync.marks.baseline(key, last ?? 0);
    else if (unasked && last !== null) this.sync.marks.baseline(key, last);
    if (last !== null) this.sync.marks.seen(key, last);
    this.settleOutbox(room);
    if (unasked) {
      this.onChange('members', name);
      this.onChange('moderation', name);
    }
    this.onChange('joined', { room: name, added, firstJoin });
  }

  onMessages({ room: name, added }) {
    const room = this.rooms.get(name);
    if (!room) return;
    this.sync.marks.seen(keyOf('room', name), added[added.length - 1].seq);
    let moderationChanged = false;
    for (const m of added) {
      if (m.type === 'message') room.typing.delete(m.from);
      if (m.type === 'moderation' && room.moderation.apply(m)) moderationChanged = true;
    }
    if (added.some((m) => m.type === 'message')) this.settleOutbox(room);
    if (moderationChanged) this.onChange('moderation', name);
    this.onChange('message', { room: name, added });
  }

  // Out of a room: kicked or banned (a `system` notice says why), or refused at a rejoin.
  onRemoved({ room: name, reason, rejoin }) {
    if (rejoin) {
      this.onChange('notice', reason);
    } else {
      if (!this.sync.keepsHistory) this.sync.marks.forget(keyOf('room', name));
      this.onChange('removed', name);
    }
    this.onChange('rooms');
    this.scheduleDirectoryRefresh();
  }

  onPresence(m) {
    const room = this.rooms.get(m.room);
    if (!room) return;
    room.typing.delete(m.user);
    this.onChange('members', m.room);
    this.scheduleDirectoryRefresh();
  }

  async join(name) {
    try {
      await this.parley.join(name);
    } catch (e) {
      if (!(e instanceof Disconnected)) this.onChange('rooms');  // refused: not ours after all
      throw e;
    }
    this.onChange('rooms');
    this.scheduleDirectoryRefresh();
  }

  async leave(name) {
    if (!this.rooms.has(name)) return;
    await this.parley.leave(name);
    // Without a stored marker, what was counted here means nothing at a later join.
    if (!this.sync.keepsHistory) this.sync.marks.forget(keyOf('room', name));
    this.onChange('rooms');
    this.scheduleDirectoryRefresh();
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
    return this.parley.request({ type, room: name, ...fields });
  }

  setTopic(name, text) { return this.moderate(name, 'set_topic', { text }); }

  // Edits or deletes a message of a room; the change arrives as the room's `edited` or
  // `deleted` event.
  editMessage(name, seq, text) { return this.parley.request({ type: 'edit', room: name, seq, text }); }
  deleteMessage(name, seq) { return this.parley.request({ type: 'delete', room: name, seq }); }

  // A room's history started a new life: its seqs, and a marker counted in them, are void.
  startOver(name) {
    this.sync.marks.forget(keyOf('room', name));
    this.onChange('reset', name);
  }

  // Sends a message to a room. It shows in the room's outbox until the server numbers it;
  // if the connection drops first, the rejoin tells whether it arrived.
  say(name, text) {
    const room = this.rooms.get(name);
    if (!room) return;
    const item = { key: this.nextKey++, text, state: 'sending', afterSeq: room.log.lastSeq ?? 0, seq: null };
    room.outbox.push(item);
    this.onChange('outbox', name);
    this.parley.say(name, text).then((ack) => {
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
      if (item.state !== 'unconfirmed' || !this.parley.online && this.parley.state.name !== 'resuming') return true;
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
    return this.parley.dm(to, text);
  }

  typing(name) { this.parley.typing(name); }

  // Asks for the page of messages before the oldest held. Resolves with the added messages.
  loadOlder(name) { return this.parley.loadOlder(name); }

  // A big room's next page of members (its `members` notification redraws the list).
  loadMoreMembers(name) { return this.parley.loadMoreMembers(name, 200); }

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

  // A server event, handled as if it came over the connection (the tests feed events so).
  onEvent(m) { this.parley.onEvent(m); }
}
