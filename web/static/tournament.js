// tournament.js: one tournament: progress, standings, crosstable, a chart of
// points over games, the games with filters, its running games, start/cancel.
// A league has a ladder instead of standings (each engine's current version,
// its rating and change since its previous version), no progress and no
// chart, and may be paused.
import {$, $$, h, href, live, showConn, api, write, throttle, duration, points, signedInt, reasonLabels, pageData, t, label, number, showError} from 'taikai/app.js';
import {LiveGrid} from 'taikai/livegrid.js';
import {setProgress} from 'taikai/progress.js';
import {lineChart, seriesStyle} from 'taikai/chart.js';

let tour = pageData();
const id = tour.id;
const league = tour.format === 'league';
let standings = [];
let etaAt = 0; // Date.now() when the ETA runs out, 0 for none

// ---- header and progress ----

function renderHead() {
  const st = $('#status');
  st.textContent = label('status', tour.status);
  st.className = `status status-${tour.status}`;
  const open = tour.status === 'pending' || tour.status === 'running' || tour.status === 'paused';
  $('#start').hidden = tour.status !== 'pending' && tour.status !== 'paused';
  $('#start').textContent = tour.status === 'paused' ? t('league.resume') : t('tournament.start');
  $('#cancel').hidden = !open;
  if (league) {
    $('#pause').hidden = tour.status !== 'running';
    $('#league-games').textContent = t('league.games_played', {count: tour.finished_games});
    return;
  }
  setProgress($('#progress'), tour.finished_games, tour.total_games);
  $('#progress-text').textContent = t('tournament.progress', {done: tour.finished_games, count: tour.total_games});
  tickETA();
}

function tickETA() {
  const el = $('#eta');
  if (tour.status !== 'running' || !etaAt) {
    el.textContent = tour.status === 'finished' ? t('tournament.eta_finished') : '';
    return;
  }
  el.textContent = t('tournament.eta', {time: duration((etaAt - Date.now()) / 1000)});
}
if (!league) setInterval(tickETA, 1000);

async function loadTournament() {
  try {
    tour = await api(`/api/tournaments/${id}`);
    etaAt = tour.eta_seconds !== null && tour.eta_seconds !== undefined ? Date.now() + tour.eta_seconds * 1000 : 0;
    renderHead();
    watchLive();
  } catch (err) {
    console.warn('tournament:', err.message);
  }
}
const refreshTournament = throttle(loadTournament, 2000);

// ---- standings and crosstable ----

const eloText = (s) => {
  if (!s.games) return '–';
  return signedInt(s.elo) + (s.elo_error > 0 ? ` ±\u00a0${Math.round(s.elo_error)}` : '');
};

// ladderRow is one engine of a league: its current version's rating, its
// change since the previous version, and a badge while it plays its
// placement games.
function ladderRow(s, i) {
  const change = s.elo_change === null || s.elo_change === undefined ? null : signedInt(s.elo_change);
  const prev = s.previous;
  return h('tr', {dataset: {engineId: s.engine_id, version: s.version, games: s.games}},
    h('td', {class: 'num rank', text: i + 1}),
    // The version beside the name: a phone shows it without scrolling.
    h('td', {class: 'name'}, h('span', {class: 'swatch', dataset: {i}}), h('a', {href: href(`/engines/${s.engine_id}`), class: 'engine-link', text: s.name}),
      ' ', h('small', {class: 'muted version', text: t('league.version_short', {version: s.version})}),
      s.placement ? h('span', {class: 'badge placement', title: t('league.placement_long'), text: t('league.placement')}) : null),
    h('td', {class: 'num strong rating', text: s.games ? eloText(s) : '–'}),
    h('td', {class: `num change${change?.startsWith('+') ? ' up' : change?.startsWith('−') ? ' down' : ''}`,
      title: prev ? t('league.change_from', {version: prev.version, elo: prev.games ? eloText(prev) : '–'}) : t('league.first_version'),
      text: change ?? '–'}),
    h('td', {class: 'num games', text: s.games}),
    h('td', {class: 'num', text: s.wins}),
    h('td', {class: 'num', text: s.draws}),
    h('td', {class: 'num', text: s.losses}));
}

