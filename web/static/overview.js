// overview.js: the games being played now (from /ws/live), the tournaments
// with their progress, and the admin's form for a new tournament.
import {$, $$, h, href, live, showConn, api, write, throttle, duration, showErrors, clearErrors, isAdmin, t, label} from 'taikai/app.js';
import {LiveGrid} from 'taikai/livegrid.js';
import {progress} from 'taikai/progress.js';

const names = new Map(); // tournament id -> name
const grid = new LiveGrid($('#live-games'), $('#live-empty'), {label: (g) => names.get(g.tournament_id) || ''});

// ---- tournaments ----

const order = {running: 0, pending: 1, finished: 2, cancelled: 3};
let tournaments = [];
let fetchedAt = 0;

async function loadTournaments() {
  try {
    const data = await api('/api/tournaments');
    tournaments = data.tournaments;
    fetchedAt = Date.now();
    for (const tn of tournaments) names.set(tn.id, tn.name);
    grid.relabel();
    renderTournaments();
  } catch (err) {
    console.warn('tournaments:', err.message);
  }
}
const refreshTournaments = throttle(loadTournaments, 2000);

function renderTournaments() {
  const all = $('#show-all-tournaments').checked;
  const list = [...tournaments].sort((a, b) => (order[a.status] - order[b.status]) || (b.id - a.id));
  let done = 0;
  const shown = list.filter((tn) => all || tn.status === 'running' || tn.status === 'pending' || done++ < 5);
  const body = $('#tournaments tbody');
  body.replaceChildren(...shown.map((tn) => h('tr', {dataset: {id: tn.id, status: tn.status}},
    h('td', null, h('a', {href: href(`/tournaments/${tn.id}`), class: 'strong', text: tn.name}),
      h('div', {class: 'muted small', text: tn.format === 'league' ? t('overview.league_line', {count: tn.finished_games, at_once: tn.concurrency})
        : t('overview.tournament_line', {count: tn.total_games, per_pair: tn.games_per_pair, at_once: tn.concurrency})})),
    h('td', null, h('span', {class: `game-tag game-${tn.game}`, text: label('gamename', tn.game)})),
    h('td', null, h('span', {class: `status status-${tn.status}`, text: label('status', tn.status)})),
    // A league has no end: no progress.
    h('td', {class: 'progress-col'}, tn.format === 'league' ? h('span', {class: 'muted', text: label('format', 'league')}) : progress(tn.finished_games, tn.total_games)),
    h('td', {class: 'num eta', dataset: {eta: tn.eta_seconds ?? ''}}))));
  $('#tournaments-empty').hidden = tournaments.length > 0;
  $('#tournaments').hidden = tournaments.length === 0;
  tickETA();
}

// The ETA counts down between refreshes.
function tickETA() {
  for (const td of $$('#tournaments td.eta')) {
    const eta = td.dataset.eta;
    td.textContent = eta === '' ? '' : duration(Number(eta) - (Date.now() - fetchedAt) / 1000);
  }
}
setInterval(tickETA, 1000);
$('#show-all-tournaments').addEventListener('change', renderTournaments);

// ---- live games ----

live('/ws/live', (msg) => {
  switch (msg.type) {
    case 'snapshot': grid.snapshot(msg.running); break;
    case 'game_started': grid.started(msg.game, msg.board); break;
    case 'move': grid.move(msg); break;
    case 'game_ended': grid.ended(msg.game); refreshTournaments(); break;
    case 'tournament': {
      const tn = tournaments.find((x) => x.id === msg.tournament.id);
      if (tn) {
        Object.assign(tn, msg.tournament);
        renderTournaments();
      }
      refreshTournaments();
      break;
    }
  }
  return undefined;
}, showConn($('#live-status')));

// ---- new tournament ----

const form = $('#tournament-form');
let engines = [];

async function loadEngines() {
  try {
    engines = (await api('/api/engines')).engines;
    renderEngineChoice();
  } catch (err) {
    console.warn('engines:', err.message);
  }
}

function renderEngineChoice() {
  const game = $('#t-game').value;
  const box = $('#t-engines');
  const chosen = new Set($$('input:checked', box).map((i) => i.value));
  const mine = engines.filter((e) => e.game === game);
  // Who submitted it and how its last check went: with forty students'
  // engines the teacher picks "every engine that passed".
  const checkOf = (e) => !e.check || e.check.status !== 'done' ? '' : e.check.ok ? 'passed' : 'failed';
  box.replaceChildren(...mine.map((e) => h('label', {class: 'check', dataset: {check: checkOf(e)}},
    h('input', {type: 'checkbox', name: 'engines', value: e.id, checked: chosen.has(String(e.id))}),
    h('span', {text: e.name}),
    h('small', {class: 'muted', text: e.builtin ? t('engines.builtin_badge') : e.owner ? t('form.engine_owner', {owner: e.owner.name}) : e.protocol}),
    checkOf(e) ? h('small', {class: `engine-check ${checkOf(e)}`, text: t(`form.engine_check_${checkOf(e)}`)}) : null)));
  if (!mine.length) box.append(h('p', {class: 'muted', text: t('form.no_engine', {game: label('gamename', game)})}));
  syncGameFields();
}

