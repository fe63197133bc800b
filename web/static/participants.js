// participants.js: the admin's participants page: add participants (one, or
// a CSV of names), their invitation links, who submitted what and when, and
// the submissions deadline.
import {$, h, api, write, isAdmin, showErrors, clearErrors, t, label, showError, dateTime} from 'taikai/app.js';

const when = dateTime;

async function load() {
  let r;
  try {
    r = await api('/api/participants');
  } catch (err) {
    if (err.status !== 401) showError($('#participants-error'), err);
    return;
  }
  $('#participants tbody').replaceChildren(...r.participants.map(row));
  $('#participants-empty').hidden = r.participants.length > 0;
  $('#participant-count').textContent = t('participants.count', {count: r.participants.length});
  showLock(r.submissions);
  // Links to localhost reach no student: say how to give the real address.
  const inv = r.invitations || {};
  $('#links-local').hidden = !inv.local;
  if (inv.local) $('#links-local-base').textContent = inv.base_url;
}

function row(p) {
  const engines = p.engines.length ? h('ul', {class: 'plain'}, p.engines.map((e) => h('li', {text: t('participants.engine', {name: e.name, version: e.version})}))) : t('participants.no_engine');
  const gone = p.status === 'deactivated';
  const del = t('participants.remove');
  return h('tr', {class: gone ? 'deactivated' : null, dataset: {participantId: p.id, name: p.name, number: p.number || ''}},
    h('td', {class: 'num', text: p.id}),
    h('td', {class: 'number', translate: 'no', text: p.number || ''}),
    h('td', {class: 'name strong nowrap', text: p.name}),
    h('td', null, h('span', {class: `status status-${p.status}`, text: label('participants.status', p.status)})),
    h('td', {class: 'engines'}, engines),
    h('td', {class: 'last', text: p.last_submitted_at ? when(p.last_submitted_at) : t('participants.never')}),
    h('td', {class: 'actions-cell'}, gone ? null : [
      h('button', {type: 'button', class: 'button ghost small reinvite', dataset: {id: p.id}, text: t('participants.new_link')}), ' ',
      h('button', {type: 'button', class: 'button ghost small edit', dataset: {id: p.id}, text: t('participants.edit')}), ' ',
      h('button', {type: 'button', class: 'button ghost small danger-text remove', dataset: {id: p.id, label: del}, text: del})]));
}

// Editing a row: its name and number become fields, saved with PATCH
// /api/participants/{id}; their engines and games are not touched.
function editRow(tr) {
  const id = tr.dataset.participantId;
  const name = h('input', {class: 'edit-name', value: tr.dataset.name, maxlength: 64, 'aria-label': t('form.name')});
  const number = h('input', {class: 'edit-number', value: tr.dataset.number, maxlength: 32, 'aria-label': t('col.number'), translate: 'no'});
  const error = h('span', {class: 'field-error', role: 'alert'});
  tr.querySelector('.number').replaceChildren(number);
  tr.querySelector('.name').replaceChildren(name, error);
  tr.querySelector('.actions-cell').replaceChildren(
    h('button', {type: 'button', class: 'button small primary save', onclick: async () => {
      try {
        await write(`/api/participants/${id}`, {method: 'PATCH', body: {name: name.value.trim(), number: number.value.trim()}});
        load();
      } catch (err) {
        showError(error, err);
      }
    }, text: t('participants.save')}), ' ',
    h('button', {type: 'button', class: 'button ghost small cancel', onclick: load, text: t('participants.cancel')}));
  name.focus();
}

function showLinks(list) {
  $('#links').hidden = false;
  const rows = list.map((p) => h('tr', {dataset: {name: p.name}},
    h('td', {translate: 'no', text: p.number || ''}),
    h('td', {class: 'nowrap', text: p.name}),
    h('td', null, h('a', {class: 'invite-link', href: p.invitation.url, translate: 'no', text: p.invitation.url})),
    h('td', {text: when(p.invitation.expires_at)})));
  $('#links-table tbody').prepend(...rows);
}

function showLock(sub) {
  let text = t('submissions.open');
  if (sub.close_at) {
    const at = when(sub.close_at);
    text = sub.open ? t('submissions.open_until', {at}) : t('participants.closed', {at});
  }
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
    showErrors(form, {field: 'csv', message: t('participants.pick_file')});
    return;
  }
  try {
    // Sent as text/csv whatever type the browser gave the file.
    const r = await write('/api/participants', {method: 'POST', body: file.slice(0, file.size, 'text/csv')});
    showLinks(r.participants);
    $('#p-csv').value = '';
    load();
  } catch (err) {
    showErrors(form, err);
  }
});

$('#participants').addEventListener('click', async (ev) => {
  const edit = ev.target.closest('button.edit');
  if (edit) {
    editRow(edit.closest('tr'));
    return;
  }
  // Removing takes two clicks: the first one asks.
  const rm = ev.target.closest('button.remove');
  if (rm) {
    if (!rm.dataset.armed) {
      rm.dataset.armed = '1';
      rm.textContent = t('participants.really_remove');
      setTimeout(() => { delete rm.dataset.armed; rm.textContent = rm.dataset.label; }, 4000);
      return;
    }
    try {
      await write(`/api/participants/${rm.dataset.id}`, {method: 'DELETE'});
      load();
    } catch (err) {
      showError($('#participants-error'), err);
    }
    return;
  }
  const b = ev.target.closest('button.reinvite');
  if (!b) return;
  try {
    showLinks([await write(`/api/participants/${b.dataset.id}/invitation`, {method: 'POST'})]);
    load();
  } catch (err) {
    showError($('#participants-error'), err);
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
    showErrors(ev.target, {field: 'close_at', message: t('participants.pick_time')});
    return;
  }
  lock({close_at: new Date(v).toISOString()});
});
$('#lock-now').addEventListener('click', () => lock({locked: true}));
$('#lock-open').addEventListener('click', () => lock({locked: false}));

document.addEventListener('taikai:admin', (ev) => { if (ev.detail) load(); });
if (isAdmin()) load();
