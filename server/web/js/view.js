// Draws the chat from ChatClient's state. Every text that came from a person (names, room
// names, messages) is put into the page with textContent, never as markup.

const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' });
const fullFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'medium' });
const dayOf = (ts) => new Date(ts).toDateString();

// A view is a room ({kind: 'room', name}) or a conversation with one person ({kind: 'dm', name}).
export class ChatView {
  constructor(client, { onViewChange }) {
    this.client = client;
    this.view = null;
    this.onViewChange = onViewChange;
    this.messages = $('messages');
    this.stateTimer = null;
    this.typingTimer = null;
  }

  // --- what is shown ---------------------------------------------------------------------------

  show(view) {
    this.view = view;
    const conversation = this.currentEntry();
    if (conversation) conversation.unread = 0;
    $('view-title').textContent = view ? (view.kind === 'room' ? `# ${view.name}` : `@ ${view.name}`) : '';
    const usable = Boolean(view);
    $('composer-text').disabled = !usable;
    this.updateSendButton();
    $('composer-text').placeholder = view
      ? `Message ${view.kind === 'room' ? '#' : '@'}${view.name} (Enter sends, Shift+Enter: new line)` : '';
    this.renderMessages();
    this.renderNav();
    this.renderMembers();
    this.renderTyping();
    this.closePanels();
    if (this.onViewChange) this.onViewChange(view);
  }

  currentEntry() {
    if (!this.view) return null;
    return this.view.kind === 'room' ? this.client.rooms.get(this.view.name) : this.client.conversations.get(this.view.name);
  }

  isCurrent(kind, name) { return this.view && this.view.kind === kind && this.view.name === name; }

  // --- messages --------------------------------------------------------------------------------

  renderMessages() {
    const box = this.messages;
    box.replaceChildren();
    const entry = this.currentEntry();
    if (!entry) {
      box.append(el('p', 'empty-hint', 'Join a room on the left, or pick someone to write to.'));
      return;
    }
    if (this.view.kind === 'room') {
      box.append(this.olderRow(entry));
      let previous = null;
      for (const m of entry.log.messages) {
        box.append(...this.messageNodes(m, previous));
        previous = m;
      }
      this.renderOutbox();
    } else {
      let previous = null;
      for (const m of entry.messages) {
        box.append(...this.messageNodes(m, previous));
        previous = m;
      }
    }
    box.scrollTop = box.scrollHeight;
  }

  olderRow(room) {
    const row = el('div', 'older-row');
    row.id = 'older-row';
    if (room.log.olderAvailable && room.log.firstSeq !== null) {
      const button = el('button', 'link-button', 'Load earlier messages');
      button.type = 'button';
      button.addEventListener('click', () => this.loadOlder());
      row.append(button);
    } else if (room.log.messages.length) {
      row.append(el('span', 'notice', 'This is the start of the room\'s history.'));
    }
    return row;
  }

  // The nodes for one message: a day heading when the day changes, then the message. A run
  // of messages from one sender shows the name once.
  messageNodes(m, previous) {
    const nodes = [];
    if (!previous || dayOf(previous.ts) !== dayOf(m.ts)) nodes.push(el('p', 'day-break', dayFormat.format(new Date(m.ts))));
    const row = el('article', 'msg');
    if (m.seq !== undefined) row.dataset.seq = String(m.seq);
    if (m.from === this.client.user) row.classList.add('mine');
    if (previous && previous.from === m.from && dayOf(previous.ts) === dayOf(m.ts) && m.ts - previous.ts < 5 * 60000) {
      row.classList.add('continued');
    }
    const meta = el('div', 'meta');
    meta.append(el('span', 'from', m.from));
    const time = el('time', '', timeFormat.format(new Date(m.ts)));
    time.dateTime = new Date(m.ts).toISOString();
    time.title = fullFormat.format(new Date(m.ts));
    meta.append(time);
    row.append(meta, el('p', 'text', m.text));
    row.setAttribute('aria-label', `${m.from} at ${timeFormat.format(new Date(m.ts))}`);
    nodes.push(row);
    return nodes;
  }

  nearBottom() { const b = this.messages; return b.scrollHeight - b.scrollTop - b.clientHeight < 80; }

