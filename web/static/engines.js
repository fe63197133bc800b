// engines.js: the registered engines (owner, version, last check), the form
// to submit one (a command with optional files, or a built-in) or a new
// version of one, and check, replace and delete (withdraw) buttons.
import {$, $$, h, href, api, write, isAdmin, participantID, showErrors, clearErrors, t, tNodes, has, label, showError, dateTime, checkNodes} from 'taikai/app.js';

const form = $('#engine-form');
let catalog = {builtins: [], protocols: {}, placeholders: []};
let replacing = null; // the engine a new version is submitted for
let polling = 0;

// ---- list ----

async function loadEngines() {
  let list;
  try {
    list = (await api('/api/engines')).engines;
  } catch (err) {
    showError($('#engines-error'), err);
    return;
  }
  $('#engines tbody').replaceChildren(...list.map(engineRow));
  placeCheck();
  $('#engines-empty').hidden = list.length > 0;
  $('#engine-count').textContent = t('engines.count', {count: list.length});
  // A check under way is shown at once when it is done: poll until then.
  clearTimeout(polling);
  if (list.some((e) => e.check && e.check.status !== 'done')) polling = setTimeout(loadEngines, 1000);
}

/** mine says whether the signed-in user may change e. */
const mine = (e) => isAdmin() || (participantID() > 0 && e.owner && e.owner.id === participantID());

function checkCell(e) {
  const c = e.check;
  if (!c) return h('td', {class: 'check-cell muted', text: e.builtin ? '' : t('engines.check_none')});
  let text = t('engines.check_queued');
  let cls = 'check-cell';
  if (c.status === 'running') text = t('engines.check_running');
  if (c.status === 'done') {
    const p = {message: h('span', null, ...checkNodes(c))};
    text = tNodes(c.ok ? 'engines.check_passed' : 'engines.check_failed', p);
    cls += c.ok ? ' ok' : ' failed';
  }
  return h('td', {class: cls, dataset: {status: c.status, ok: c.status === 'done' ? String(c.ok) : ''}}, text);
}

async function loadSubmissions() {
  try {
    const sub = await api('/api/submissions');
    let text = t('submissions.open');
    if (sub.close_at) {
      const at = dateTime(sub.close_at);
      text = sub.open ? t('submissions.open_until', {at}) : t('engines.closed', {at});
    }
    $('#submissions-state').textContent = text;
  } catch (err) {
    console.warn('submissions:', err.message);
  }
}

// The delete buttons clicked once (armed), by engine id: the list is drawn
// anew every second while a check runs, and the second click must still
// delete.
const armed = new Set();

function engineRow(e) {
  const delLabel = isAdmin() ? t('engines.delete') : t('engines.withdraw');
  const del = h('button', {type: 'button', class: 'button ghost small danger-text delete', dataset: {id: e.id, label: delLabel}, text: delLabel});
  if (armed.has(String(e.id))) {
    del.dataset.armed = '1';
    del.textContent = t('engines.really_delete');
  }
  const actions = mine(e) ? [
    h('button', {type: 'button', class: 'button ghost small check', dataset: {id: e.id, name: e.name}, text: t('engines.check')}), ' ',
    e.builtin ? null : h('button', {type: 'button', class: 'button ghost small replace', dataset: {id: e.id}, text: t('engines.replace')}), ' ', del] : [];
  return h('tr', {dataset: {engineId: e.id}},
    h('td', {class: 'num', text: e.id}),
    h('td', {class: 'name'}, h('a', {href: href(`/engines/${e.id}`), class: 'strong engine-link', text: e.name}),
      e.builtin ? h('span', {class: 'badge', text: t('engines.builtin_badge')}) : null,
      e.uploaded ? h('span', {class: 'badge', text: t('engines.uploaded_badge')}) : null),
    h('td', null, h('span', {class: `game-tag game-${e.game}`, text: label('gamename', e.game)})),
    h('td', {text: e.protocol}),
    h('td', {class: 'command'}, h('code', {text: e.command_line}), e.port ? h('span', {class: 'muted small', text: ' ' + t('engines.port_n', {port: e.port})}) : null),
    h('td', {class: 'owner', text: e.owner ? e.owner.name : t('engines.owner_admin')}),
    h('td', {class: 'num version', text: e.version || ''}),
    checkCell(e),
    h('td', {class: 'member-only actions-cell'}, ...actions));
}

// A new version: the form submits with PUT /api/engines/{id}.
$('#engines').addEventListener('click', (ev) => {
  const b = ev.target.closest('button.replace');
  if (!b) return;
  const row = b.closest('tr');
  replacing = {id: Number(b.dataset.id), name: row.querySelector('.name .strong').textContent};
  $('#e-name').value = replacing.name;
  $('#e-name').disabled = true;
  $('#replace-text').textContent = t('engines.replacing', {name: replacing.name});
  $('#replace-note').hidden = false;
  $('#e-command').focus();
});

function stopReplacing() {
  replacing = null;
  $('#e-name').disabled = false;
  $('#e-name').value = '';
  $('#replace-note').hidden = true;
}
$('#replace-cancel').addEventListener('click', stopReplacing);

// The check's card shows under the row of the engine it checked (a list of
// forty students' engines would put it out of sight below the table).
let checkedRow = null;
const checkBox = $('#check-result');
const checkHome = checkBox.parentElement;
function placeCheck() {
  const box = checkBox;
  const tr = checkedRow && $(`#engines tr[data-engine-id="${checkedRow}"]`);
  if (!tr) {
    if (!box.isConnected) checkHome.append(box);
    return;
  }
  const cols = tr.children.length;
  const row = h('tr', {class: 'check-row', dataset: {checkFor: checkedRow}}, h('td', {colspan: cols}, box));
  $('#engines tr.check-row')?.remove();
  tr.after(row);
}