// syncGameFields shows the rule and size fields of a game that has a choice
// of them (the game's <option> carries its rules and sizes).
function syncGameFields() {
  const o = $('#t-game').selectedOptions[0];
  const rules = o && o.dataset.rules ? o.dataset.rules.split(',') : [];
  const rule = $('#t-rule');
  if (rule.dataset.game !== o.value) {
    rule.replaceChildren(...rules.map((r) => h('option', {value: r, text: label('rule', r)})));
    rule.dataset.game = o.value;
    const size = $('#t-size');
    size.min = o.dataset.minSize;
    size.max = o.dataset.maxSize;
    size.value = o.dataset.size;
  }
  for (const el of $$('.rule-only', form)) el.hidden = rules.length < 2;
  for (const el of $$('.size-only', form)) el.hidden = o.dataset.minSize === o.dataset.maxSize;
}

// The uploaded opening suites of the chosen game, beside the built-in one
// where the game (and rule) has one: the API lists them.
let suites = [];
let builtinSuites = [];
async function loadSuites() {
  try {
    const r = await api('/api/openings');
    suites = r.suites;
    builtinSuites = r.builtin || [];
  } catch (err) {
    console.warn('openings:', err.message);
  }
  renderSuites();
}
function renderSuites() {
  const sel = $('#t-openings');
  const keep = sel.value;
  const game = $('#t-game').value;
  const rule = $('#t-rule').closest('.rule-only').hidden ? '' : $('#t-rule').value;
  const builtin = builtinSuites.some((b) => b.game === game && (!rule || !b.rule || b.rule === rule));
  const options = [h('option', {value: '', text: t('form.openings.none')})];
  if (builtin) options.push(h('option', {value: 'builtin', text: t('form.openings.builtin')}));
  sel.replaceChildren(...options,
    ...suites.filter((s) => s.game === game).map((s) => h('option', {value: s.id,
      text: s.rule ? t('form.suite_rule', {name: s.name, count: s.openings, rule: label('rule', s.rule)}) : t('form.suite', {name: s.name, count: s.openings})})));
  sel.value = [...sel.options].some((o) => o.value === keep) ? keep : '';
}

$('#t-game').addEventListener('change', renderEngineChoice);
$('#t-game').addEventListener('change', renderSuites);
$('#t-rule').addEventListener('change', renderSuites);
$('#t-passed').addEventListener('click', () => {
  for (const l of $$('#t-engines label.check')) l.querySelector('input').checked = l.dataset.check === 'passed';
});
$('#t-format').addEventListener('change', () => {
  const f = $('#t-format').value;
  for (const el of $$('.swiss-only', form)) el.hidden = f !== 'swiss';
  for (const el of $$('.knockout-only', form)) el.hidden = f !== 'knockout';
  for (const el of $$('.league-only', form)) el.hidden = f !== 'league';
  for (const el of $$('.not-league', form)) el.hidden = f === 'league';
});
$('#t-all').addEventListener('click', () => { for (const i of $$('#t-engines input')) i.checked = true; });
$('#t-none').addEventListener('click', () => { for (const i of $$('#t-engines input')) i.checked = false; });

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  clearErrors(form);
  const game = $('#t-game').value;
  const body = {
    name: $('#t-name').value.trim(),
    game,
    engines: $$('#t-engines input:checked').map((i) => Number(i.value)),
    games_per_pair: Number($('#t-games').value) || 0,
    move_time_ms: Math.round(Number($('#t-move-time').value) * 1000) || 0,
    concurrency: Number($('#t-concurrency').value) || 0,
    pace_ms: Math.round(Number($('#t-pace').value) * 1000) || 0,
    connect_timeout_ms: Math.round(Number($('#t-connect').value) * 1000) || 0,
    start: $('#t-start').checked,
  };
  if (!$('#t-rule').closest('.rule-only').hidden) body.rule = $('#t-rule').value;
  const op = $('#t-openings').value;
  if (op === 'builtin') body.openings = {suite: 'builtin', order: $('#t-order').value};
  else if (op) body.openings = {suite_id: Number(op), order: $('#t-order').value};
  if ($('#t-pairs').checked) body.pairs = true;
  if ($('#t-sprt').value.trim()) body.sprt = $('#t-sprt').value.trim();
  body.format = $('#t-format').value;
  if (body.format === 'swiss') body.rounds = Number($('#t-rounds').value) || 0;
  if (body.format === 'knockout') body.max_extra = Number($('#t-max-extra').value) || 0;
  if (body.format === 'league') {
    // A league plays as many games as its ratings need, of its engines or
    // of every engine whose check passes (those submitted later too).
    delete body.games_per_pair;
    body.placement_games = Number($('#t-placement').value) || 0;
    if ($('#t-entrants-checked').checked) {
      body.entrants = 'checked';
      delete body.engines;
    }
  }
  if (!$('#t-size').closest('.size-only').hidden) body.size = Number($('#t-size').value) || 0;
  const button = $('button[type=submit]', form);
  button.disabled = true;
  try {
    const tn = await write('/api/tournaments', {method: 'POST', body});
    location.href = href(`/tournaments/${tn.id}`);
  } catch (err) {
    showErrors(form, err);
  } finally {
    button.disabled = false;
  }
});

document.addEventListener('taikai:admin', (ev) => { if (ev.detail) loadEngines(); });
if (isAdmin()) loadEngines();
loadTournaments();
loadSuites();
