// The users and rooms lists, filtered by the text typed (a case-insensitive part of the name),
// each row with its actions. Rows are rebuilt only when what they show changed, so a poll never
// pulls a button from under the pointer.

// The names containing the filter text, case-insensitively.
export function matching(entries, filter) {
  const wanted = filter.trim().toLowerCase();
  return wanted === '' ? entries : entries.filter((e) => e.name.toLowerCase().includes(wanted));
}

function button(text, action, handler, danger = false) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  b.dataset.action = action;
  b.className = danger ? 'small danger' : 'small secondary';
  b.addEventListener('click', handler);
  return b;
}

function row(kind, name, detail, buttons) {
  const li = document.createElement('li');
  li.dataset[kind] = name;
  const label = document.createElement('span');
  label.className = 'entity-name';
  label.textContent = kind === 'room' ? `#${name}` : name;
  const info = document.createElement('span');
  info.className = 'entity-detail';
  info.textContent = detail;
  const tools = document.createElement('span');
  tools.className = 'entity-actions';
  tools.append(...buttons);
  li.append(label, info, tools);
  return li;
}

function empty(text) {
  const li = document.createElement('li');
  li.className = 'empty';
  li.textContent = text;
  return li;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

function fill(list, key, build) {
  if (list.dataset.shown === key) return;
  list.dataset.shown = key;
  list.replaceChildren(...build());
}

function names(datalist, entries) {
  fill(datalist, JSON.stringify(entries.map((e) => e.name)), () => entries.map((e) => new Option(e.name)));
}

// listed: { users: [{name, connections}], rooms: [{name, members}] } from the admin API.
export function renderLists(listed, filter, el, on) {
  const users = matching(listed.users, filter);
  const rooms = matching(listed.rooms, filter);
  const counted = (shown, all) => (shown === all ? `(${all})` : `(${shown} of ${all})`);
  el.userCount.textContent = counted(users.length, listed.users.length);
  el.roomCount.textContent = counted(rooms.length, listed.rooms.length);
  fill(el.userList, JSON.stringify([users, listed.users.length]), () => (users.length === 0
    ? [empty(listed.users.length === 0 ? 'Nobody is online.' : 'No user matches.')]
    : users.map((u) => row('user', u.name, plural(u.connections, 'connection'),
      [button('Kick', 'kick', () => on.kick(u.name), true)]))));
  fill(el.roomList, JSON.stringify([rooms, listed.rooms.length]), () => (rooms.length === 0
    ? [empty(listed.rooms.length === 0 ? 'No rooms.' : 'No room matches.')]
    : rooms.map((r) => row('room', r.name, plural(r.members, 'member'), [
      button('Announce', 'announce', () => on.announce(r.name)),
      button('Moderate', 'moderate', () => on.moderate(r.name)),
      button('Close', 'close', () => on.close(r.name), true),
    ]))));
  names(el.roomNames, listed.rooms);
  names(el.userNames, listed.users);
}
