// What the viewer may do in a room, by role, as the server decides it (docs/protocol.md,
// "Moderation" and "Edit and delete"): the page offers only these; the server still checks.
// No DOM.

const RANK = { member: 0, moderator: 1, owner: 2 };
const rank = (role) => RANK[role] ?? 0;

// Owners and moderators set the topic (and slow mode).
export function maySetTopic(viewerRole) { return rank(viewerRole) >= RANK.moderator; }

// The actions on another member of the room, in menu order: kick, ban and mute (or unmute)
// only over someone of a lower role (an owner over moderators and members, a moderator over
// members); role changes only for owners. [{action, label, role?}]
export function memberActions(viewerRole, targetRole, { muted = false } = {}) {
  const actions = [];
  if (rank(viewerRole) > rank(targetRole)) {
    actions.push({ action: 'kick', label: 'Kick' }, { action: 'ban', label: 'Ban' });
    actions.push(muted ? { action: 'unmute', label: 'Unmute' } : { action: 'mute', label: 'Mute' });
  }
  if (viewerRole === 'owner') {
    if (targetRole !== 'moderator') actions.push({ action: 'set_role', role: 'moderator', label: 'Make moderator' });
    if (targetRole !== 'member') actions.push({ action: 'set_role', role: 'member', label: 'Make member' });
  }
  return actions;
}

// Only the author edits a message (within the server's edit window, which the server checks).
export function mayEdit(viewer, message) {
  return message.type === 'message' && !message.deleted && message.from === viewer;
}

// The author, a moderator or an owner deletes a message.
export function mayDelete(viewer, viewerRole, message) {
  return message.type === 'message' && !message.deleted && (message.from === viewer || rank(viewerRole) >= RANK.moderator);
}