  // New messages of the current room: appended when they are the newest, else a redraw.
  roomMessagesAdded(name, added, { older = false, unread = true } = {}) {
    const room = this.client.rooms.get(name);
    if (!room) return;
    if (!this.isCurrent('room', name)) {
      if (!older && unread) {
        room.unread += added.filter((m) => m.from !== this.client.user).length;
        this.renderNav();
      }
      return;
    }
    if (added.length === 0) {
      if (older) this.messages.querySelector('#older-row')?.replaceWith(this.olderRow(room));
      return;
    }
    const messages = room.log.messages;
    const lastAdded = added[added.length - 1];
    const appended = messages[messages.length - 1] === lastAdded &&
                     messages.length - added.length >= 0 && messages[messages.length - added.length] === added[0];
    if (older) {
      const box = this.messages;
      const fromBottom = box.scrollHeight - box.scrollTop;
      this.renderMessages();
      box.scrollTop = box.scrollHeight - fromBottom;  // keep what the reader was looking at in place
      return;
    }
    if (!appended) {
      this.renderMessages();
      return;
    }
    const stick = this.nearBottom();
    const box = this.messages;
    const outbox = [...box.querySelectorAll('.outbox')];
    outbox.forEach((n) => n.remove());
    let previous = room.log.before(added[0].seq);
    for (const m of added) {
      box.append(...this.messageNodes(m, previous));
      previous = m;
    }
    this.renderOutbox();
    if (stick || added.some((m) => m.from === this.client.user)) box.scrollTop = box.scrollHeight;
  }

  renderOutbox() {
    if (!this.view || this.view.kind !== 'room') return;
    const room = this.client.rooms.get(this.view.name);
    this.messages.querySelectorAll('.outbox').forEach((n) => n.remove());
    if (!room) return;
    for (const item of room.outbox) {
      const row = el('article', `msg mine outbox ${item.state}`);
      const meta = el('div', 'meta');
      meta.append(el('span', 'from', this.client.user));
      meta.append(el('span', 'status', item.state === 'sending' ? 'sending…' : item.error));
      row.append(meta, el('p', 'text', item.text));
      if (item.state === 'failed' || item.state === 'unconfirmed') {
        const retry = el('button', 'link-button', 'Send again');
        retry.type = 'button';
        retry.addEventListener('click', () => this.client.retry(room.name, item.key));
        const drop = el('button', 'link-button', 'Discard');
        drop.type = 'button';
        drop.addEventListener('click', () => this.client.discard(room.name, item.key));
        row.append(retry, drop);
      }
      this.messages.append(row);
    }
  }

  dmAdded(peer, message) {
    const conversation = this.client.conversations.get(peer);
    if (!this.isCurrent('dm', peer)) {
      if (message.from !== this.client.user) conversation.unread += 1;
      this.renderNav();
      return;
    }
    const list = conversation.messages;
    const stick = this.nearBottom();
    this.messages.querySelector('.empty-hint')?.remove();
    this.messages.append(...this.messageNodes(message, list.length > 1 ? list[list.length - 2] : null));
    if (stick || message.from === this.client.user) this.messages.scrollTop = this.messages.scrollHeight;
  }

  notice(text) {
    const stick = this.nearBottom();
    this.messages.append(el('p', 'notice', text));
    if (stick) this.messages.scrollTop = this.messages.scrollHeight;
  }

  async loadOlder() {
    if (!this.view || this.view.kind !== 'room') return;
    try {
      await this.client.loadOlder(this.view.name);
    } catch (e) {
      // `unavailable`: the server's storage did not answer; scrolling up again asks again.
      this.showComposerError(e.code === 'unavailable'
        ? 'earlier messages cannot be loaded just now; scroll up to try again'
        : `could not load earlier messages: ${e.message}`);
    }
  }

  // --- navigation ------------------------------------------------------------------------------

  renderNav() {
    const rooms = $('room-list');
    rooms.replaceChildren();
    const counts = new Map(this.client.directory.map((r) => [r.name, r.members]));
    const names = new Set([...this.client.rooms.keys(), ...counts.keys()]);
    for (const name of [...names].sort()) {
      const joined = this.client.rooms.get(name);
      const li = el('li');
      const button = el('button', `nav-item${joined ? '' : ' not-joined'}`);
      button.type = 'button';
      button.dataset.room = name;
      button.append(el('span', 'name', `# ${name}`));
      const members = joined ? joined.members.size : counts.get(name);
      if (joined && joined.unread) button.append(el('span', 'unread', String(joined.unread)));
      if (members !== undefined) {
        const count = el('span', 'count', String(members));
        count.title = `${members} ${members === 1 ? 'member' : 'members'}`;
        button.append(count);
      }
      button.setAttribute('aria-label', `${joined ? '' : 'join '}room ${name}, ${members ?? 0} members${joined && joined.unread ? `, ${joined.unread} unread` : ''}`);
      if (this.isCurrent('room', name)) button.setAttribute('aria-current', 'true');
      button.addEventListener('click', () => this.openRoom(name));
      li.append(button);
      if (joined) {
        const leave = el('button', 'leave-button', '×');
        leave.type = 'button';
        leave.title = `Leave ${name}`;
        leave.setAttribute('aria-label', `leave room ${name}`);
        leave.addEventListener('click', () => this.leaveRoom(name));
        li.append(leave);
      }
      rooms.append(li);
    }
    const dms = $('dm-list');
    dms.replaceChildren();
    for (const [peer, conversation] of this.client.conversations) {
      const li = el('li');
      const button = el('button', 'nav-item');
      button.type = 'button';
      button.dataset.peer = peer;
      button.append(el('span', 'name', `@ ${peer}`));
      if (conversation.unread) button.append(el('span', 'unread', String(conversation.unread)));
      if (!this.client.online.includes(peer)) button.append(el('span', 'count', 'offline'));
      if (this.isCurrent('dm', peer)) button.setAttribute('aria-current', 'true');
      button.addEventListener('click', () => this.show({ kind: 'dm', name: peer }));
      li.append(button);
      dms.append(li);
    }
    const names2 = $('online-names');
    names2.replaceChildren(...this.client.online.filter((u) => u !== this.client.user).map((u) => {
      const option = el('option');
      option.value = u;
      return option;
    }));
  }

