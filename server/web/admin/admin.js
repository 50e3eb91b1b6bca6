// The admin page at /admin/: sign in with the admin token (kept in sessionStorage: this tab
// only), then live charts from /metrics, the users and rooms of the admin API with a filter,
// and the API's actions. It polls every few seconds and keeps polling while the daemon is away.

import { AdminApi, DaemonAway, refusalText, scrapeMetrics } from './api.js';
import { Chart } from './chart.js';
import { FigureTracker, charted, parseMetrics } from './figures.js';
import { renderLists } from './lists.js';
import { actionNamed, actions, confirmationOf, moderationBody } from './moderation.js';

const pollMs = 2500;
const tokenKey = 'parley-admin-token';
const $ = (id) => document.getElementById(id);

let api = null;
let pollTimer = null;
let tracker = new FigureTracker();
let charts = [];
let listed = { users: [], rooms: [] };

function setDaemonState(state, text) {
  const el = $('daemon-state');
  el.dataset.state = state;
  el.textContent = text;
}

export function showResult(text, kind) {
  const el = $('action-result');
  el.textContent = text;
  el.dataset.kind = kind;
  el.hidden = false;
  clearTimeout(showResult.timer);
  showResult.timer = setTimeout(() => { el.hidden = true; }, kind === 'error' ? 12000 : 5000);
}

// Asks before a destructive action, in the page (no window.confirm: it blocks the page's polls).
// Resolves with { ok, reason }.
function confirmAction(question, { askReason = false } = {}) {
  const dialog = $('confirm-dialog');
  $('confirm-text').textContent = question;
  $('confirm-reason').value = '';
  $('confirm-reason').hidden = !askReason;
  $('confirm-reason-label').hidden = !askReason;
  dialog.returnValue = '';
  dialog.showModal();
  (askReason ? $('confirm-reason') : $('confirm-cancel')).focus();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      resolve({ ok: dialog.returnValue === 'ok', reason: $('confirm-reason').value.trim() });
    }, { once: true });
  });
}

// Runs one admin action and says how it went; the lists refresh at once after a success.
// True when it was done.
async function perform(call, success) {
  try {
    const reply = await call();
    if (reply.ok) {
      showResult(success(reply.body), 'ok');
      refreshLists().catch(() => {});  // the next poll says when the daemon is away
      return true;
    }
    if (reply.status === 401) {
      signOut('The daemon no longer accepts this token (401). Sign in again.');
    } else {
      showResult(`Refused: ${refusalText(reply)}`, 'error');
    }
  } catch (e) {
    showResult(e instanceof DaemonAway ? 'The daemon is not answering; nothing was done.' : e.message, 'error');
  }
  return false;
}

async function kickUser(user) {
  const answer = await confirmAction(`Kick ${user}? Every connection of theirs is closed.`, { askReason: true });
  if (!answer.ok) return;
  await perform(() => api.kick(user, answer.reason), (b) => `Kicked ${b.user} (${b.connections} connection${b.connections === 1 ? '' : 's'}).`);
}

async function closeRoom(room) {
  const answer = await confirmAction(`Close #${room}? Every member leaves it.`, { askReason: true });
  if (!answer.ok) return;
  await perform(() => api.closeRoom(room, answer.reason), (b) => `Closed #${b.room} (${b.members} members).`);
}

function pickRoom(room, target) {
  const input = $(target);
  input.value = room;
  input.focus();
}

function showLists() {
  renderLists(listed, $('filter').value, {
    userList: $('user-list'), roomList: $('room-list'), userCount: $('user-count'), roomCount: $('room-count'),
    roomNames: $('room-names'), userNames: $('user-names'),
  }, {
    kick: kickUser, close: closeRoom,
    moderate: (room) => pickRoom(room, 'moderate-room'), announce: (room) => pickRoom(room, 'announce-room'),
  });
}

// The users and rooms; false when the daemon did not answer. A 401 signs out.
async function refreshLists() {
  const [users, rooms] = await Promise.all([api.users(), api.rooms()]);
  if (users.status === 401 || rooms.status === 401) {
    signOut('The daemon no longer accepts this token (401). Sign in again.');
    return;
  }
  if (users.ok && rooms.ok) {
    listed = { users: users.body.users, rooms: rooms.body.rooms };
    showLists();
  }
}

async function refreshCharts() {
  const text = await scrapeMetrics();
  const note = $('metrics-note');
  note.hidden = text !== null;
  $('chart-grid').hidden = text === null;
  if (text === null) {
    note.textContent = 'This daemon serves no /metrics (metrics.enabled = false): no charts.';
    return;
  }
  const point = tracker.add(parseMetrics(text), performance.now());
  for (const chart of charts) chart.push(point[chart.figure.key]);
}