function renderStandings(rows) {
  standings = rows || [];
  if (league) {
    standings = standings.filter((s) => s.current !== false);
    $('#standings tbody').replaceChildren(...standings.map(ladderRow));
    $('#ladder-empty').hidden = standings.length > 0;
    for (const sw of $$('#standings .swatch')) sw.style.background = seriesStyle(Number(sw.dataset.i)).color;
    return;
  }
  let rank = 0;
  const body = $('#standings tbody');
  body.replaceChildren(...standings.map((s, i) => {
    if (i === 0 || s.points !== standings[i - 1].points) rank = i + 1;
    return h('tr', {dataset: {engineId: s.engine_id}},
      h('td', {class: 'num rank', text: rank}),
      h('td', {class: 'name'}, h('span', {class: 'swatch', dataset: {i}}), h('a', {href: href(`/engines/${s.engine_id}`), class: 'engine-link', text: s.name})),
      // What matters first (a phone shows these without scrolling).
      h('td', {class: 'num strong', text: points(s.points)}),
      h('td', {class: 'num', text: s.games ? t('unit.percent', {n: number(s.score_pct, 1)}) : '–'}),
      h('td', {class: 'num elo', text: eloText(s)}),
      h('td', {class: 'num', text: s.games}),
      h('td', {class: 'num', text: s.wins}),
      h('td', {class: 'num', text: s.draws}),
      h('td', {class: 'num', text: s.losses}));
  }));
  for (const sw of $$('#standings .swatch')) sw.style.background = seriesStyle(Number(sw.dataset.i)).color;
}

function renderCrosstable(cells) {
  if (league) return; // a ladder of versions has no crosstable
  const n = standings.length;
  const head = $('#crosstable thead');
  head.replaceChildren(h('tr', null, h('th', {class: 'num', text: '#'}), h('th', {text: t('col.engine')}),
    ...standings.map((s, i) => h('th', {class: 'num', title: s.name, text: i + 1})),
    h('th', {class: 'num', text: t('col.points')})));
  $('#crosstable tbody').replaceChildren(...standings.map((s, i) => h('tr', null,
    h('td', {class: 'num', text: i + 1}),
    h('td', {class: 'name'}, h('a', {href: href(`/engines/${s.engine_id}`), class: 'engine-link', text: s.name})),
    ...Array.from({length: n}, (_, j) => {
      if (i === j) return h('td', {class: 'num self'});
      const c = cells && cells[i] && cells[i][j];
      if (!c || !c.games) return h('td', {class: 'num'});
      const ratio = c.points / c.games;
      const cls = ratio > 0.5 ? 'win' : ratio < 0.5 ? 'loss' : 'even';
      return h('td', {class: `num cell ${cls}`, title: t('crosstable.cell', {a: s.name, b: standings[j].name, wins: c.wins, draws: c.draws, losses: c.losses})},
        points(c.points), h('small', {class: 'of', text: `/${c.games}`}));
    }),
    h('td', {class: 'num strong', text: points(s.points)}))));
}

// The table is fetched once at load, for when the socket is slow to come;
// a table from the socket is as new or newer, so it wins.
let tablesFromSocket = 0;

async function loadStandings() {
  const before = tablesFromSocket;
  try {
    const [st, ct] = await Promise.all([api(`/api/tournaments/${id}/standings`), league ? {} : api(`/api/tournaments/${id}/crosstable`)]);
    if (before !== tablesFromSocket) return;
    renderStandings(st.standings);
    renderCrosstable(ct.cells);
  } catch (err) {
    console.warn('standings:', err.message);
  }
}

// ---- chart: each engine's points after each of its games ----

