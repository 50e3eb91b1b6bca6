// The menu a click on a member's name opens, where roles exist (a daemon with login tokens):
// who it is (role, muted), write to them, and the moderation actions the viewer may take on
// them (moderation_rules.js). Kick, ban and mute ask for an optional reason, ban and mute
// also for how long, before they are sent. Names go in with textContent.

const DURATIONS = [
  ['', 'until lifted'],
  ['600', '10 minutes'],
  ['3600', '1 hour'],
  ['86400', '1 day'],
  ['604800', '1 week'],
];
const ASKS_REASON = new Set(['kick', 'ban', 'mute']);
const ASKS_DURATION = new Set(['ban', 'mute']);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function button(text, className = 'link-button') {
  const b = el('button', className, text);
  b.type = 'button';
  return b;
}

export class MemberMenu {
  // onMessage(user): write to them. onAct(user, action, fields): send the request (fields:
  // reason, duration_s, role).
  constructor({ onMessage, onAct }) {
    this.onMessage = onMessage;
    this.onAct = onAct;
    this.node = null;
    this.anchor = null;
    this.onOutside = (event) => {
      if (this.node && !this.node.contains(event.target) && event.target !== this.anchor) this.close();
    };
  }

  get isOpen() { return this.node !== null; }

  // anchor: the member's button; actions: memberActions(...).
  open(anchor, { user, role, muted, actions }) {
    this.close();
    const menu = el('div', 'member-menu');
    menu.id = 'member-menu';
    menu.setAttribute('role', 'dialog');
    menu.setAttribute('aria-label', `${user}: actions`);
    menu.dataset.user = user;
    const head = el('p', 'member-menu-head');
    head.append(el('strong', '', user));
    head.append(el('span', 'member-menu-role', role + (muted ? ', muted' : '')));
    menu.append(head);
    const list = el('div', 'member-menu-actions');
    const write = button('Send a direct message');
    write.dataset.action = 'message';
    write.addEventListener('click', () => { this.close(); this.onMessage(user); });
    list.append(write);
    for (const a of actions) {
      const b = button(a.label);
      b.dataset.action = a.role ? `${a.action}:${a.role}` : a.action;
      b.addEventListener('click', () => {
        if (ASKS_REASON.has(a.action)) this.ask(menu, user, a);
        else this.act(user, a.action, a.role ? { role: a.role } : {});
      });
      list.append(b);
    }
    menu.append(list);
    document.body.append(menu);
    this.node = menu;
    this.anchor = anchor;
    this.place(anchor);
    document.addEventListener('pointerdown', this.onOutside, true);
    menu.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.stopPropagation();
        this.close();
        anchor.focus();
      }
    });
    list.querySelector('button').focus();
  }

  // The reason (and, for a ban or mute, how long) before the action is sent.
  ask(menu, user, a) {
    const form = el('form', 'member-menu-form');
    const reasonId = 'member-menu-reason';
    const label = el('label', '', 'Reason (optional)');
    label.htmlFor = reasonId;
    const reason = el('input');
    reason.id = reasonId;
    reason.maxLength = 256;
    reason.autocomplete = 'off';
    form.append(label, reason);
    let duration = null;
    if (ASKS_DURATION.has(a.action)) {
      const durationLabel = el('label', '', 'For');
      durationLabel.htmlFor = 'member-menu-duration';
      duration = el('select');
      duration.id = 'member-menu-duration';
      for (const [value, text] of DURATIONS) {
        const option = el('option', '', text);
        option.value = value;
        duration.append(option);
      }
      form.append(durationLabel, duration);
    }
    const row = el('div', 'member-menu-buttons');
    const confirm = el('button', 'danger', `${a.label} ${user}`);
    confirm.type = 'submit';
    confirm.dataset.confirm = a.action;
    const cancel = button('Cancel');
    cancel.addEventListener('click', () => this.close());
    row.append(confirm, cancel);
    form.append(row);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const fields = {};
      if (reason.value.trim()) fields.reason = reason.value.trim();
      if (duration && duration.value) fields.duration_s = Number(duration.value);
      this.act(user, a.action, fields);
    });
    menu.querySelector('.member-menu-actions').replaceWith(form);
    this.place(this.anchor);   // taller now
    reason.focus();
  }

  act(user, action, fields) {
    this.close();
    this.onAct(user, action, fields);
  }

  // Beside the member's name, kept inside the window.
  place(anchor) {
    const box = anchor.getBoundingClientRect();
    const menu = this.node;
    const width = menu.offsetWidth;
    const height = menu.offsetHeight;
    const left = Math.max(8, Math.min(box.left - width - 8 > 8 ? box.left - width - 8 : box.left, innerWidth - width - 8));
    const top = Math.max(8, Math.min(box.top, innerHeight - height - 8));
    menu.style.left = `${left}px`;
    menu.style.top = `${top}px`;
  }

  close() {
    if (!this.node) return;
    document.removeEventListener('pointerdown', this.onOutside, true);
    this.node.remove();
    this.node = null;
    this.anchor = null;
  }
}