async function poll() {
  const session = api;
  try {
    await Promise.all([refreshCharts(), refreshLists()]);
    if (session === api && api) setDaemonState('up', `Live · ${new Date().toLocaleTimeString()}`);
  } catch (e) {
    if (!(e instanceof DaemonAway)) throw e;
    if (session !== api) return;
    // Gaps in the charts while it is away; rates start afresh when it is back (its counters
    // may have restarted from zero).
    tracker.reset();
    for (const chart of charts) chart.push(null);
    setDaemonState('down', `The daemon is not answering; trying again every ${pollMs / 1000} s`);
  } finally {
    if (session === api && api) pollTimer = setTimeout(poll, pollMs);
  }
}

function showDashboard(show) {
  $('sign-in').hidden = show;
  $('dashboard').hidden = !show;
  $('sign-out').hidden = !show;
}

function signOut(message = '') {
  sessionStorage.removeItem(tokenKey);
  api = null;
  clearTimeout(pollTimer);
  listed = { users: [], rooms: [] };
  showLists();
  showDashboard(false);
  setDaemonState('idle', 'Not signed in');
  $('token-error').textContent = message;
  $('token-input').value = '';
  $('token-input').focus();
}

// Tries a token: the dashboard when the API takes it, else the reason on the form.
async function signIn(token) {
  const candidate = new AdminApi(token);
  const error = $('token-error');
  error.textContent = '';
  $('token-submit').disabled = true;
  try {
    const reply = await candidate.users();
    if (reply.status === 401) {
      sessionStorage.removeItem(tokenKey);
      error.textContent = 'Wrong token: the daemon refused it (401).';
      return;
    }
    if (!reply.ok) {
      sessionStorage.removeItem(tokenKey);
      error.textContent = reply.status === 404
        ? 'The admin API is off on this daemon (admin.token is empty).'
        : `The daemon refused: ${refusalText(reply)}`;
      return;
    }
    sessionStorage.setItem(tokenKey, token);
    api = candidate;
    tracker = new FigureTracker();
    for (const chart of charts) chart.series.values.length = 0;
    showDashboard(true);
    setDaemonState('up', 'Live');
    poll();
  } catch (e) {
    error.textContent = e instanceof DaemonAway ? 'Cannot reach the daemon. Is it running?' : e.message;
  } finally {
    $('token-submit').disabled = false;
  }
}

function setUpModerationForm() {
  const select = $('moderate-action');
  for (const action of actions) select.add(new Option(action.label, action.name));
  const showFields = () => {
    const fields = actionNamed(select.value).fields;
    for (const row of document.querySelectorAll('#moderate-form [data-field]')) {
      row.hidden = !fields.includes(row.dataset.field);
    }
  };
  select.addEventListener('change', showFields);
  showFields();
  $('moderate-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    let body;
    try {
      body = moderationBody($('moderate-room').value, select.value, {
        user: $('moderate-user').value, reason: $('moderate-reason').value, role: $('moderate-role').value,
        duration_s: $('moderate-duration').value, text: $('moderate-text').value,
        interval_s: $('moderate-interval').value, seq: $('moderate-seq').value,
      });
    } catch (e) {
      showResult(e.message, 'error');
      return;
    }
    if (actionNamed(body.action).confirm && !(await confirmAction(confirmationOf(body))).ok) return;
    await perform(() => api.moderate(body), (b) => `Done: ${b.action} in #${b.room}.`);
  });
}

function setUp() {
  charts = charted.map((figure) => new Chart(figure, $('chart-grid')));
  window.addEventListener('resize', () => charts.forEach((c) => c.draw()));
  $('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = $('token-input').value.trim();
    if (token === '') {
      $('token-error').textContent = 'Enter the admin token.';
      return;
    }
    signIn(token);
  });
  $('sign-out').addEventListener('click', () => signOut());
  $('filter').addEventListener('input', showLists);
  $('announce-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = $('announce-text').value.trim();
    const room = $('announce-room').value.trim();
    if (text === '') {
      showResult('Write the announcement first.', 'error');
      return;
    }
    if (await perform(() => api.announce(text, room), (b) => (b.room ? `Announced in #${b.room}.` : 'Announced to everyone.'))) {
      $('announce-text').value = '';
    }
  });
  setUpModerationForm();
  const kept = sessionStorage.getItem(tokenKey);
  if (kept) signIn(kept);
  else $('token-input').focus();
}

setUp();
