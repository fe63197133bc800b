// engines.js: the registered engines, the form to submit one (a command with
// optional files, or a built-in), and delete buttons.
import {$, $$, h, href, api, write, plural, showErrors, clearErrors} from 'taikai/app.js';

const form = $('#engine-form');
let catalog = {builtins: [], protocols: {}, placeholders: []};

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
}

function engineRow(e) {
  const del = h('button', {type: 'button', class: 'button ghost small danger-text delete', dataset: {id: e.id}, text: 'Delete'});
  return h('tr', {dataset: {engineId: e.id}},
    h('td', {class: 'num', text: e.id}),
    h('td', {class: 'name'}, h('a', {href: href(`/engines/${e.id}`), class: 'strong engine-link', text: e.name}),
      e.builtin ? h('span', {class: 'badge', text: 'built-in'}) : null,
      e.uploaded ? h('span', {class: 'badge', text: 'uploaded'}) : null),
    h('td', null, h('span', {class: `game-tag game-${e.game}`, text: e.game})),
    h('td', {text: e.protocol}),
    h('td', {class: 'command'}, h('code', {text: e.command_line}), e.port ? h('span', {class: 'muted small', text: ` port ${e.port}`}) : null),
    h('td', {class: 'admin-only actions-cell'},
      h('button', {type: 'button', class: 'button ghost small check', dataset: {id: e.id, name: e.name}, text: 'Check'}), ' ', del));
}

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
  }
});

// Deleting takes two clicks: the first one asks.
$('#engines').addEventListener('click', async (ev) => {
  const b = ev.target.closest('button.delete');
  if (!b) return;
  if (!b.dataset.armed) {
    b.dataset.armed = '1';
    b.textContent = 'Really delete?';
    setTimeout(() => { delete b.dataset.armed; b.textContent = 'Delete'; }, 4000);
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
    const e = await write('/api/engines', {method: 'POST', body});
    $('#engine-ok').textContent = `Registered ${e.name} (id ${e.id})${e.files && e.files.length ? ` with ${plural(e.files.length, 'file')}` : ''}.`;
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

loadCatalog();
loadEngines();
