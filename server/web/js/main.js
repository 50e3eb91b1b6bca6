// The page's start: reads how this daemon is set up (/client.json), shows the login form,
// then wires the chat view to the client. The name, the rooms joined and what was open are
// remembered in this browser, so a reload comes back to the same place (conversations,
// their history and unread counts come from the server where it keeps them).

import { ChatClient } from './chat_client.js';
import { ChatView } from './view.js';

const $ = (id) => document.getElementById(id);
const NAME_RULE = /^[A-Za-z0-9_.-]{1,32}$/;
const ROOM_RULE = /^[A-Za-z0-9_.-]{1,64}$/;
const FIRST_ROOM = 'lobby';
const saved = {
  get(key) { try { return JSON.parse(localStorage.getItem(`parley.${key}`)); } catch { return null; } },
  set(key, value) { try { localStorage.setItem(`parley.${key}`, JSON.stringify(value)); } catch { /* private mode */ } },
};

async function loadSettings() {
  try {
    const response = await fetch('/client.json', { cache: 'no-store' });
    if (response.ok) return await response.json();
  } catch { /* an older daemon or a proxy that hides it: use the defaults */ }
  return { ws_path: '/ws', auth: 'none', max_text_bytes: 4096 };
}

function webSocketUrl(path) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${path}`;
}

async function start() {
  const settings = await loadSettings();
  const tokenNeeded = settings.auth === 'token';
  $('login-token-field').hidden = !tokenNeeded;
  const rememberedName = saved.get('name');
  if (rememberedName) $('login-name').value = rememberedName;
  $('login-token').value = sessionStorage.getItem('parley.token') || '';
  $('login-name').focus();

  let client = null;
  let view = null;

  $('login-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = $('login-name').value.trim();
    const token = $('login-token').value.trim();
    $('login-error').textContent = '';
    if (!NAME_RULE.test(name)) {
      $('login-error').textContent = 'A name is 1 to 32 letters, digits, _ . or -';
      return;
    }
    if (tokenNeeded && !token) {
      $('login-error').textContent = 'This server needs an access token.';
      return;
    }
    $('login-submit').disabled = true;
    client = new ChatClient({ wsUrl: webSocketUrl(settings.ws_path), onChange: (what, detail) => changed(what, detail) });
    view = new ChatView(client, { onViewChange: (v) => saved.set('view', v), roles: tokenNeeded });
    const rooms = saved.get('name') === name ? (saved.get('rooms') || []) : [];
    const firstVisit = rooms.length === 0;
    try {
      await client.logIn(name, token, rooms.filter((r) => ROOM_RULE.test(r)));
    } catch (e) {
      $('login-error').textContent = e.message;
      $('login-submit').disabled = false;
      client.logOut();
      client = null;
      return;
    }
    saved.set('name', name);
    if (token) sessionStorage.setItem('parley.token', token);
    $('login-screen').hidden = true;
    $('chat-screen').hidden = false;
    $('whoami').textContent = client.user;
    if (firstVisit) await view.openRoom(FIRST_ROOM);
    const last = saved.get('view');
    if (last && last.kind === 'room' && client.rooms.has(last.name)) view.show(last);
    else if (last && last.kind === 'dm' && NAME_RULE.test(last.name) && client.sync.keepsHistory) view.openConversation(last.name);
    else if (!view.view) view.show(client.rooms.size ? { kind: 'room', name: client.rooms.keys().next().value } : null);
    $('composer-text').focus();
  });

  function changed(what, detail) {
    if (!view) return;
    switch (what) {
      case 'state':
        view.renderState(detail);
        if (detail.name === 'online') view.loadConversation();
        if (!client.loggedInOnce && detail.name === 'waiting') {
          // Still on the login form: say why nothing happens yet.
          $('login-error').textContent = `Cannot reach the server (${detail.reason}); trying again…`;
        }
        if (detail.name === 'stopped' && client && client.loggedInOnce && detail.reason !== 'logged out') {
          view.notice(`Disconnected: ${detail.reason}`);
        }
        break;
      case 'message': view.roomMessagesAdded(detail.room, detail.added); view.renderTyping(); break;
      case 'joined':
        view.roomMessagesAdded(detail.room, detail.added);
        view.moderationChanged(detail.room);   // members, topic, and what the viewer's role allows
        view.renderNav();
        break;
      case 'older': view.roomMessagesAdded(detail.room, detail.added, { older: true }); break;
      case 'reset': if (view.isCurrent('room', detail)) view.renderMessages(); break;
      case 'outbox': if (view.isCurrent('room', detail)) view.renderOutbox(); break;
      case 'revised': view.messagesRevised(detail.room, detail.messages); break;
      case 'moderation': view.moderationChanged(detail); break;
      case 'removed': view.roomRemoved(detail); break;
      // A crowd joining brings presence after presence: redrawn once per frame, not per event.
      case 'members': view.renderMembersSoon(view.isCurrent('room', detail)); break;
      case 'typing': if (view.isCurrent('room', detail)) view.renderTyping(); break;
      case 'dm': view.dmsAdded(detail.peer, detail.added); break;
      case 'dm-page': view.dmsAdded(detail.peer, detail.added, { older: detail.older, firstPage: !detail.older }); break;
      case 'dm-reset': if (view.isCurrent('dm', detail)) view.renderMessages(); break;
      case 'unread': view.renderNav(); break;
      case 'rooms':
        saved.set('rooms', [...client.rooms.keys()]);
        view.renderNav();
        break;
      case 'conversations': case 'directory': view.renderNav(); if (view.view?.kind === 'dm') view.renderMembers(); break;
      case 'notice': view.notice(detail); break;
      default: break;
    }
  }

  // --- the composer: Enter sends, Shift+Enter starts a new line ---------------------------------
  const text = $('composer-text');
  const encoder = new TextEncoder();
  function send() {
    if (!client || !view.view) return;
    const body = text.value;
    if (body.trim() === '') return;
    if (!client.connection.online) {
      view.showComposerError('Not connected: the message stays here until the connection is back.');
      return;
    }
    if (encoder.encode(body).length > settings.max_text_bytes) {
      view.showComposerError(`A message may be at most ${settings.max_text_bytes} bytes.`);
      return;
    }
    view.showComposerError('');
    const target = view.view;
    if (target.kind === 'room') {
      client.say(target.name, body);
    } else {
      client.dm(target.name, body).catch((e) => view.showComposerError(`@${target.name}: ${e.message}`));
    }
    text.value = '';
    fitComposer();
  }
  function fitComposer() {
    text.style.height = 'auto';
    text.style.height = `${text.scrollHeight + 2}px`;
  }
  $('composer').addEventListener('submit', (event) => { event.preventDefault(); send(); });
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send();
    }
  });
  text.addEventListener('input', () => {
    fitComposer();
    if (client && view.view && view.view.kind === 'room' && text.value) client.typing(view.view.name);
  });

  // --- the rest of the controls -----------------------------------------------------------------
  $('join-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = $('join-name').value.trim().replace(/^#/, '');
    if (!ROOM_RULE.test(name)) {
      view.showComposerError('A room name is 1 to 64 letters, digits, _ . or -');
      return;
    }
    $('join-name').value = '';
    await view.openRoom(name);
  });
  $('dm-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const name = $('dm-name').value.trim().replace(/^@/, '');
    if (!NAME_RULE.test(name)) {
      view.showComposerError('A name is 1 to 32 letters, digits, _ . or -');
      return;
    }
    $('dm-name').value = '';
    view.openConversation(name);
  });
  $('messages').addEventListener('scroll', () => {
    if (!view) return;
    if ($('messages').scrollTop < 60) view.loadOlder();
    view.markIfRead();   // scrolled down to the newest: read
  });
  document.addEventListener('visibilitychange', () => view && view.markIfRead());
  for (const id of ['join-name', 'dm-name']) {
    $(id).addEventListener('focus', () => client && client.scheduleDirectoryRefresh());
  }
  $('retry-now').addEventListener('click', () => client && client.retryNow());
  window.addEventListener('online', () => client && client.retryNow());
  $('logout').addEventListener('click', () => {
    client.logOut();
    saved.set('rooms', []);
    saved.set('view', null);
    location.reload();
  });
  $('toggle-sidebar').addEventListener('click', () => view.togglePanel('sidebar', 'toggle-sidebar'));
  $('toggle-members').addEventListener('click', () => view.togglePanel('members-panel', 'toggle-members'));
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && view) view.closePanels();
  });
}

start();