  renderMembers() {
    const list = $('member-list');
    list.replaceChildren();
    const heading = $('members-heading');
    if (this.view && this.view.kind === 'dm') {
      heading.textContent = 'Conversation';
      for (const name of [this.client.user, this.view.name]) list.append(this.memberItem(name));
      return;
    }
    const room = this.view && this.client.rooms.get(this.view.name);
    heading.textContent = room ? `In # ${room.name} (${room.members.size})` : 'In this room';
    if (!room) return;
    for (const name of [...room.members].sort()) list.append(this.memberItem(name));
  }

  memberItem(name) {
    const li = el('li');
    if (name === this.client.user) {
      li.append(el('span', 'nav-item', `${name} (you)`));
      return li;
    }
    const button = el('button', 'nav-item');
    button.type = 'button';
    button.dataset.member = name;
    button.append(el('span', 'name', name));
    button.title = `Write to ${name}`;
    button.setAttribute('aria-label', `${name}: send a direct message`);
    button.addEventListener('click', () => this.openConversation(name));
    li.append(button);
    return li;
  }

  renderTyping() {
    const line = $('typing-line');
    clearTimeout(this.typingTimer);
    if (!this.view || this.view.kind !== 'room') {
      line.textContent = '';
      return;
    }
    const who = this.client.typingIn(this.view.name);
    line.textContent = who.length === 0 ? '' : who.length === 1 ? `${who[0]} is typing…`
      : who.length <= 3 ? `${who.join(', ')} are typing…` : 'several people are typing…';
    if (who.length) this.typingTimer = setTimeout(() => this.renderTyping(), 1000);
  }

  // --- actions ---------------------------------------------------------------------------------

  async openRoom(name) {
    if (!this.client.rooms.has(name)) {
      try {
        await this.client.join(name);
      } catch (e) {
        this.showComposerError(`could not join ${name}: ${e.message}`);
        return;
      }
    }
    this.show({ kind: 'room', name });
    $('composer-text').focus();
  }

  async leaveRoom(name) {
    try {
      await this.client.leave(name);
    } catch (e) {
      this.showComposerError(`could not leave ${name}: ${e.message}`);
      return;
    }
    if (this.isCurrent('room', name)) {
      const next = this.client.rooms.keys().next();
      this.show(next.done ? null : { kind: 'room', name: next.value });
    } else {
      this.renderNav();
    }
  }

  openConversation(peer) {
    this.client.conversation(peer);
    this.show({ kind: 'dm', name: peer });
    $('composer-text').focus();
  }

  showComposerError(text) { $('composer-error').textContent = text; }

  updateSendButton() {
    $('composer-send').disabled = !this.view || !this.client.connection || !this.client.connection.online;
  }

  // --- connection state ------------------------------------------------------------------------

  renderState(state) {
    const node = $('connection-state');
    node.dataset.state = state.name;
    clearInterval(this.stateTimer);
    $('retry-now').hidden = state.name !== 'waiting';
    const describe = () => {
      switch (state.name) {
        case 'connecting': return 'Connecting…';
        case 'resuming': return 'Catching up…';
        case 'online': return 'Online';
        case 'waiting': {
          const seconds = Math.max(0, Math.ceil((state.retryAt - Date.now()) / 1000));
          return `Offline: ${state.reason}. Reconnecting in ${seconds} s`;
        }
        default: return `Disconnected${state.reason ? `: ${state.reason}` : ''}`;
      }
    };
    node.textContent = describe();
    if (state.name === 'waiting') this.stateTimer = setInterval(() => { node.textContent = describe(); }, 1000);
    this.updateSendButton();
  }

  // --- narrow screens --------------------------------------------------------------------------

  togglePanel(panelId, buttonId) {
    const panel = $(panelId);
    const open = !panel.classList.contains('open');
    this.closePanels();
    panel.classList.toggle('open', open);
    $(buttonId).setAttribute('aria-expanded', String(open));
    if (open) panel.querySelector('button, input')?.focus();
  }

  closePanels() {
    for (const [panel, button] of [['sidebar', 'toggle-sidebar'], ['members-panel', 'toggle-members']]) {
      $(panel).classList.remove('open');
      $(button).setAttribute('aria-expanded', 'false');
    }
  }
}
