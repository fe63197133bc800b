// engines.js: the registered engines, the form to submit one (a command with
// optional files, or a built-in), and delete buttons.
import {$, $$, h, href, api, write, plural, fmt, isAdmin, participantID, showErrors, clearErrors} from 'taikai/app.js';

// TEXT: the sentences this file adds for participants, owners, versions and
// checks (for the translation catalog).
const TEXT = {
  adminOwner: 'Admin',
  withdraw: 'Withdraw',
  replace: 'New version',
  replacing: 'You are submitting a new version of {name}: its name and game stay, and the old version stays in its history.',
  replaced: 'Submitted version {version} of {name}.',
  checkQueued: 'The check is waiting for its turn.',
  checkRunning: 'The check is playing its game.',
  checkPassed: 'Passed: {message}',
  checkFailed: 'Failed: {message}',
  checkNone: 'Not checked yet.',
  open: 'Submissions are open.',
  openUntil: 'Submissions are open until {at}.',
  closed: 'Submissions closed at {at}: participants can no longer submit, replace or withdraw engines.',
};

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
    $('#engines-error').textContent = err.message;
    return;
  }
  $('#engines tbody').replaceChildren(...list.map(engineRow));
  $('#engines-empty').hidden = list.length > 0;
  $('#engine-count').textContent = plural(list.length, 'engine');
  // A check under way is shown at once when it is done: poll until then.
  clearTimeout(polling);
  if (list.some((e) => e.check && e.check.status !== 'done')) polling = setTimeout(loadEngines, 1000);
}

/** mine says whether the signed-in user may change e. */
const mine = (e) => isAdmin() || (participantID() > 0 && e.owner && e.owner.id === participantID());

function checkCell(e) {
  const c = e.check;
  if (!c) return h('td', {class: 'check-cell muted', text: e.builtin ? '' : TEXT.checkNone});
  let text = TEXT.checkQueued;
  let cls = 'check-cell';
  if (c.status === 'running') text = TEXT.checkRunning;
  if (c.status === 'done') {
    text = fmt(c.ok ? TEXT.checkPassed : TEXT.checkFailed, {message: c.message});
    cls += c.ok ? ' ok' : ' failed';
  }
  return h('td', {class: cls, dataset: {status: c.status, ok: c.status === 'done' ? String(c.ok) : ''}, text});
}

async function loadSubmissions() {
  try {
    const sub = await api('/api/submissions');
    let text = TEXT.open;
    if (sub.close_at) text = fmt(sub.open ? TEXT.openUntil : TEXT.closed, {at: new Date(sub.close_at).toLocaleString()});
    $('#submissions-state').textContent = text;
  } catch (err) {
    console.warn('submissions:', err.message);
  }
}

function engineRow(e) {
  const del = h('button', {type: 'button', class: 'button ghost small danger-text delete', dataset: {id: e.id, label: isAdmin() ? 'Delete' : TEXT.withdraw}, text: isAdmin() ? 'Delete' : TEXT.withdraw});
  const actions = mine(e) ? [
    h('button', {type: 'button', class: 'button ghost small check', dataset: {id: e.id, name: e.name}, text: 'Check'}), ' ',
    e.builtin ? null : h('button', {type: 'button', class: 'button ghost small replace', dataset: {id: e.id}, text: TEXT.replace}), ' ', del] : [];
  return h('tr', {dataset: {engineId: e.id}},
    h('td', {class: 'num', text: e.id}),
    h('td', {class: 'name'}, h('a', {href: href(`/engines/${e.id}`), class: 'strong engine-link', text: e.name}),
      e.builtin ? h('span', {class: 'badge', text: 'built-in'}) : null,
      e.uploaded ? h('span', {class: 'badge', text: 'uploaded'}) : null),
    h('td', null, h('span', {class: `game-tag game-${e.game}`, text: e.game})),
    h('td', {text: e.protocol}),
    h('td', {class: 'command'}, h('code', {text: e.command_line}), e.port ? h('span', {class: 'muted small', text: ` port ${e.port}`}) : null),
    h('td', {class: 'owner', text: e.owner ? e.owner.name : TEXT.adminOwner}),
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
  $('#replace-text').textContent = fmt(TEXT.replacing, replacing);
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

// Check: one short game against a built-in (POST /api/engines/{id}/check),
// and what went wrong in a sentence, with the end of the engine's output.
$('#engines').addEventListener('click', async (ev) => {
  const b = ev.target.closest('button.check');
  if (!b) return;
  const box = $('#check-result');
  box.hidden = false;
  box.className = 'card check-result';
  $('#check-title').textContent = `Checking ${b.dataset.name}: one game against a built-in…`;
  $('#check-message').textContent = '';
  $('#check-log').textContent = '';
  b.disabled = true;
  try {
    const r = await write(`/api/engines/${b.dataset.id}/check`, {method: 'POST'});
    box.classList.add(r.ok ? 'ok' : 'failed');
    $('#check-title').textContent = `${b.dataset.name}: ${r.ok ? 'passed' : 'failed'} against ${r.opponent} (${r.seconds} s)`;
    $('#check-message').textContent = r.message;
    $('#check-log').textContent = r.log || '(no output)';
  } catch (err) {
    $('#check-title').textContent = `${b.dataset.name}: the check could not run`;
    $('#check-message').textContent = err.message;
  } finally {
    b.disabled = false;
    loadEngines();
  }
});

// Deleting takes two clicks: the first one asks.
$('#engines').addEventListener('click', async (ev) => {
  const b = ev.target.closest('button.delete');
  if (!b) return;
  if (!b.dataset.armed) {
    b.dataset.armed = '1';
    b.textContent = 'Really delete?';
    setTimeout(() => { delete b.dataset.armed; b.textContent = b.dataset.label; }, 4000);
    return;
  }
  $('#engines-error').textContent = '';
  try {
    await write(`/api/engines/${b.dataset.id}`, {method: 'DELETE'});
  } catch (err) {
    $('#engines-error').textContent = err.message;
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
  $('#e-builtin-about').textContent = b ? b.about : '';
  // Protocols: the game's, or the ones the chosen built-in speaks.
  const psel = $('#e-protocol');
  const keepP = psel.value;
  const protos = builtin && b ? b.protocols : catalog.protocols[game] || [];
  psel.replaceChildren(...protos.map((p, i) => h('option', {value: p, text: i === 0 ? `${p} (default)` : p})));
  if (protos.includes(keepP)) psel.value = keepP;
}

async function loadCatalog() {
  try {
    catalog = await api('/api/builtins');
  } catch (err) {
    console.warn('builtins:', err.message);
  }
  $('#e-placeholders').textContent = 'Placeholders: ' + (catalog.placeholders || []).map((p) => `{${p}}`).join(' ');
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
    $('#engine-ok').textContent = replacing
      ? fmt(TEXT.replaced, e)
      : `Registered ${e.name} (id ${e.id})${e.files && e.files.length ? ` with ${plural(e.files.length, 'file')}` : ''}.`;
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
