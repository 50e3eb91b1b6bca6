// The moderation actions of POST /admin/moderate (admin_moderation.cpp): which fields each
// takes, which are destructive enough to confirm, and the request body from the form's values.

export const actions = [
  { name: 'kick', label: 'Kick from the room', fields: ['user', 'reason'], confirm: true },
  { name: 'ban', label: 'Ban', fields: ['user', 'reason', 'duration_s'], confirm: true },
  { name: 'unban', label: 'Unban', fields: ['user', 'reason'] },
  { name: 'mute', label: 'Mute', fields: ['user', 'reason', 'duration_s'], confirm: true },
  { name: 'unmute', label: 'Unmute', fields: ['user', 'reason'] },
  { name: 'set_role', label: 'Set role', fields: ['user', 'role'] },
  { name: 'set_topic', label: 'Set topic', fields: ['text'] },
  { name: 'set_slow_mode', label: 'Slow mode', fields: ['interval_s'] },
  { name: 'delete', label: 'Delete a message', fields: ['seq'], confirm: true },
];

export const actionNamed = (name) => actions.find((a) => a.name === name);

const numeric = new Set(['duration_s', 'interval_s', 'seq']);

// values: field -> the text typed. Only the action's own fields go in; empty optional ones
// stay out; numbers are sent as numbers (the API wants whole numbers). Throws with a message
// for the page when a number is not one.
export function moderationBody(room, actionName, values) {
  const action = actionNamed(actionName);
  if (!action) throw new Error(`unknown action ${actionName}`);
  const body = { room: room.trim(), action: action.name };
  for (const field of action.fields) {
    const raw = (values[field] ?? '').trim();
    if (raw === '') continue;
    if (numeric.has(field)) {
      const n = Number(raw);
      if (!Number.isInteger(n)) throw new Error(`${field} must be a whole number`);
      body[field] = n;
    } else {
      body[field] = raw;
    }
  }
  return body;
}

// The question asked before a destructive action.
export function confirmationOf(body) {
  switch (body.action) {
    case 'kick': return `Kick ${body.user} from #${body.room}?`;
    case 'ban': return `Ban ${body.user} from #${body.room}${body.duration_s ? ` for ${body.duration_s} s` : ' until unbanned'}?`;
    case 'mute': return `Mute ${body.user} in #${body.room}${body.duration_s ? ` for ${body.duration_s} s` : ' until unmuted'}?`;
    case 'delete': return `Delete message ${body.seq} of #${body.room}? Its text is removed for good.`;
    default: return `${body.action} in #${body.room}?`;
  }
}
