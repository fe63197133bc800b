// engine.js: one engine's page: its rating over all its games, the
// tournaments it entered, its record against each opponent, its violations
// and time use, and its games with links to their pages and its logs; its
// versions, each with its pre-flight check, and a chart of their ratings in
// the leagues they played.
// Each section has its own render function, so that one can be added (the
// engine's versions) without touching the others.
import {$, $$, h, href, api, points, seconds, signedInt, reasonLabels, pageData, t, label, number, errorNodes, tNodes, dateTime, checkNodes, isAdmin, participantID} from 'taikai/app.js';
import {versionChart, seriesStyle} from 'taikai/chart.js';

const engine = pageData();
const id = engine.id;

const eloText = (elo, err) => signedInt(elo) + (err > 0 ? ` ± ${Math.round(err)}` : '');
const engineLink = (eid, name) => h('a', {href: href(`/engines/${eid}`), class: 'engine-link', text: name});

// ---- sections ----

function renderRating(r, gamesFinished) {
  if (!r) {
    $('#rating-elo').textContent = t('engine.no_rating');
    $('#rating-note').textContent = gamesFinished ? '' : t('engine.rating_no_games');
    return;
  }
  $('#rating-elo').textContent = eloText(r.elo, r.elo_error);
  $('#rating-note').textContent = t('engine.rating_note', {rank: r.rank, engines: r.engines, games: r.games});
}

function renderTournaments(list) {
  $('#engine-tournaments tbody').replaceChildren(...list.map((tr) => h('tr', {dataset: {tournamentId: tr.id}},
    h('td', {class: 'name'}, h('a', {href: href(`/tournaments/${tr.id}`), text: tr.name})),
    h('td', {text: label('format', tr.format)}),
    h('td', null, h('span', {class: `status status-${tr.status}`, text: label('status', tr.status)})),
    h('td', {class: 'num', text: tr.rank ? t('engine.place', {rank: tr.rank, entrants: tr.entrants}) : '–'}),
    h('td', {class: 'num strong', text: points(tr.points)}),
    h('td', {class: 'num', text: tr.games}),
    h('td', {class: 'num', text: tr.wins}),
    h('td', {class: 'num', text: tr.draws}),
    h('td', {class: 'num', text: tr.losses}),
    h('td', {class: 'num', text: tr.games ? eloText(tr.elo, tr.elo_error) : '–'}))));
  $('#tournaments-empty').hidden = list.length > 0;
}

function renderOpponents(list) {
  $('#engine-opponents tbody').replaceChildren(...list.map((o) => h('tr', {dataset: {engineId: o.engine_id}},
    h('td', {class: 'name'}, engineLink(o.engine_id, o.name)),
    h('td', {class: 'num', text: o.games}),
    h('td', {class: 'num', text: o.wins}),
    h('td', {class: 'num', text: o.draws}),
    h('td', {class: 'num', text: o.losses}),
    h('td', {class: 'num', text: t('unit.percent', {n: number(o.score_pct, 1)})}),
    h('td', {class: 'num', text: eloText(o.elo_diff, o.elo_margin)}))));
  $('#opponents-empty').hidden = list.length > 0;
}

function renderViolations(v) {
  // Each kind of refused command, and each way games were lost, with its count.
  const list = (m, item) => {
    const keys = Object.keys(m).filter((k) => m[k] > 0).sort();
    if (!keys.length) return [t('engine.none')];
    return [h('ul', {class: 'plain'}, ...keys.map((k) => h('li', {dataset: {key: k, count: m[k]}, text: item(k, m[k])})))];
  };
  $('#refused').replaceChildren(...list(v.refused, (k, count) => t('engine.refused_item', {kind: label('violation', k).replaceAll('_', ' '), count})));
  $('#games-with-violations').textContent = v.games_with_violations;
  $('#lost-by').replaceChildren(...list(v.lost_by, (k, count) => t('engine.lost_by_item', {reason: reasonLabels[k] || k, count})));
}

function renderTime(tu, gamesFinished) {
  $('#time-moves').textContent = t('engine.moves_count', {moves: tu.moves, games: gamesFinished});
  $('#time-mean').textContent = tu.mean_ms === null ? '–' : seconds(Math.round(tu.mean_ms));
  $('#time-max').replaceChildren(tu.max_game_id
    ? h('a', {href: href(`/games/${tu.max_game_id}`), text: t('engine.slowest_move', {time: seconds(tu.max_ms), game: tu.max_game_id})})
    : '–');
  $('#time-memory').textContent = tu.games_measured ? t('engine.memory', {mib: Math.round(tu.peak_memory_bytes / (1 << 20))}) : t('engine.not_measured');
  $('#time-cpu').textContent = tu.mean_cpu_ms === null ? t('engine.not_measured') : seconds(tu.mean_cpu_ms);
}

