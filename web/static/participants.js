// participants.js: the admin's participants page: add participants (one, or
// a CSV of names), their invitation links, who submitted what and when, and
// the submissions deadline.
import {$, h, api, write, fmt, isAdmin, showErrors, clearErrors} from 'taikai/app.js';

// TEXT: every sentence this file shows (for the translation catalog).
const TEXT = {
  count: 'Participants: {n}.',
  status: {invited: 'Invited', active: 'Active', expired: 'Invitation expired'},
  noEngine: 'No engine yet.',
  engine: '{name} (version {version})',
  never: 'Never.',
  newLink: 'New link',
  open: 'Submissions are open.',
  openUntil: 'Submissions are open until {at}.',
  closed: 'Submissions closed at {at}.',
  pickFile: 'Choose a CSV file.',
  pickTime: 'Choose a date and time.',
};

const when = (iso) => new Date(iso).toLocaleString();

async function load() {
  let r;
  try {
    r = await api('/api/participants');
  } catch (err) {
    if (err.status !== 401) $('#participants-error').textContent = err.message;
    return;
  }
  $('#participants tbody').replaceChildren(...r.participants.map(row));
  $('#participants-empty').hidden = r.participants.length > 0;
  $('#participant-count').textContent = fmt(TEXT.count, {n: r.participants.length});
  showLock(r.submissions);
}

function row(p) {
  const engines = p.engines.length ? h('ul', {class: 'plain'}, p.engines.map((e) => h('li', {text: fmt(TEXT.engine, e)}))) : TEXT.noEngine;
  return h('tr', {dataset: {participantId: p.id}},
    h('td', {class: 'num', text: p.id}),
    h('td', {class: 'name strong', text: p.name}),
    h('td', {class: 'status', text: TEXT.status[p.status] || p.status}),
    h('td', {class: 'engines'}, engines),
    h('td', {class: 'last', text: p.last_submitted_at ? when(p.last_submitted_at) : TEXT.never}),
    h('td', null, h('button', {type: 'button', class: 'button ghost small reinvite', dataset: {id: p.id}, text: TEXT.newLink})));
}

function showLinks(list) {
  $('#links').hidden = false;
  const rows = list.map((p) => h('tr', {dataset: {name: p.name}},
    h('td', {text: p.name}),
    h('td', null, h('a', {class: 'invite-link', href: p.invitation.url, text: p.invitation.url})),
    h('td', {text: when(p.invitation.expires_at)})));
  $('#links-table tbody').prepend(...rows);
}

function showLock(sub) {
  let text = TEXT.open;
  if (sub.close_at) text = fmt(sub.open ? TEXT.openUntil : TEXT.closed, {at: when(sub.close_at)});
  $('#lock-state').textContent = text;
  document.body.dataset.submissions = sub.open ? 'open' : 'closed';
}

$('#participant-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const form = ev.target;
  clearErrors(form);
  try {
    const r = await write('/api/participants', {method: 'POST', body: {name: $('#p-name').value.trim()}});
    showLinks(r.participants);
    $('#p-name').value = '';
    load();
  } catch (err) {
    showErrors(form, err);
  }
});

$('#csv-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const form = ev.target;
  clearErrors(form);
  const file = $('#p-csv').files[0];
  if (!file) {
    showErrors(form, {field: 'csv', message: TEXT.pickFile});
    return;
  }
  try {
    const res = await fetch('/api/participants', {method: 'POST', credentials: 'same-origin',
      headers: {'X-Requested-With': 'taikai', 'Content-Type': 'text/csv', 'Accept': 'application/json'}, body: await file.text()});
    const data = await res.json();
    if (!res.ok) throw data.error;
    showLinks(data.participants);
    $('#p-csv').value = '';
    load();
  } catch (err) {
    showErrors(form, err);
  }
});

$('#participants').addEventListener('click', async (ev) => {
  const b = ev.target.closest('button.reinvite');
  if (!b) return;
  try {
    showLinks([await write(`/api/participants/${b.dataset.id}/invitation`, {method: 'POST'})]);
    load();
  } catch (err) {
    $('#participants-error').textContent = err.message;
  }
});

async function lock(body) {
  const form = $('#lock-form');
  clearErrors(form);
  try {
    showLock(await write('/api/submissions', {method: 'PUT', body}));
  } catch (err) {
    showErrors(form, err);
  }
}

$('#lock-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const v = $('#lock-at').value;
  if (!v) {
    showErrors(ev.target, {field: 'close_at', message: TEXT.pickTime});
    return;
  }
  lock({close_at: new Date(v).toISOString()});
});
$('#lock-now').addEventListener('click', () => lock({locked: true}));
$('#lock-open').addEventListener('click', () => lock({locked: false}));

document.addEventListener('taikai:admin', (ev) => { if (ev.detail) load(); });
if (isAdmin()) load();