async function loadChart() {
  if (league) return; // a league's games never end: no chart of them all
  let games;
  try {
    games = (await api(`/api/tournaments/${id}/games?status=finished&limit=5000`)).games;
  } catch (err) {
    console.warn('chart:', err.message);
    return;
  }
  games.sort((a, b) => (a.ended_at || '').localeCompare(b.ended_at || '') || a.id - b.id);
  const lines = new Map(standings.map((s) => [s.engine_id, {name: s.name, points: [[0, 0]], total: 0}]));
  for (const g of games) {
    for (const [side, p] of [['black', g.black], ['white', g.white]]) {
      const l = lines.get(p.engine_id);
      if (!l) continue;
      l.total += g.result === side ? 1 : g.result === 'draw' ? 0.5 : 0;
      l.points.push([l.points.length, l.total]);
    }
  }
  let svg = $('#chart svg');
  if (!svg) {
    svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', t('chart.points_label'));
    $('#chart').append(svg, h('ul', {class: 'legend'}));
  }
  chartSeries = [...lines.values()];
  const series = chartSeries;
  lineChart(svg, series, {xLabel: t('chart.games_played'), yLabel: t('chart.points')});
  $('#chart .legend').replaceChildren(...series.map((sr, i) => {
    const sw = h('span', {class: 'swatch'});
    sw.style.background = seriesStyle(i).color;
    return h('li', null, sw, sr.name);
  }));
}
const refreshChart = throttle(loadChart, 3000);
let chartSeries = null;
window.addEventListener('resize', throttle(() => {
  const svg = $('#chart svg');
  if (svg && chartSeries) lineChart(svg, chartSeries, {xLabel: t('chart.games_played'), yLabel: t('chart.points')});
}, 250));

// ---- head to head: each pair of engines, with its statistics and SPRT ----

const num = (v, digits = 1) => (v === null || v === undefined ? '–' : number(v, digits));
const signed = (v) => (v === null || v === undefined ? '–' : (v > 0 ? '+' : v < 0 ? '−' : '') + number(Math.abs(v), 1));

async function loadPairs() {
  if (league) return; // every pair of a league's versions: too many to list
  let pairs;
  try {
    pairs = (await api(`/api/tournaments/${id}/pairs`)).pairs;
  } catch (err) {
    console.warn('pairs:', err.message);
    return;
  }
  const paired = !!(tour.settings && (tour.settings.pairs || tour.settings.openings));
  $('#pairs-section').hidden = pairs.length === 0;
  $('#pairs-note').textContent = paired
    ? t('pairs.note_paired')
    : t('pairs.note_games');
  $('#pairs tbody').replaceChildren(...pairs.map((p) => h('tr', null,
    h('td', {class: 'name', text: t('pairs.versus', {a: p.a.name, b: p.b.name})}),
    h('td', {class: 'num', text: p.games}),
    h('td', {class: 'num', text: p.wins}),
    h('td', {class: 'num', text: p.draws}),
    h('td', {class: 'num', text: p.losses}),
    h('td', {class: 'num penta', text: p.pentanomial ? p.pentanomial.join(' ') : '–'}),
    h('td', {class: 'num', text: p.elo === null ? '–' : `${signed(p.elo)} ± ${num(p.elo_error)}`}),
    h('td', {class: 'num', text: p.nelo === null ? '–' : `${signed(p.nelo)} ± ${num(p.nelo_error)}`}),
    h('td', {class: 'num', text: p.los === null ? '–' : t('unit.percent', {n: num(p.los)})}),
    h('td', {class: 'num', text: p.draw_ratio === null ? '–' : t('unit.percent', {n: num(p.draw_ratio)})}))));
  const sp = pairs.length === 1 ? pairs[0].sprt : null;
  $('#sprt').hidden = !sp;
  if (!sp) return;
  const llr = {llr: number(sp.llr, 2), lower: number(sp.lower, 2), upper: number(sp.upper, 2)};
  $('#sprt-text').textContent = sp.result === 'H1' ? t('sprt.H1', llr) : sp.result === 'H0' ? t('sprt.H0', llr) : t('sprt.continue', llr);
  let svg = $('#sprt-chart svg');
  if (!svg) {
    svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', t('chart.llr_label'));
    $('#sprt-chart').append(svg);
  }
  const points = [[0, 0], ...sp.history];
  lineChart(svg, [{name: 'LLR', points}], {xLabel: paired ? t('chart.game_pairs') : t('chart.games'), yLabel: 'LLR',
    marks: [{y: sp.upper, name: `H1 ${number(sp.upper, 2)}`}, {y: sp.lower, name: `H0 ${number(sp.lower, 2)}`}]});
}
const refreshPairs = throttle(loadPairs, 3000);