// Check: one short game against a built-in (POST /api/engines/{id}/check),
// and what went wrong in a sentence, with the end of the engine's output.
$('#engines').addEventListener('click', async (ev) => {
  const b = ev.target.closest('button.check');
  if (!b) return;
  const box = checkBox;
  checkedRow = b.dataset.id;
  placeCheck();
  box.hidden = false;
  box.className = 'card check-result';
  $('#check-title').textContent = t('check.running', {name: b.dataset.name});
  $('#check-message').textContent = '';
  $('#check-log').textContent = '';
  b.disabled = true;
  try {
    const r = await write(`/api/engines/${b.dataset.id}/check`, {method: 'POST'});
    box.classList.add(r.ok ? 'ok' : 'failed');
    const p = {name: b.dataset.name, opponent: r.opponent, seconds: r.seconds};
    $('#check-title').textContent = r.ok ? t('check.passed', p) : t('check.failed', p);
    $('#check-message').replaceChildren(...checkNodes(r));
    $('#check-log').textContent = r.log || t('check.no_output');
  } catch (err) {
    $('#check-title').textContent = t('check.could_not_run', {name: b.dataset.name});
    showError($('#check-message'), err);
  } finally {
    b.disabled = false;
    loadEngines();
  }
});

// Deleting takes two clicks: the first one asks.
$('#engines').addEventListener('click', async (ev) => {
  const b = ev.target.closest('button.delete');
  if (!b) return;
  const id = b.dataset.id;
  if (!armed.has(id)) {
    armed.add(id);
    b.dataset.armed = '1';
    b.textContent = t('engines.really_delete');
    setTimeout(() => {
      armed.delete(id);
      const now = $(`#engines button.delete[data-id="${id}"]`);
      if (now) {
        delete now.dataset.armed;
        now.textContent = now.dataset.label;
      }
    }, 4000);
    return;
  }
  armed.delete(id);
  $('#engines-error').textContent = '';
  try {
    await write(`/api/engines/${b.dataset.id}`, {method: 'DELETE'});
  } catch (err) {
    showError($('#engines-error'), err);
  }
  loadEngines();
});

// ---- form ----

const source = () => $('input[name=source]:checked', form).value;

function syncForm() {
  const game = $('#e-game').value;
  const builtin = source() === 'builtin';
  for (const el of $$('.command-only', form)) el.hidden = builtin;
  for (const el of $$('.builtin-only', form)) el.hidden = !builtin;
  const bsel = $('#e-builtin');
  const keepB = bsel.value;
  const mine = catalog.builtins.filter((b) => b.game === game);
  bsel.replaceChildren(...mine.map((b) => h('option', {value: b.name, text: b.name})));
  if (mine.some((b) => b.name === keepB)) bsel.value = keepB;
  const b = mine.find((x) => x.name === bsel.value);
  $('#e-builtin-about').textContent = b ? (has(`builtin.${b.name}`) ? t(`builtin.${b.name}`) : b.about) : '';
  // Protocols: the game's, or the ones the chosen built-in speaks.
  const psel = $('#e-protocol');
  const keepP = psel.value;
  const protos = builtin && b ? b.protocols : catalog.protocols[game] || [];
  psel.replaceChildren(...protos.map((p, i) => h('option', {value: p, text: i === 0 ? t('engines.protocol_default', {protocol: p}) : p})));
  if (protos.includes(keepP)) psel.value = keepP;
}

async function loadCatalog() {
  try {
    catalog = await api('/api/builtins');
  } catch (err) {
    console.warn('builtins:', err.message);
  }
  const list = h('code', {translate: 'no', text: (catalog.placeholders || []).map((p) => `{${p}}`).join(' ')});
  $('#e-placeholders').replaceChildren(...tNodes('engines.placeholders', {list}));
  syncForm();
}

$('#e-game').addEventListener('change', syncForm);
$('#e-builtin').addEventListener('change', syncForm);
for (const r of $$('input[name=source]', form)) r.addEventListener('change', syncForm);

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  clearErrors(form);
  $('#engine-ok').textContent = '';
  const meta = {name: $('#e-name').value.trim(), game: $('#e-game').value, protocol: $('#e-protocol').value};
  const files = $('#e-file').files;
  let body = meta;
  if (source() === 'builtin') {
    meta.builtin = $('#e-builtin').value;
  } else {
    meta.command = $('#e-command').value;
    const port = Number($('#e-port').value);
    if (port) meta.port = port;
    const connect = Number($('#e-connect').value);
    if (connect) meta.connect_timeout_ms = Math.round(connect * 1000);
    if (files.length) {
      body = new FormData();
      body.append('meta', JSON.stringify(meta));
      for (const f of files) body.append('file', f, f.name);
    }
  }
  const button = $('#e-submit');
  button.disabled = true;
  try {
    const e = replacing
      ? await write(`/api/engines/${replacing.id}`, {method: 'PUT', body})
      : await write('/api/engines', {method: 'POST', body});
    const n = e.files ? e.files.length : 0;
    $('#engine-ok').textContent = replacing
      ? t('engines.replaced', {name: e.name, version: e.version})
      : n ? t('engines.registered_files', {name: e.name, id: e.id, count: n}) : t('engines.registered', {name: e.name, id: e.id});
    stopReplacing();
    $('#e-name').value = '';
    $('#e-command').value = '';
    $('#e-port').value = '';
    $('#e-connect').value = '';
    $('#e-file').value = '';
    loadEngines();
  } catch (err) {
    showErrors(form, err);
  } finally {
    button.disabled = false;
  }
});

document.addEventListener('taikai:admin', () => loadEngines());
loadCatalog();
loadEngines();
loadSubmissions();
