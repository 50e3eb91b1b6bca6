// Draws the chat from ChatClient's state. Every text that came from a person (names, room
// names, messages, topics, reasons) is put into the page with textContent, never as markup.
//
// Where roles exist (a daemon with login tokens) a room shows its topic, editable by its owners
// and moderators; a member's name opens the member menu; the viewer's own messages can be
// edited, and deleted, as can anyone's by an owner or moderator (moderation_rules.js).

import { MemberMenu } from './member_menu.js';
import { mayDelete, mayEdit, maySetTopic, memberActions } from './moderation_rules.js';
import { describeModeration } from './room_moderation.js';

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
const untilFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
// Edits and deletes change the message they point at; they are not lines of their own.
const shown = (m) => m.type !== 'edited' && m.type !== 'deleted';

// A view is a room ({kind: 'room', name}) or a conversation with one person ({kind: 'dm', name}).
export class ChatView {
  // roles: the daemon keeps identities (login tokens), so rooms have owners and moderators.
  constructor(client, { onViewChange, roles = false }) {
    this.client = client;
    this.view = null;
    this.onViewChange = onViewChange;
    this.roles = roles;
    this.messages = $('messages');
    this.stateTimer = null;
    this.typingTimer = null;
    this.shownRole = null;       // the viewer's role in the room whose messages are drawn
    this.memberMenu = new MemberMenu({
      onMessage: (user) => this.openConversation(user),
      onAct: (user, action, fields) => this.moderate(user, action, fields),
    });
    $('members-more').addEventListener('click', () => this.showMoreMembers());
    $('topic-edit').addEventListener('click', () => this.editTopic());
    $('topic-cancel').addEventListener('click', () => this.renderTopic());
    $('topic-form').addEventListener('submit', (event) => { event.preventDefault(); this.saveTopic(); });
    $('topic-input').addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.stopPropagation();
        this.renderTopic();
      }
    });
  }

  // --- what is shown ---------------------------------------------------------------------------

  show(view) {
    this.view = view;
    $('view-title').textContent = view ? (view.kind === 'room' ? `# ${view.name}` : `@ ${view.name}`) : '';
    const usable = Boolean(view);
    $('composer-text').disabled = !usable;
    this.updateSendButton();
    $('composer-text').placeholder = view
      ? `Message ${view.kind === 'room' ? '#' : '@'}${view.name} (Enter sends, Shift+Enter: new line)` : '';
    this.memberMenu.close();
    this.renderTopic();
    this.renderMessages();
    this.renderNav();
    this.renderMembers();
    this.renderTyping();
    this.closePanels();
    if (this.onViewChange) this.onViewChange(view);
    this.loadConversation();
    this.markIfRead();
  }

  // A conversation's history comes from the server the first time it is shown (where the
  // server keeps it). Offline, it is asked for again when the connection is back.
  loadConversation() {
    if (!this.view || this.view.kind !== 'dm') return;
    const peer = this.view.name;
    this.client.sync.load(peer).catch((e) => {
      if (this.isCurrent('dm', peer) && e.code !== 'disconnected') {
        this.showComposerError(`could not load the conversation with ${peer}: ${e.message}`);
      }
    });
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
    const isRoom = this.view.kind === 'room';
    this.shownRole = isRoom ? this.client.roleIn(this.view.name) : null;
    // A conversation has earlier messages to page in only where the server keeps them.
    if (isRoom || entry.loaded) box.append(this.olderRow(entry));
    let previous = null;
    for (const m of isRoom ? entry.log.messages : entry.messages) {
      if (!shown(m)) continue;
      box.append(...this.messageNodes(m, previous));
      previous = m;
    }
    if (isRoom) this.renderOutbox();
    box.scrollTop = box.scrollHeight;
  }

  // entry: a joined room or a DirectConversation; both keep their numbered messages in `log`.
  olderRow(entry) {
    const row = el('div', 'older-row');
    row.id = 'older-row';
    if (entry.log.olderAvailable && entry.log.firstSeq !== null) {
      const button = el('button', 'link-button', 'Load earlier messages');
      button.type = 'button';
      button.addEventListener('click', () => this.loadOlder());
      row.append(button);
    } else if (entry.log.messages.length) {
      row.append(el('span', 'notice', `This is the start of ${'peer' in entry ? 'the conversation' : 'the room\'s history'}.`));
    }
    return row;
  }

  // The nodes for one message: a day heading when the day changes, then the message. A run
  // of messages from one sender shows the name once.
  // A room's moderation event is a line of its own; edits and deletes show no line.
  messageNodes(m, previous) {
    if (!shown(m)) return [];
    const nodes = [];
    if (!previous || dayOf(previous.ts) !== dayOf(m.ts)) nodes.push(el('p', 'day-break', dayFormat.format(new Date(m.ts))));
    if (m.type === 'moderation') {
      const line = el('p', 'notice moderation-line', describeModeration(m, (ms) => untilFormat.format(new Date(ms))));
      line.dataset.seq = String(m.seq);
      line.dataset.action = m.action;
      nodes.push(line);
      return nodes;
    }
    const continued = previous && previous.type !== 'moderation' && previous.from === m.from &&
                      dayOf(previous.ts) === dayOf(m.ts) && m.ts - previous.ts < 5 * 60000;
    nodes.push(this.messageRow(m, continued));
    return nodes;
  }

  // One message: who, when, the text (or a tombstone), the edited mark and, in a room, what
  // the viewer may do with it.
  messageRow(m, continued) {
    const row = el('article', 'msg');
    if (m.seq !== undefined) row.dataset.seq = String(m.seq);
    if (m.from === this.client.user) row.classList.add('mine');
    if (continued) row.classList.add('continued');
    const meta = el('div', 'meta');
    meta.append(el('span', 'from', m.from));
    const time = el('time', '', timeFormat.format(new Date(m.ts)));
    time.dateTime = new Date(m.ts).toISOString();
    time.title = fullFormat.format(new Date(m.ts));
    meta.append(time);
    row.append(meta);
    if (m.deleted) {
      row.classList.add('deleted');
      row.append(el('p', 'text tombstone', 'message deleted'));
    } else {
      row.append(el('p', 'text', m.text));
      if (m.edited) {
        row.classList.add('edited');
        const mark = el('span', 'edited-mark', '(edited)');
        mark.title = 'edited by its author';
        row.append(mark);
      }
    }
    row.setAttribute('aria-label', `${m.from} at ${timeFormat.format(new Date(m.ts))}${m.deleted ? ', deleted' : m.edited ? ', edited' : ''}`);
    if (m.type === 'message' && this.view && this.view.kind === 'room') this.addMessageActions(row, m, this.view.name);
    return row;
  }

  addMessageActions(row, m, roomName) {
    const user = this.client.user;
    const canEdit = this.roles && mayEdit(user, m);
    const canDelete = this.roles && mayDelete(user, this.client.roleIn(roomName), m);
    if (!canEdit && !canDelete) return;
    const bar = el('div', 'msg-actions');
    if (canEdit) {
      const edit = el('button', 'link-button', 'Edit');
      edit.type = 'button';
      edit.dataset.act = 'edit';
      edit.setAttribute('aria-label', 'edit this message');
      edit.addEventListener('click', () => this.editMessage(row, m, roomName));
      bar.append(edit);
    }
    if (canDelete) {
      const remove = el('button', 'link-button', 'Delete');
      remove.type = 'button';
      remove.dataset.act = 'delete';
      remove.setAttribute('aria-label', `delete this message${m.from === user ? '' : ` by ${m.from}`}`);
      remove.addEventListener('click', () => this.confirmDelete(bar, m, roomName));
      bar.append(remove);
    }
    row.append(bar);
  }

  // The text becomes a box to edit it in: Enter saves, Shift+Enter starts a new line, Escape
  // gives up. The change shows when the room's `edited` event comes back.
  editMessage(row, m, roomName) {
    const textNode = row.querySelector('.text');
    if (!textNode || row.querySelector('.msg-edit')) return;
    const form = el('form', 'msg-edit');
    const box = el('textarea');
    box.value = m.text;
    box.rows = Math.min(8, m.text.split('\n').length);
    box.setAttribute('aria-label', 'edited message');
    const save = el('button', '', 'Save');
    save.type = 'submit';
    const cancel = el('button', 'link-button', 'Cancel');
    cancel.type = 'button';
    form.append(box, save, cancel);
    const close = () => { form.replaceWith(textNode); row.classList.remove('editing'); };
    cancel.addEventListener('click', close);
    box.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') { event.stopPropagation(); close(); }
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) { event.preventDefault(); form.requestSubmit(); }
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const text = box.value;
      if (text.trim() === '' || text === m.text) { close(); return; }
      save.disabled = true;
      this.client.editMessage(roomName, m.seq, text).then(() => {
        if (form.isConnected) close();
      }, (e) => {
        save.disabled = false;
        this.showComposerError(`could not edit the message: ${e.message}`);
      });
    });
    row.classList.add('editing');
    textNode.replaceWith(form);
    box.focus();
  }

  // A delete asks once more, in place.
  confirmDelete(bar, m, roomName) {
    const question = el('div', 'msg-actions confirming');
    question.append(el('span', 'question', 'Delete this message?'));
    const yes = el('button', 'link-button danger-link', 'Delete');
    yes.type = 'button';
    yes.dataset.act = 'confirm-delete';
    const no = el('button', 'link-button', 'Keep');
    no.type = 'button';
    no.addEventListener('click', () => question.replaceWith(bar));
    yes.addEventListener('click', () => {
      yes.disabled = true;
      this.client.deleteMessage(roomName, m.seq).catch((e) => {
        this.showComposerError(`could not delete the message: ${e.message}`);
        if (question.isConnected) question.replaceWith(bar);
      });
    });
    question.append(yes, no);
    bar.replaceWith(question);
    no.focus();
  }

  // Messages of a room edited or deleted: their rows are drawn again in place.
  messagesRevised(name, messages) {
    if (!this.isCurrent('room', name)) return;
    for (const m of messages) {
      const old = this.messages.querySelector(`article.msg[data-seq="${m.seq}"]`);
      if (old) old.replaceWith(this.messageRow(m, old.classList.contains('continued')));
    }
  }

  // A room's topic, roles, bans or mutes changed, or the room was joined again.
  moderationChanged(name) {
    if (!this.isCurrent('room', name)) return;
    this.renderTopic({ keepEditing: true });
    this.renderMembers();
    if (this.client.roleIn(name) !== this.shownRole) {
      // What the viewer may delete changed with their role.
      const box = this.messages;
      const fromBottom = box.scrollHeight - box.scrollTop;
      this.renderMessages();
      box.scrollTop = box.scrollHeight - fromBottom;
    }
  }

  // --- topic -----------------------------------------------------------------------------------

  // keepEditing: a topic being typed stays open while the viewer may still set it.
  renderTopic({ keepEditing = false } = {}) {
    const room = this.view && this.view.kind === 'room' ? this.client.rooms.get(this.view.name) : null;
    const editable = Boolean(room) && this.roles && maySetTopic(this.client.roleIn(room.name));
    if (keepEditing && editable && !$('topic-form').hidden) return;
    $('topic-form').hidden = true;
    $('topic-line').hidden = !room || (!room.moderation.topic && !editable);
    $('topic-text').textContent = room ? room.moderation.topic : '';
    $('topic-edit').hidden = !editable;
    $('topic-edit').textContent = room && room.moderation.topic ? 'Edit topic' : 'Set a topic';
  }

  editTopic() {
    const room = this.view && this.client.rooms.get(this.view.name);
    if (!room) return;
    $('topic-line').hidden = true;
    $('topic-form').hidden = false;
    $('topic-input').value = room.moderation.topic;
    $('topic-input').focus();
    $('topic-input').select();
  }

  async saveTopic() {
    if (!this.view || this.view.kind !== 'room') return;
    const name = this.view.name;
    const room = this.client.rooms.get(name);
    const text = $('topic-input').value.trim();
    if (!room || text === room.moderation.topic) { this.renderTopic(); return; }
    $('topic-save').disabled = true;
    try {
      await this.client.setTopic(name, text);
      if (this.isCurrent('room', name)) this.renderTopic();
    } catch (e) {
      this.showComposerError(`could not set the topic of ${name}: ${e.message}`);
    } finally {
      $('topic-save').disabled = false;
    }
  }

  // --- the member menu's actions ---------------------------------------------------------------

  openMemberMenu(anchor, name) {
    const room = this.view && this.view.kind === 'room' && this.client.rooms.get(this.view.name);
    if (!room) return;
    if (this.memberMenu.isOpen && this.memberMenu.anchor === anchor) { this.memberMenu.close(); return; }
    const role = room.moderation.roleOf(name);
    const muted = room.moderation.isMuted(name);
    this.memberMenu.open(anchor, {
      user: name, role, muted, actions: memberActions(this.client.roleIn(room.name), role, { muted }),
    });
  }

  async moderate(user, action, fields) {
    if (!this.view || this.view.kind !== 'room') return;
    const name = this.view.name;
    this.showComposerError('');
    try {
      await this.client.moderate(name, action, { user, ...fields });
    } catch (e) {
      const what = action === 'set_role' ? `make ${user} ${fields.role}` : `${action} ${user}`;
      this.showComposerError(`could not ${what}: ${e.message}`);
    }
  }

  nearBottom() { const b = this.messages; return b.scrollHeight - b.scrollTop - b.clientHeight < 80; }

  // New messages of a room: in the current room appended when they are the newest, else a
  // redraw; elsewhere only its unread count changes.
  roomMessagesAdded(name, added, { older = false } = {}) {
    const room = this.client.rooms.get(name);
    if (!room) return;
    if (!this.isCurrent('room', name)) {
      if (!older) this.renderNav();
      return;
    }
    this.messagesAdded(room, room.log.messages, added, older);
  }

  // New dms of a conversation (live, caught up or paged in; firstPage: its history has just
  // been fetched, so the start of the list changes too).
  dmsAdded(peer, added, { older = false, firstPage = false } = {}) {
    const conversation = this.client.conversations.get(peer);
    if (conversation && this.isCurrent('dm', peer)) {
      if (firstPage) {
        this.renderMessages();
        this.markIfRead();
      } else {
        this.messagesAdded(conversation, conversation.messages, added, older);
      }
    }
    this.renderNav();
  }

  messagesAdded(entry, messages, added, older) {
    if (added.length === 0) {
      if (older) this.messages.querySelector('#older-row')?.replaceWith(this.olderRow(entry));
      return;
    }
    if (older) {
      const box = this.messages;
      const fromBottom = box.scrollHeight - box.scrollTop;
      this.renderMessages();
      box.scrollTop = box.scrollHeight - fromBottom;  // keep what the reader was looking at in place
      return;
    }
    const appended = messages.length >= added.length && messages[messages.length - 1] === added[added.length - 1] &&
                     messages[messages.length - added.length] === added[0];
    if (!appended || this.messages.querySelector('.empty-hint')) {
      this.renderMessages();
      this.markIfRead();
      return;
    }
    const stick = this.nearBottom();
    const box = this.messages;
    box.querySelectorAll('.outbox').forEach((n) => n.remove());
    let previous = messages.length > added.length ? messages[messages.length - added.length - 1] : null;
    for (const m of added) {
      box.append(...this.messageNodes(m, previous));
      previous = m;
    }
    this.renderOutbox();
    if (stick || added.some((m) => m.from === this.client.user)) box.scrollTop = box.scrollHeight;
    this.markIfRead();
  }

  // The user reads what the current view shows when the tab is visible and the list is
  // scrolled to its end: the view's messages are then read (and the marker sent).
  markIfRead() {
    if (!this.view || document.visibilityState !== 'visible' || !this.nearBottom()) return;
    this.client.sync.viewed(this.view.kind, this.view.name);
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

  notice(text) {
    const stick = this.nearBottom();
    this.messages.append(el('p', 'notice', text));
    if (stick) this.messages.scrollTop = this.messages.scrollHeight;
  }

  async loadOlder() {
    if (!this.view) return;
    try {
      if (this.view.kind === 'room') await this.client.loadOlder(this.view.name);
      else await this.client.sync.loadOlder(this.view.name);
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
    const names = new Set([...this.client.rooms.keys(), ...counts.keys(), ...this.client.sync.roomsWithUnread()]);
    for (const name of [...names].sort()) {
      const joined = this.client.rooms.get(name);
      const unread = this.client.sync.unreadOf('room', name);
      const li = el('li');
      const button = el('button', `nav-item${joined ? '' : ' not-joined'}`);
      button.type = 'button';
      button.dataset.room = name;
      button.append(el('span', 'name', `# ${name}`));
      const members = joined ? joined.memberCount : counts.get(name);
      if (unread) button.append(el('span', 'unread', String(unread)));
      if (members !== undefined) {
        const count = el('span', 'count', String(members));
        count.title = `${members} ${members === 1 ? 'member' : 'members'}`;
        button.append(count);
      }
      button.setAttribute('aria-label', `${joined ? '' : 'join '}room ${name}, ${members ?? 0} members${unread ? `, ${unread} unread` : ''}`);
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
    for (const peer of this.client.conversations.keys()) {
      const li = el('li');
      const button = el('button', 'nav-item');
      button.type = 'button';
      button.dataset.peer = peer;
      button.append(el('span', 'name', `@ ${peer}`));
      const unread = this.client.sync.unreadOf('dm', peer);
      if (unread) button.append(el('span', 'unread', String(unread)));
      const offline = !this.client.online.includes(peer);
      if (offline) button.append(el('span', 'count', 'offline'));
      button.setAttribute('aria-label', `conversation with ${peer}${unread ? `, ${unread} unread` : ''}${offline ? ', offline' : ''}`);
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
    heading.textContent = room ? `In # ${room.name} (${room.memberCount.toLocaleString('en')})` : 'In this room';
    $('members-more').hidden = !room || room.membersComplete;
    if (!room) return;
    // A big room lists what was paged in so far (sorted), the rest on request.
    for (const name of [...room.members].sort()) list.append(this.memberItem(name));
  }

  // renderMembers (when `current`), renderTyping and renderNav in a moment, once for any number
  // of calls before then. (A timer rather than an animation frame: a tab in the background
  // still catches up.)
  renderMembersSoon(current) {
    this.membersDue = this.membersDue || current;
    if (this.membersFrame) return;
    this.membersFrame = setTimeout(() => {
      this.membersFrame = null;
      if (this.membersDue) this.renderMembers();
      this.membersDue = false;
      this.renderTyping();
      this.renderNav();
    }, 30);
  }

  async showMoreMembers() {
    const button = $('members-more');
    if (!this.view || this.view.kind !== 'room') return;
    button.disabled = true;
    try {
      await this.client.loadMoreMembers(this.view.name);
    } catch (e) {
      this.notice(`could not list more members: ${e.message}`);
    } finally {
      button.disabled = false;
    }
  }

  memberItem(name) {
    const li = el('li');
    const room = this.roles && this.view && this.view.kind === 'room' ? this.client.rooms.get(this.view.name) : null;
    // Roles and mutes are marks drawn by the style sheet, so the name stays the item's text.
    const mark = (node) => {
      if (!room) return;
      const role = room.moderation.roleOf(name);
      if (role !== 'member') node.dataset.role = role;
      if (room.moderation.isMuted(name)) node.dataset.muted = 'true';
    };
    if (name === this.client.user) {
      const self = el('span', 'nav-item', `${name} (you)`);
      mark(self);
      li.append(self);
      return li;
    }
    const button = el('button', 'nav-item');
    button.type = 'button';
    button.dataset.member = name;
    button.append(el('span', 'name', name));
    mark(button);
    if (room) {
      // Where roles exist a name opens the member menu: writing to them, and what the viewer
      // may do in the room.
      const role = room.moderation.roleOf(name);
      button.title = `${name}: ${role}`;
      button.setAttribute('aria-haspopup', 'dialog');
      button.setAttribute('aria-label', `${name}, ${role}${button.dataset.muted ? ', muted' : ''}: open the menu`);
      button.addEventListener('click', () => this.openMemberMenu(button, name));
    } else {
      button.title = `Write to ${name}`;
      button.setAttribute('aria-label', `${name}: send a direct message`);
      button.addEventListener('click', () => this.openConversation(name));
    }
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

  // Removed from a room by its owners or moderators (the server's notice says why).
  roomRemoved(name) {
    if (this.isCurrent('room', name)) {
      const next = this.client.rooms.keys().next();
      this.show(next.done ? null : { kind: 'room', name: next.value });
    } else {
      this.renderNav();
    }
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
    this.client.sync.conversation(peer);
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
    this.memberMenu.close();
    for (const [panel, button] of [['sidebar', 'toggle-sidebar'], ['members-panel', 'toggle-members']]) {
      $(panel).classList.remove('open');
      $(button).setAttribute('aria-expanded', 'false');
    }
  }
}
