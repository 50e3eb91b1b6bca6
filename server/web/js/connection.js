// One WebSocket to parleyd that comes back by itself. It numbers requests and matches each
// reply (`re`) to its request, and after every drop it waits (Backoff), reconnects and runs
// the caller's `resume` step (log in again, rejoin rooms) before it reports itself online.

import { Backoff } from './backoff.js';

export class ServerError extends Error {
  constructor(reply) {
    super(reply.message || reply.code);
    this.code = reply.code;
  }
}

export class Disconnected extends Error {
  constructor() { super('not connected'); this.code = 'disconnected'; }
}

const REPLY_TIMEOUT_MS = 15000;
// Ask the server something this often while connected; no answer in time means the network
// went away without a close (a phone changing networks), and the socket is dropped.
const HEARTBEAT_MS = 20000;

export class Connection {
  // url: ws:// or wss:// address. resume(connection): async, called after each open; throws to
  // refuse the connection: an error for which fatal(error) is true ends the retries, any other
  // is retried. onEvent(message): every server message that is not a reply. onState(state):
  // each change of this.state.
  constructor(url, { resume, onEvent, onState, onHeartbeat, fatal = () => false }) {
    this.url = url;
    this.resume = resume;
    this.onEvent = onEvent;
    this.onState = onState;
    this.onHeartbeat = onHeartbeat;
    this.fatal = fatal;
    this.backoff = new Backoff();
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

  // Ends the connection for good (log out, kicked, refused login).
  stop(reason) {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.dropSocket(1000);
    this.setState({ name: 'stopped', reason });
  }

  // Skips the rest of the wait and reconnects now (a "retry now" button, the browser coming online).
  retryNow() {
    if (this.state.name !== 'waiting') return;
    clearTimeout(this.retryTimer);
    this.open();
  }

  get online() { return this.state.name === 'online'; }

  // Sends a request with an id; resolves with the reply, rejects with a ServerError (the
  // server's error), Disconnected (the socket went away first) or a timeout.
  request(message, { whileResuming = false } = {}) {
    const ready = this.socket && this.socket.readyState === WebSocket.OPEN &&
                  (this.state.name === 'online' || (whileResuming && this.state.name === 'resuming'));
    if (!ready) return Promise.reject(new Disconnected());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error('no reply from the server'));
      }, REPLY_TIMEOUT_MS);
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
      socket = new WebSocket(this.url);
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
        this.stop(e.message);
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
      return;  // the server only sends JSON; nothing sensible to do with anything else
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
    }, HEARTBEAT_MS);
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
