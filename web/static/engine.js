// engine.js: one engine's page: its rating over all its games, the
// tournaments it entered, its record against each opponent, its violations
// and time use, and its games with links to their pages and its logs.
// Each section has its own render function, so that one can be added (the
// engine's versions) without touching the others.
import {$, h, href, api, points, seconds, fill, reasonLabels, pageData} from 'taikai/app.js';

// ---- texts: every text this page writes, whole, with {placeholders} ----
const TEXT = {
  eloNone: 'no rating yet',
  ratingNote: 'rank {rank} of {engines} engines, over {games} finished games',
  ratingNoGames: 'This engine has no finished game yet.',
  place: '{rank} of {entrants}',
  none: 'none',
  refusedItem: '{kind}: {count}',
  lostByItem: '{reason}: {count}',
  gamesCount: '{shown} of {total} games',
  movesCount: '{moves} moves in {games} games',
  slowest: '{time} (game {game})',
  memory: '{mib} MiB',
  notMeasured: 'not measured',
  colour: {black: 'black', white: 'white'},
  outcome: {win: 'win', draw: 'draw', loss: 'loss'},
  status: {running: 'playing', aborted: 'aborted'},
  logLink: 'output',
  logNone: 'not kept',
  format: {round_robin: 'round robin', gauntlet: 'gauntlet', swiss: 'swiss', knockout: 'knockout', match: 'match'},
  loadError: 'The engine\'s record could not be loaded: {message}',
  noFiles: 'no files',
  filesHash: 'SHA-256 {hash}',
  current: '{version} (current)',
};

const engine = pageData();
const id = engine.id;

const signed = (v) => (v > 0 ? '+' : v < 0 ? '−' : '') + Math.abs(Math.round(v));
const eloText = (elo, err) => signed(elo) + (err > 0 ? ` ± ${Math.round(err)}` : '');
const engineLink = (eid, name) => h('a', {href: href(`/engines/${eid}`), class: 'engine-link', text: name});

// ---- sections ----

function renderRating(r, gamesFinished) {
  if (!r) {
    $('#rating-elo').textContent = TEXT.eloNone;
    $('#rating-note').textContent = gamesFinished ? '' : TEXT.ratingNoGames;
    return;
  }
  $('#rating-elo').textContent = eloText(r.elo, r.elo_error);
  $('#rating-note').textContent = fill(TEXT.ratingNote, {rank: r.rank, engines: r.engines, games: r.games});
}

function renderTournaments(list) {
  $('#engine-tournaments tbody').replaceChildren(...list.map((t) => h('tr', {dataset: {tournamentId: t.id}},
    h('td', {class: 'name'}, h('a', {href: href(`/tournaments/${t.id}`), text: t.name})),
    h('td', {text: TEXT.format[t.format] || t.format}),
    h('td', null, h('span', {class: `status status-${t.status}`, text: t.status})),
    h('td', {class: 'num', text: t.rank ? fill(TEXT.place, {rank: t.rank, entrants: t.entrants}) : '–'}),
    h('td', {class: 'num strong', text: points(t.points)}),
    h('td', {class: 'num', text: t.games}),
    h('td', {class: 'num', text: t.wins}),
    h('td', {class: 'num', text: t.draws}),
    h('td', {class: 'num', text: t.losses}),
    h('td', {class: 'num', text: t.games ? eloText(t.elo, t.elo_error) : '–'}))));
  $('#tournaments-empty').hidden = list.length > 0;
}

function renderOpponents(list) {
  $('#engine-opponents tbody').replaceChildren(...list.map((o) => h('tr', {dataset: {engineId: o.engine_id}},
    h('td', {class: 'name'}, engineLink(o.engine_id, o.name)),
    h('td', {class: 'num', text: o.games}),
    h('td', {class: 'num', text: o.wins}),
    h('td', {class: 'num', text: o.draws}),
    h('td', {class: 'num', text: o.losses}),
    h('td', {class: 'num', text: `${o.score_pct.toFixed(1)}%`}),
    h('td', {class: 'num', text: eloText(o.elo_diff, o.elo_margin)}))));
  $('#opponents-empty').hidden = list.length > 0;
}

function renderViolations(v) {
  const list = (m, item, label) => {
    const keys = Object.keys(m).filter((k) => m[k] > 0).sort();
    if (!keys.length) return [TEXT.none];
    return [h('ul', {class: 'plain'}, ...keys.map((k) => h('li', {dataset: {key: k, count: m[k]}, text: fill(item, {[label]: label === 'reason' ? reasonLabels[k] || k : k.replaceAll('_', ' '), count: m[k]})})))];
  };
  $('#refused').replaceChildren(...list(v.refused, TEXT.refusedItem, 'kind'));
  $('#games-with-violations').textContent = v.games_with_violations;
  $('#lost-by').replaceChildren(...list(v.lost_by, TEXT.lostByItem, 'reason'));
}