// ---- games, a page at a time ----

const PAGE = 50;
let shown = 0;
const tournamentNames = new Map();

// outcomes name a game's result from the engine's side.
const outcomes = {win: t('outcome.win'), draw: t('outcome.draw'), loss: t('outcome.loss')};

function gameRow(g) {
  const result = g.status === 'finished' ? outcomes[g.outcome] : g.status === 'running' ? t('engine.playing') : label('status', g.status);
  // The version each side played (a league plays versions).
  const theirs = g.opponent.human ? null : g[g.color === 'black' ? 'white' : 'black']?.version;
  return h('tr', {class: `game-row outcome-${g.outcome || g.status}`, dataset: {gameId: g.id, outcome: g.outcome || ''}},
    h('td', {class: 'num'}, h('a', {href: href(`/games/${g.id}`), class: 'game-link', text: g.id})),
    // A game against a person (/play) is in no tournament of the server's.
    h('td', null, g.opponent.human ? h('span', {class: 'badge person', text: t('engine.vs_person')})
      : h('a', {href: href(`/tournaments/${g.tournament_id}`), text: tournamentNames.get(g.tournament_id) || g.tournament_id})),
    h('td', {class: 'num version', text: g.version || '–'}),
    h('td', null, h('span', {class: `disc-icon ${g.color}`, 'aria-hidden': 'true'}), ' ', label('color', g.color)),
    h('td', null, g.opponent.human ? g.opponent.name : engineLink(g.opponent.engine_id, g.opponent.name),
      theirs ? [' ', h('small', {class: 'muted', text: t('league.version_short', {version: theirs})})] : null),
    h('td', {class: g.outcome === 'win' ? 'strong' : '', text: result}),
    h('td', {text: g.cause === 'after_refused' ? t('reason.timeout_after_refused') : g.reason ? reasonLabels[g.reason] || g.reason : ''}),
    h('td', {class: 'num plies', text: g.plies}),
    h('td', null, g.log ? h('a', {href: g.log, class: 'log-link', target: '_blank', rel: 'noopener', text: t('engine.log_link')}) : t('engine.log_none')));
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
  $('#games-count').textContent = t('engine.games_count', {shown, count: data.total});
}

$('#games-more').addEventListener('click', async () => {
  const first = shown;
  try {
    await loadGames(true);
  } catch (err) {
    $('#record-error').replaceChildren(...tNodes('engine.load_error', {message: h('span', null, ...errorNodes(err))}));
    return;
  }
  // Keyboard users go on from the first new row, not back to the top.
  $(`#engine-games tbody tr:nth-child(${first + 1}) a`)?.focus();
});

// verdict says in a word how a version's check went.
function verdict(c) {
  if (c.status !== 'done') return ['checking', t('engine.verdict_checking')];
  if (c.ok) return ['passed', t('engine.verdict_passed')];
  if (c.message_key === 'replaced' || (!c.message && !c.message_key)) return ['stopped', t('engine.verdict_stopped')];
  return ['failed', t('engine.verdict_failed')];
}

// checkCell is a version's pre-flight check: its verdict, and for one that
// did not pass, what went wrong.
function checkCell(c) {
  if (!c) return h('td', {class: 'version-check muted', text: t('engine.not_checked')});
  const [cls, word] = verdict(c);
  return h('td', {class: 'version-check', dataset: {check: cls}},
    h('span', {class: `engine-check ${cls}`, text: word}),
    cls === 'failed' || (cls === 'stopped' && c.message_key) ? h('div', {class: 'small muted'}, ...checkNodes(c)) : null);
}

