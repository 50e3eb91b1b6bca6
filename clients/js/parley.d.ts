// Types of parley.js, the parley chat server's JavaScript client (docs/protocol.md describes
// the messages). Messages from the server are typed by their common fields; every field the
// server adds later is there at run time too.

export interface ServerMessage {
  type: string;
  [field: string]: unknown;
}

// A numbered event of a room: a message, or a moderation, edited or deleted event.
export interface RoomEvent extends ServerMessage {
  room: string;
  seq: number;
  ts?: number;
  from?: string;
  text?: string;
  edited?: boolean;
  deleted?: boolean;
  target?: number;
}

export interface DirectMessage extends ServerMessage {
  type: 'dm';
  from: string;
  to: string;
  text: string;
  seq?: number;   // present where the server stores conversations (token mode)
  ts: number;
}

export interface Welcome extends ServerMessage {
  type: 'welcome';
  user: string;
}

export interface Joined extends ServerMessage {
  type: 'joined';
  room: string;
  epoch: number;
  members: string[];
  member_count?: number;
  members_truncated?: boolean;
  history: RoomEvent[];
  recovered?: boolean;
}

export interface Ack extends ServerMessage {
  type: 'ack';
  seq?: number;
}

export class ServerError extends Error {
  constructor(reply: ServerMessage);
  /** The protocol's error code: not_in_room, username_taken, unauthorized, ... */
  code: string;
  reply: ServerMessage;
}

export class Disconnected extends Error {
  code: 'disconnected';
}

export class Timeout extends Error {
  code: 'timeout';
}

export interface BackoffOptions {
  base?: number;
  cap?: number;
  random?: () => number;
}

export class Backoff {
  constructor(options?: BackoffOptions);
  /** The delay before the next attempt, in milliseconds. */
  next(): number;
  reset(): void;
}

export class RoomLog {
  epoch: number | null;
  /** Oldest first, each seq once. */
  messages: RoomEvent[];
  seqs: Set<number>;
  olderAvailable: boolean;
  readonly lastSeq: number | null;
  readonly firstSeq: number | null;
  reset(epoch: number | null): void;
  add<T extends { seq?: number }>(batch: T[]): T[];
  applyChanges(fresh: RoomEvent[]): RoomEvent[];
  before(seq: number): RoomEvent | null;
}

export function indexOfSeq(messages: Array<{ seq: number }>, seq: number): number;

export type ConnectionStateName = 'connecting' | 'resuming' | 'online' | 'waiting' | 'stopped';

export interface ConnectionState {
  name: ConnectionStateName;
  /** When the next attempt starts (waiting). */
  retryAt?: number;
  reason?: string;
  /** The refusal that stopped it (stopped). */
  error?: Error;
}

export interface RequestOptions {
  whileResuming?: boolean;
}

// What the client needs of a WebSocket (the browser's, Node.js's, or the ws package's). The
// handlers take `any`: the client sets them and reads event.data, event.code and event.reason.
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: any) => void) | null;
  onmessage: ((event: any) => void) | null;
  onclose: ((event: any) => void) | null;
}

export type WebSocketClass = new (url: string) => WebSocketLike;

export interface ConnectionOptions {
  resume: (connection: Connection) => Promise<void>;
  onEvent: (message: ServerMessage) => void;
  onState: (state: ConnectionState) => void;
  onHeartbeat?: (connection: Connection) => Promise<unknown>;
  fatal?: (error: unknown) => boolean;
  WebSocket?: WebSocketClass;
  backoff?: Backoff;
  replyTimeoutMs?: number;
  heartbeatMs?: number;
}

export class Connection {
  constructor(url: string, options: ConnectionOptions);
  state: ConnectionState;
  readonly online: boolean;
  start(): void;
  stop(reason?: string, error?: Error): void;
  retryNow(): void;
  request<R extends ServerMessage = ServerMessage>(message: ServerMessage, options?: RequestOptions): Promise<R>;
  send(message: ServerMessage): void;
}

export const HISTORY_PAGE: number;

export class Room {
  constructor(name: string);
  name: string;
  log: RoomLog;
  /** The first names of the sorted list (joined's), and those paged in since or heard join. */
  members: Set<string>;
  /** Members in the whole room (every node of a cluster). */
  memberCount: number;
  /** False while names of a big room's sorted list remain to page in (loadMoreMembers). */
  membersComplete: boolean;
  membersPagedTo: string | null;
  /** The `joined` this room last got. */
  joined: Joined | null;
  loadingOlder: boolean;
}

export interface ParleyClientOptions {
  user?: string;
  token?: string;
  /** Rooms joined at every login. */
  rooms?: string[];
  /** A WebSocket class, where globalThis has none. */
  WebSocket?: WebSocketClass;
  backoff?: BackoffOptions | Backoff;
  replyTimeoutMs?: number;
  heartbeatMs?: number;
  heartbeat?: (connection: Connection) => Promise<unknown>;
  afterResume?: (connection: Connection) => Promise<void>;
  createRoom?: (name: string) => Room;
}

export interface ParleyEvents {
  state: ConnectionState;
  welcome: Welcome;
  joined: { room: string; added: RoomEvent[]; firstJoin: boolean; unasked?: boolean; reply: Joined };
  messages: { room: string; added: RoomEvent[] };
  revised: { room: string; messages: RoomEvent[] };
  older: { room: string; added: RoomEvent[] };
  reset: string;
  removed: { room: string; reason: string; rejoin?: boolean };
  members: { room: string; added: string[] };
  presence: ServerMessage & { room: string; user: string; event: 'join' | 'leave' };
  presence_count: ServerMessage & { room: string; count: number };
  typing: ServerMessage & { room: string; user: string };
  dm: DirectMessage;
  read: ServerMessage;
  system: ServerMessage & { text: string };
  event: ServerMessage;
}

export interface PageOptions {
  before?: number;
  after?: number;
  limit?: number;
}

export class ParleyClient {
  constructor(url: string, options?: ParleyClientOptions);
  user: string | null;
  rooms: Map<string, Room>;
  welcome: Welcome | null;
  connection: Connection | null;
  loggedInOnce: boolean;
  readonly state: ConnectionState;
  readonly online: boolean;
  on<K extends keyof ParleyEvents>(type: K, listener: (value: ParleyEvents[K]) => void): () => void;
  off<K extends keyof ParleyEvents>(type: K, listener: (value: ParleyEvents[K]) => void): void;
  connect(user?: string, token?: string): Promise<Welcome>;
  close(reason?: string): void;
  retryNow(): void;
  request<R extends ServerMessage = ServerMessage>(message: ServerMessage): Promise<R>;
  join(room: string): Promise<Room>;
  leave(room: string): Promise<void>;
  say(room: string, text: string): Promise<Ack>;
  dm(to: string, text: string): Promise<Ack>;
  typing(room: string): void;
  history(room: string, options?: PageOptions): Promise<RoomEvent[]>;
  loadOlder(room: string, limit?: number): Promise<RoomEvent[]>;
  loadMoreMembers(room: string, limit?: number): Promise<string[]>;
  dmHistory(peer: string, options?: PageOptions): Promise<DirectMessage[]>;
  onEvent(message: ServerMessage): void;
}
