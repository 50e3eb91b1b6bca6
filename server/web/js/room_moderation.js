// One room's moderation state as the page knows it: the topic, who is an owner or a moderator,
// who is banned or muted, and slow mode. It is taken whole from the room's `joined` and then
// kept by the room's live `moderation` events (docs/protocol.md, "Moderation"). No DOM.

export class RoomModeration {
  constructor() {
    this.topic = '';
    this.roles = new Map();      // user -> 'owner' | 'moderator' (everyone else is a member)
    this.bans = new Map();       // user -> {user, by, reason, until}
    this.mutes = new Map();
    this.slowModeS = 0;
  }

  // The state a `joined` carries (each field only when it is not empty).
  static fromJoined(joined) {
    const state = new RoomModeration();
    state.topic = typeof joined.topic === 'string' ? joined.topic : '';
    for (const [user, role] of Object.entries(joined.roles || {})) {
      if (role === 'owner' || role === 'moderator') state.roles.set(user, role);
    }
    for (const s of joined.bans || []) state.bans.set(s.user, sanction(s));
    for (const s of joined.mutes || []) state.mutes.set(s.user, sanction(s));
    state.slowModeS = Number(joined.slow_mode_s) || 0;
    return state;
  }

  roleOf(user) { return this.roles.get(user) || 'member'; }

  // A timed ban or mute ends at `until`; the server also sends an unban or unmute then.
  isMuted(user, now = Date.now()) { return active(this.mutes.get(user), now); }
  isBanned(user, now = Date.now()) { return active(this.bans.get(user), now); }

  // Applies one `moderation` event; returns whether anything the page keeps changed.
  apply(event) {
    switch (event.action) {
      case 'set_topic':
        this.topic = typeof event.topic === 'string' ? event.topic : '';
        return true;
      case 'set_role':
        if (event.role === 'owner' || event.role === 'moderator') this.roles.set(event.user, event.role);
        else this.roles.delete(event.user);
        return true;
      case 'ban': this.bans.set(event.user, sanction(event)); return true;
      case 'unban': return this.bans.delete(event.user);
      case 'mute': this.mutes.set(event.user, sanction(event)); return true;
      case 'unmute': return this.mutes.delete(event.user);
      case 'set_slow_mode':
        this.slowModeS = Number(event.interval_s) || 0;
        return true;
      default:
        return false;   // kick keeps nothing; actions newer than this page change nothing here
    }
  }
}

function sanction({ user, by, reason, until }) {
  return { user, by: by || '', reason: reason || '', until: typeof until === 'number' ? until : null };
}

function active(s, now) { return Boolean(s) && (s.until === null || s.until > now); }

const article = (role) => (role === 'owner' ? 'an owner' : role === 'moderator' ? 'a moderator' : 'a member');

// One line for a `moderation` event, as the room shows it ("olivia banned mike: spam").
// formatUntil(ms) words the end of a timed ban or mute.
export function describeModeration(event, formatUntil = (ms) => new Date(ms).toISOString()) {
  // An empty `by` is the server itself (a timed ban or mute ending); "@admin" the admin API.
  const by = !event.by ? 'the server' : event.by === '@admin' ? 'an administrator' : event.by;
  const reason = event.reason ? `: ${event.reason}` : '';
  const until = typeof event.until === 'number' ? ` until ${formatUntil(event.until)}` : '';
  switch (event.action) {
    case 'kick': return `${by} removed ${event.user} from the room${reason}`;
    case 'ban': return `${by} banned ${event.user}${until}${reason}`;
    case 'unban': return event.by ? `${by} lifted the ban on ${event.user}` : `the ban on ${event.user} ended`;
    case 'mute': return `${by} muted ${event.user}${until}${reason}`;
    case 'unmute': return event.by ? `${by} unmuted ${event.user}` : `the mute on ${event.user} ended`;
    case 'set_role': return `${by} made ${event.user} ${article(event.role)}`;
    case 'set_topic': return event.topic ? `${by} set the topic: ${event.topic}` : `${by} cleared the topic`;
    case 'set_slow_mode':
      return event.interval_s ? `${by} turned on slow mode: one message every ${event.interval_s} s`
        : `${by} turned off slow mode`;
    default: return `${by}: ${event.action}${event.user ? ` ${event.user}` : ''}`;
  }
}