function renderVersions(list) {
  // The checks are there for the engine's owner and the admin only.
  const checks = list.some((v) => v.check);
  for (const th of $$('#engine-versions th.version-check')) th.hidden = !checks;
  $('#engine-versions tbody').replaceChildren(...list.map((v, i) => h('tr', {dataset: {version: v.version}},
    h('td', {class: 'num', text: i === 0 ? t('engine.current', {version: v.version}) : v.version}),
    h('td', null, h('time', {datetime: v.created_at, text: dateTime(v.created_at)})),
    h('td', {text: v.uploaded_by_id ? v.uploaded_by : t('engine.by_admin')}),
    h('td', null, h('code', {text: v.command_line})),
    h('td', null, v.files_hash ? h('code', {title: t('engine.files_hash', {hash: v.files_hash}), text: v.files_hash.slice(0, 12)}) : t('engine.no_files')),
    checks ? checkCell(v.check) : null)));
  renderVersionChart(list);
}

// ---- the versions' ratings: a point per version and league ----

let chartSeries = null;

// renderVersionChart draws each league the engine played as a series: a
// point per version at its submission, with its rating and ± interval.
function renderVersionChart(list) {
  const leagues = new Map();
  for (const v of [...list].reverse()) {
    for (const r of v.ratings || []) {
      if (!r.games) continue;
      if (!leagues.has(r.tournament_id)) leagues.set(r.tournament_id, {name: r.tournament, points: []});
      leagues.get(r.tournament_id).points.push({x: Date.parse(v.created_at), y: r.elo, err: r.elo_error, version: v.version, games: r.games,
        title: t('engine.version_point', {version: v.version, league: r.tournament, elo: eloText(r.elo, r.elo_error), count: r.games})});
    }
  }
  chartSeries = [...leagues.values()];
  $('#version-chart-section').hidden = chartSeries.length === 0;
  if (!chartSeries.length) return;
  let svg = $('#version-chart svg');
  if (!svg) {
    svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', t('engine.version_chart_label'));
    $('#version-chart').append(svg, h('ul', {class: 'legend'}));
  }
  drawVersionChart();
  $('#version-chart .legend').replaceChildren(...chartSeries.map((sr, i) => {
    const sw = h('span', {class: 'swatch'});
    sw.style.background = seriesStyle(i).color;
    return h('li', null, sw, sr.name);
  }));
}

let drawnWidth = 0;

// drawVersionChart draws the chart at the width it is shown, so that its
// text is as large on a phone as on a projector: again whenever that width
// changes (a window resized, the section shown after its layout).
function drawVersionChart() {
  const svg = $('#version-chart svg');
  const width = $('#version-chart').clientWidth;
  if (!svg || !chartSeries || !width) return;
  drawnWidth = width;
  versionChart(svg, chartSeries, {xLabel: t('chart.submitted'), yLabel: 'Elo', label: (p) => t('league.version_short', {version: p.version})});
}
new ResizeObserver(() => {
  if ($('#version-chart').clientWidth !== drawnWidth) drawVersionChart();
}).observe($('#version-chart'));

// The engine's last check, with the end of its output, for its owner and
// the admin (the API refuses anyone else: the section stays hidden).
async function loadCheck() {
  const e = pageData();
  const mine = isAdmin() || (participantID() > 0 && e.owner && e.owner.id === participantID());
  if (!mine || e.builtin) return;
  let c;
  try {
    c = await api(`/api/engines/${id}/check`);
  } catch {
    return;
  }
  if (!c || c.status !== 'done' || !c.result) return;
  const r = c.result;
  $('#check-section').hidden = false;
  $('#last-check').classList.add(r.ok ? 'ok' : 'failed');
  $('#last-check-verdict').textContent = t(r.ok ? 'engine.check_passed' : 'engine.check_failed', {version: c.version, opponent: r.opponent});
  $('#last-check-message').replaceChildren(...checkNodes(r));
  $('#last-check-log').textContent = r.log || t('check.no_output');
}

// ---- load ----

async function load() {
  try {
    const rec = await api(`/api/engines/${id}/record`);
    for (const tr of rec.tournaments) tournamentNames.set(tr.id, tr.name);
    const finished = rec.games.finished || 0;
    renderRating(rec.rating, finished);
    renderTournaments(rec.tournaments);
    renderOpponents(rec.opponents);
    renderViolations(rec.violations);
    renderTime(rec.time, finished);
    renderVersions((await api(`/api/engines/${id}/versions`)).versions);
    await loadGames(false);
    await loadCheck();
    document.body.dataset.loaded = 'true';
    // Who is signed in may be learnt after the page loaded.
    document.addEventListener('taikai:admin', loadCheck);
  } catch (err) {
    $('#record-error').replaceChildren(...tNodes('engine.load_error', {message: h('span', null, ...errorNodes(err))}));
  }
}

load();