// ---- knockout: the bracket, a column per round ----

async function loadBracket() {
  if (tour.format !== 'knockout') return;
  let b;
  try {
    b = await api(`/api/tournaments/${id}/bracket`);
  } catch (err) {
    console.warn('bracket:', err.message);
    return;
  }
  const name = (i) => (i >= 0 && b.engines[i] ? b.engines[i].name : i === -1 ? '—' : '?');
  const n = b.rounds.length;
  const title = (r) => (r === n - 1 ? t('bracket.final') : r === n - 2 ? t('bracket.semi') : r === n - 3 ? t('bracket.quarter') : t('bracket.round', {n: r + 1}));
  $('#bracket-section').hidden = false;
  $('#bracket').replaceChildren(...b.rounds.map((rd, r) => h('div', {class: 'bracket-round'},
    h('h3', {text: title(r)}),
    ...rd.matches.map((m) => {
      const side = (i, score) => h('div', {class: 'bracket-side' + (m.winner >= 0 && m.winner === i ? ' winner' : '')},
        h('span', {class: 'name', text: m.decided === 'bye' && i < 0 ? t('bracket.bye') : name(i)}),
        h('span', {class: 'num', text: m.games ? points(score) : ''}));
      const how = m.decided === 'seed' ? t('bracket.seed') : m.decided === 'bye' ? t('bracket.bye') : m.games ? t('bracket.games', {count: m.games}) : '';
      return h('div', {class: 'bracket-match', dataset: {decided: m.decided || 'open'}},
        side(m.a, m.score_a), side(m.b, m.score_b), h('small', {class: 'muted', text: how}));
    }))));
}
const refreshBracket = throttle(loadBracket, 3000);

// ---- games ----

const PAGE = 100;
let shown = 0;

function gameQuery(offset, limit) {
  // A league's list only grows: its newest games first.
  const q = new URLSearchParams(league ? {limit, offset, order: 'newest'} : {limit, offset});
  for (const [key, sel] of [['engine', '#filter-engine'], ['status', '#filter-status'], ['result', '#filter-result'], ['reason', '#filter-reason']]) {
    const v = $(sel).value;
    if (v) q.set(key, v);
  }
  return `/api/tournaments/${id}/games?${q}`;
}

const score = {black: '1–0', white: '0–1', draw: '½–½'};

// player is a side's name, and in a league the version that played.
const player = (p) => (league && p.version ? [p.name, ' ', h('small', {class: 'muted', text: t('league.version_short', {version: p.version})})] : [p.name]);

function gameRow(g) {
  const link = (child) => (g.id ? h('a', {href: href(`/games/${g.id}`)}, child) : child);
  const win = (side) => (g.result === side ? 'strong' : '');
  return h('tr', {class: `game-row game-${g.status}`, dataset: {gameId: g.id ?? '', status: g.status}},
    h('td', {class: 'num'}, link(String(g.index + 1))),
    h('td', {class: win('black')}, h('span', {class: 'disc-icon black'}), ' ', ...player(g.black)),
    h('td', {class: win('white')}, h('span', {class: 'disc-icon white'}), ' ', ...player(g.white)),
    h('td', {class: 'result-cell'}, link(g.status === 'finished' ? score[g.result] || g.result : label('status', g.status))),
    h('td', {text: g.reason ? reasonLabels[g.reason] || g.reason : ''}),
    h('td', {class: 'num', text: g.status === 'scheduled' ? '' : g.plies}));
}