function renderTime(t, gamesFinished) {
  $('#time-moves').textContent = fill(TEXT.movesCount, {moves: t.moves, games: gamesFinished});
  $('#time-mean').textContent = t.mean_ms === null ? '–' : seconds(Math.round(t.mean_ms));
  $('#time-max').replaceChildren(t.max_game_id
    ? h('a', {href: href(`/games/${t.max_game_id}`), text: fill(TEXT.slowest, {time: seconds(t.max_ms), game: t.max_game_id})})
    : '–');
  $('#time-memory').textContent = t.games_measured ? fill(TEXT.memory, {mib: Math.round(t.peak_memory_bytes / (1 << 20))}) : TEXT.notMeasured;
  $('#time-cpu').textContent = t.mean_cpu_ms === null ? TEXT.notMeasured : seconds(t.mean_cpu_ms);
}

// ---- games, a page at a time ----

const PAGE = 50;
let shown = 0;
const tournamentNames = new Map();

function gameRow(g) {
  const result = g.status === 'finished' ? TEXT.outcome[g.outcome] : TEXT.status[g.status] || g.status;
  return h('tr', {class: `game-row outcome-${g.outcome || g.status}`, dataset: {gameId: g.id, outcome: g.outcome || ''}},
    h('td', {class: 'num'}, h('a', {href: href(`/games/${g.id}`), class: 'game-link', text: g.id})),
    h('td', null, h('a', {href: href(`/tournaments/${g.tournament_id}`), text: tournamentNames.get(g.tournament_id) || g.tournament_id})),
    h('td', null, h('span', {class: `disc-icon ${g.color}`, 'aria-hidden': 'true'}), ' ', TEXT.colour[g.color]),
    h('td', null, engineLink(g.opponent.engine_id, g.opponent.name)),
    h('td', {class: g.outcome === 'win' ? 'strong' : '', text: result}),
    h('td', {text: g.reason ? reasonLabels[g.reason] || g.reason : ''}),
    h('td', {class: 'num', text: g.plies}),
    h('td', null, g.log ? h('a', {href: g.log, class: 'log-link', target: '_blank', rel: 'noopener', text: TEXT.logLink}) : TEXT.logNone));
}

async function loadGames(more) {
  const offset = more ? shown : 0;
  const data = await api(`/api/engines/${id}/games?limit=${PAGE}&offset=${offset}`);
  const body = $('#engine-games tbody');
  if (!more) body.replaceChildren();
  body.append(...data.games.map(gameRow));
  shown = offset + data.games.length;
  $('#games-more').hidden = shown >= data.total;
  $('#games-empty').hidden = data.total > 0;
  $('#games-count').textContent = fill(TEXT.gamesCount, {shown, total: data.total});
}

$('#games-more').addEventListener('click', async () => {
  const first = shown;
  try {
    await loadGames(true);
  } catch (err) {
    $('#record-error').textContent = fill(TEXT.loadError, {message: err.message});
    return;
  }
  // Keyboard users go on from the first new row, not back to the top.
  $(`#engine-games tbody tr:nth-child(${first + 1}) a`)?.focus();
});

function renderVersions(list) {
  $('#engine-versions tbody').replaceChildren(...list.map((v, i) => h('tr', {dataset: {version: v.version}},
    h('td', {class: 'num', text: i === 0 ? fill(TEXT.current, {version: v.version}) : v.version}),
    h('td', null, h('time', {datetime: v.created_at, text: new Date(v.created_at).toLocaleString()})),
    h('td', {text: v.uploaded_by}),
    h('td', null, h('code', {text: v.command_line})),
    h('td', null, v.files_hash ? h('code', {title: fill(TEXT.filesHash, {hash: v.files_hash}), text: v.files_hash.slice(0, 12)}) : TEXT.noFiles))));
}

// ---- load ----

async function load() {
  try {
    const rec = await api(`/api/engines/${id}/record`);
    for (const t of rec.tournaments) tournamentNames.set(t.id, t.name);
    const finished = rec.games.finished || 0;
    renderRating(rec.rating, finished);
    renderTournaments(rec.tournaments);
    renderOpponents(rec.opponents);
    renderViolations(rec.violations);
    renderTime(rec.time, finished);
    renderVersions((await api(`/api/engines/${id}/versions`)).versions);
    await loadGames(false);
    document.body.dataset.loaded = 'true';
  } catch (err) {
    $('#record-error').textContent = fill(TEXT.loadError, {message: err.message});
  }
}

load();