let gamesAsked = 0; // the latest request wins: filters change faster than answers come

async function loadGames(more = false) {
  const offset = more ? shown : 0;
  const limit = more ? PAGE : Math.max(PAGE, shown);
  const ask = ++gamesAsked;
  let list;
  try {
    list = (await api(gameQuery(offset, limit))).games;
  } catch (err) {
    console.warn('games:', err.message);
    return;
  }
  if (ask !== gamesAsked) return;
  const body = $('#games tbody');
  if (!more) body.replaceChildren();
  body.append(...list.map(gameRow));
  shown = offset + list.length;
  $('#games-more').hidden = list.length < limit;
  $('#games-empty').hidden = shown > 0;
}
const refreshGames = throttle(() => loadGames(false), 1500);

$('#game-filters').addEventListener('change', () => { shown = 0; loadGames(false); });
$('#game-filters').addEventListener('submit', (ev) => ev.preventDefault());
$('#games-more').addEventListener('click', () => loadGames(true));

// ---- live ----

const grid = new LiveGrid($('#running'), $('#running-empty'), {keep: (g) => g.tournament_id === id});

// The running-games section shows while the tournament can still play, and
// for a moment after, so the last boards can be seen to finish.
function watchLive() {
  const active = tour.status === 'running' || tour.status === 'pending' || tour.status === 'paused';
  if (active) {
    $('#running-section').hidden = false;
  } else {
    setTimeout(() => {
      if (!grid.cards.size) $('#running-section').hidden = true;
    }, 6000);
  }
}

// One socket tells everything about this tournament: its table, its games
// starting and ending, and their moves for the live boards.
live(`/ws/tournaments/${id}`, (msg) => {
  switch (msg.type) {
    case 'snapshot':
      grid.snapshot(msg.running || []);
      // falls through: a snapshot carries the table too
    case 'standings':
      tablesFromSocket++;
      if (msg.tournament) Object.assign(tour, msg.tournament);
      renderHead();
      renderStandings(msg.standings);
      renderCrosstable(msg.crosstable);
      refreshChart();
      refreshPairs();
      refreshBracket();
      break;
    case 'move':
      grid.move(msg);
      break;
    case 'game_started':
      grid.started(msg.game, msg.board);
      refreshGames();
      break;
    case 'game_ended':
      grid.ended(msg.game);
      refreshGames();
      refreshTournament();
      break;
    case 'tournament':
      Object.assign(tour, msg.tournament);
      renderHead();
      watchLive();
      refreshTournament();
      break;
  }
  return undefined;
}, showConn($('#live-status')));

// ---- admin ----

$('#start').addEventListener('click', async () => {
  $('#action-error').textContent = '';
  try {
    tour = await write(`/api/tournaments/${id}/start`, {method: 'POST'});
    loadTournament();
    refreshGames();
  } catch (err) {
    showError($('#action-error'), err);
  }
});

$('#pause')?.addEventListener('click', async () => {
  $('#action-error').textContent = '';
  try {
    tour = await write(`/api/tournaments/${id}/pause`, {method: 'POST'});
    loadTournament();
  } catch (err) {
    showError($('#action-error'), err);
  }
});

// Cancelling takes two clicks: the first one asks.
let armed = 0;
$('#cancel').addEventListener('click', async () => {
  const b = $('#cancel');
  if (!armed) {
    b.textContent = t('tournament.really_cancel');
    armed = setTimeout(() => { armed = 0; b.textContent = t('tournament.cancel'); }, 4000);
    return;
  }
  clearTimeout(armed);
  armed = 0;
  b.textContent = t('tournament.cancel');
  $('#action-error').textContent = '';
  try {
    tour = await write(`/api/tournaments/${id}/cancel`, {method: 'POST'});
    loadTournament();
    refreshGames();
  } catch (err) {
    showError($('#action-error'), err);
  }
});

renderHead();
loadTournament();
loadStandings().then(loadChart);
loadPairs();
loadBracket();
loadGames();
