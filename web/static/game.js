// game.js: one game, live or replayed: the board at any ply, the move list,
// step and seek controls, clocks while it is played, and the result.
import {$, h, live, api, seconds, clock, resultText, reasonLabels, pageData, t, has, label} from 'taikai/app.js';
import {drawBoard, describeBoard, count, emptyBoard, lastMove, moveLabel} from 'taikai/board.js';

const data = pageData();
const settings = data.settings || {};
const id = data.game.id;

const state = {
  game: data.game,
  moves: [], // {ply, color, x, y, text, ms, auto}
  frames: [{board: emptyBoard(data.game.view), flipped: null}],
  ply: 0,
  synced: false, // a snapshot has arrived
  live: false,
  ended: false,
  five: null,
  remaining: null,
  moveAt: performance.now(), // when the last move arrived, for the running clock
  end: null, // the end message
  detail: null, // GET /api/games/{id}
};

const el = {
  board: $('#board'),
  boardFocus: $('#board-focus'),
  boardStatus: $('#board-status'),
  boardText: $('#board-text'),
  ply: $('#ply'),
  total: $('#ply-total'),
  seek: $('#seek'),
  first: $('#first'),
  prev: $('#prev'),
  next: $('#next'),
  last: $('#last'),
  moves: $('#moves'),
  current: $('#current-move'),
  result: $('#result'),
  liveBadge: $('#live-badge'),
  status: $('#game-status'),
};

// ---- messages ----

function onSnapshot(msg) {
  const following = !state.synced || state.ply >= state.moves.length;
  state.game = msg.game;
  state.moves = msg.moves || [];
  state.frames = msg.frames && msg.frames.length ? msg.frames : [{board: emptyBoard(msg.game.view)}];
  state.live = !!msg.live;
  state.remaining = msg.remaining;
  state.five = msg.five;
  state.moveAt = performance.now();
  state.ply = following ? state.moves.length : Math.min(state.ply, state.moves.length);
  state.synced = true;
  el.moves.replaceChildren();
  render();
}

function onMove(m) {
  const n = state.moves.length;
  if (m.ply <= n) return; // already have it (a resync raced a move)
  const following = state.ply >= n;
  state.moves.push({ply: m.ply, color: m.color, x: m.x, y: m.y, text: m.text, ms: m.ms, auto: m.auto, opening: m.opening});
  state.frames.push({board: m.board, flipped: m.flipped || null});
  if (m.remaining) state.remaining = m.remaining;
  state.moveAt = performance.now();
  if (following) state.ply = state.moves.length;
  render();
}

function onEnd(m) {
  if (m.game && m.game.status === 'running') {
    // The store still has it running while the referee finishes: not over yet.
    return undefined;
  }
  state.ended = true;
  state.live = false;
  state.end = m;
  state.game = m.game || state.game;
  if (m.five) state.five = m.five;
  render();
  loadDetail();
  return 'done';
}

async function loadDetail() {
  try {
    state.detail = await api(`/api/games/${id}`);
    renderFacts();
    document.body.dataset.loaded = 'true'; // the facts above the move list are in: the layout is settled
  } catch (err) {
    console.warn('game detail:', err.message);
  }
}

live(`/ws/games/${id}`, (msg) => {
  switch (msg.type) {
    case 'snapshot': onSnapshot(msg); break;
    case 'move': onMove(msg); break;
    case 'end': return onEnd(msg);
  }
  return undefined;
});

// ---- stepping ----

function go(ply) {
  state.ply = Math.max(0, Math.min(state.moves.length, ply));
  render();
}

el.first.addEventListener('click', () => go(0));
el.prev.addEventListener('click', () => go(state.ply - 1));
el.next.addEventListener('click', () => go(state.ply + 1));
el.last.addEventListener('click', () => go(state.moves.length));
el.seek.addEventListener('input', () => go(Number(el.seek.value)));
el.moves.addEventListener('click', (ev) => {
  const b = ev.target.closest('button[data-ply]');
  if (b) go(Number(b.dataset.ply));
});
document.addEventListener('keydown', (ev) => {
  if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
  // Form controls handle their own keys (the slider moves itself).
  if (ev.target.closest && ev.target.closest('input, select, textarea, dialog')) return;
  const inList = ev.target.closest && ev.target.closest('#moves');
  const keys = {ArrowLeft: -1, ArrowRight: 1, PageUp: -10, PageDown: 10};
  // In the move list (a column) the up and down arrows step too.
  if (inList) Object.assign(keys, {ArrowUp: -1, ArrowDown: 1});
  let to = keys[ev.key] === undefined ? undefined : state.ply + keys[ev.key];
  if (ev.key === 'Home') to = 0;
  if (ev.key === 'End') to = state.moves.length;
  if (to === undefined) return;
  ev.preventDefault();
  go(to);
  // Focus follows the current move in the list (one tab stop for it all).
  if (inList) (el.moves.querySelector('[aria-current]') || el.moves.querySelector('button'))?.focus();
});

// ---- drawing ----

function sideToMove() {
  const n = state.moves.length;
  if (n === 0) return 'black';
  return state.moves[n - 1].color === 'black' ? 'white' : 'black';
}

function render() {
  const {ply, moves, frames} = state;
  const frame = frames[Math.min(ply, frames.length - 1)];
  const mv = ply > 0 ? moves[ply - 1] : null;
  const atEnd = ply === moves.length;
  drawBoard(el.board, {
    view: state.game.view,
    board: frame.board,
    ...lastMove(mv),
    flipped: frame.flipped,
    five: atEnd && state.ended ? state.five : null,
  });
  el.board.dataset.ply = ply;
  el.ply.textContent = ply;
  el.total.textContent = moves.length;
  el.seek.max = moves.length;
  el.seek.value = ply;
  // aria-disabled, not disabled: a button that focus is on keeps it.
  for (const [b, off] of [[el.first, ply === 0], [el.prev, ply === 0], [el.next, atEnd], [el.last, atEnd]]) {
    b.setAttribute('aria-disabled', String(off));
  }
  describe(frame.board, mv);
  el.current.textContent = mv ? currentMove(mv) : t('game.start_position');

  const c = count(frame.board);
  $('#count-black').textContent = pieceCount(c.black);
  $('#count-white').textContent = pieceCount(c.white);
  const toMove = state.live && atEnd ? sideToMove() : null;
  for (const color of ['black', 'white']) {
    $(`#player-${color}`).classList.toggle('to-move', color === toMove);
  }
  el.liveBadge.hidden = !state.live;
  el.status.hidden = state.live;
  el.status.textContent = label('status', state.game.status);
  el.status.className = `status status-${state.game.status}`;

  renderMoves();
  renderResult();
  renderFacts();
  tickClocks();
}

// describe writes the position as text for screen readers: a table of the
// board and a sentence on the move, the pieces and the side to move, which is
// announced as it changes (aria-live).
function describe(board, mv) {
  const {ply, moves} = state;
  const total = moves.length;
  const words = {black: t('square.black'), white: t('square.white'), blackKing: t('square.black_king'), whiteKing: t('square.white_king'), empty: t('square.empty')};
  describeBoard(el.boardText, {view: state.game.view, board, caption: t('board.caption', {ply, total}), words});
  const c = count(board);
  const p = {ply, total, move: mv ? moveText(mv) : ''};
  const move = !mv ? t('board.start', p) : mv.color === 'black' ? t('board.played_black', p) : t('board.played_white', p);
  // The next move's colour is the side to move; at the end of a live game,
  // the side after the last move's.
  let toMove = ply < total ? moves[ply].color : null;
  if (ply === total && !state.ended && state.game.status !== 'finished' && state.game.status !== 'aborted') {
    toMove = total ? (moves[total - 1].color === 'black' ? 'white' : 'black') : 'black';
  }
  const next = toMove === 'black' ? t('board.to_move_black') : toMove === 'white' ? t('board.to_move_white') : t('board.over');
  const text = t('board.status', {move, counts: t('board.counts', {black: c.black, white: c.white}), next});
  if (el.boardStatus.textContent !== text) el.boardStatus.textContent = text;
}

// currentMove says the move shown: its number, side, notation, how it was
// played, its time and the engine's note.
function currentMove(mv) {
  const p = {ply: mv.ply, color: label('color', mv.color), move: moveText(mv), time: seconds(mv.ms)};
  const how = mv.opening ? 'opening' : mv.auto ? 'auto' : 'plain';
  const text = how === 'opening' ? t('game.move_opening', p) : how === 'auto' ? t('game.move_auto', p) : t('game.move', p);
  return mv.note ? t('game.move_note', {move: text, note: mv.note}) : text;
}

// pieceCount is a number of pieces in the game's word for them ("33 discs").
function pieceCount(n) {
  const pieces = state.game.view && state.game.view.pieces;
  return pieces && has(`pieces.${pieces}`) ? t(`pieces.${pieces}`, {count: n}) : String(n);
}

// moveText is a move as people read it in this game (h8 · 7,7 in Gomoku).
function moveText(m) {
  if (m.text === 'pass') return t('game.pass');
  const frame = state.frames[0];
  return moveLabel(state.game.view, frame ? frame.board.length : 0, m);
}

function renderMoves() {
  const list = el.moves;
  const have = list.children.length;
  if (have > state.moves.length) list.replaceChildren();
  for (let i = list.children.length; i < state.moves.length; i++) {
    const m = state.moves[i];
    const op = state.game.opening;
    const title = m.opening ? (op ? t('game.opening_move', {suite: op.suite, n: op.index + 1}) : t('game.opening_move_plain')) : m.auto ? t('game.auto_move') : null;
    list.append(h('li', {class: m.opening ? 'opening' : null},
      h('button', {type: 'button', class: 'move', tabindex: '-1', dataset: m.opening ? {ply: m.ply, opening: '1'} : {ply: m.ply}, title},
        h('span', {class: 'mv-n', text: m.ply}),
        h('span', {class: `disc-icon ${m.color}`, 'aria-label': label('color', m.color)}),
        h('span', {class: 'mv-t' + (m.auto ? ' auto' : '') + (m.opening ? ' opening' : ''), text: moveText(m)}),
        h('span', {class: 'mv-ms', text: m.opening ? t('game.book') : seconds(m.ms)}),
        m.note ? h('span', {class: 'mv-note', text: m.note, title: t('game.note_title', {note: (m.notes || [m.note]).join('\n')})}) : null)));
  }
  const cur = list.querySelector('[aria-current]');
  if (cur) cur.removeAttribute('aria-current');
  const li = state.ply > 0 ? list.children[state.ply - 1] : null;
  // One tab stop for the list: the current move (the first at the start).
  for (const b of list.querySelectorAll('button[tabindex="0"]')) b.tabIndex = -1;
  const stop = li ? li.firstChild : list.querySelector('button');
  if (stop) stop.tabIndex = 0;
  if (li) {
    li.firstChild.setAttribute('aria-current', 'step');
    const top = li.offsetTop;
    if (top < list.scrollTop || top + li.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = top - list.clientHeight / 2;
    }
  } else {
    list.scrollTop = 0;
  }
}

function renderResult() {
  const box = el.result;
  if (!state.ended) {
    box.replaceChildren();
    box.className = 'result';
    return;
  }
  const g = state.game;
  const e = state.end || {};
  const result = e.result || g.result;
  const reason = e.reason || g.reason;
  const stones = e.stones || (state.detail && state.detail.stones);
  const winner = result === 'black' ? g.black.name : result === 'white' ? g.white.name : '';
  // The parts are each a whole phrase (a name, a score, a reason), listed
  // with the language's separator.
  const parts = [];
  if (winner) parts.push(winner);
  const view = g.view || {};
  if (stones && view.score) {
    const score = {black: stones.black, white: stones.white};
    parts.push(has(`score.${view.pieces}`) ? t(`score.${view.pieces}`, score) : t('game.score', score));
  }
  if (reason === 'normal') {
    // How the game ended, in the game's words: the score says it (Othello),
    // or "five in a row", "board full".
    const key = `gameend.${g.game}.${result === 'draw' ? 'draw' : 'win'}`;
    const words = result === 'draw' ? view.draw : view.win;
    if (words) parts.push(has(key) ? t(key) : words);
    else if (!view.score) parts.push(reasonLabels[reason] || reason);
  } else if (reason) {
    parts.push(reasonLabels[reason] || reason);
  }
  if (g.cause) parts.push(has(`cause.${g.cause}`) ? t(`cause.${g.cause}`) : g.cause.replaceAll('_', ' '));
  // A timeout that followed a refused move: the refusal first, the
  // commonest student bug (the engine waited after ERROR).
  const refused = g.refused || (state.detail && state.detail.refused);
  if (refused) {
    parts.unshift(t('game.refused_then_timeout', {color: label('color', refused.color), move: refused.move, why: label('violation', refused.why)}));
  }
  box.className = `result result-${result || 'none'}`;
  box.replaceChildren(
    h('div', {class: 'result-main', text: g.status === 'aborted' ? t('game.aborted') : resultText(result) || t('game.over')}),
    h('div', {class: 'result-sub', text: parts.join(t('list.separator'))}));
  if (g.detail) box.append(h('div', {class: 'result-detail', text: g.detail}));
}

function renderFacts() {
  const d = state.detail;
  const viol = (d && d.violations) || (state.end && state.end.violations);
  const vEl = $('#violations');
  if (viol) {
    const side = (c) => {
      const v = viol[c] || {};
      const keys = Object.keys(v).filter((k) => v[k] > 0);
      const n = keys.reduce((a, k) => a + v[k], 0);
      return h('div', {class: 'viol', dataset: {color: c, count: n}},
        h('span', {class: `disc-icon ${c}`, 'aria-label': label('color', c)}),
        ' ' + (n === 0 ? t('game.no_violations') : keys.map((k) => t('game.violation', {kind: has(`violation.${k}`) ? t(`violation.${k}`) : k.replaceAll('_', ' '), count: v[k]})).join(t('list.comma'))));
    };
    vEl.replaceChildren(side('black'), side('white'));
  }
  const used = {black: 0, white: 0};
  for (const m of state.moves) used[m.color] += m.ms;
  $('#time-used').replaceChildren(
    h('div', null, h('span', {class: 'disc-icon black', 'aria-label': t('color.black')}), ' ' + seconds(used.black)),
    h('div', null, h('span', {class: 'disc-icon white', 'aria-label': t('color.white')}), ' ' + seconds(used.white)));
  if (d && d.logs && (d.logs.black || d.logs.white)) {
    $('#logs').replaceChildren(...['black', 'white'].filter((c) => d.logs[c]).map((c) =>
      h('div', null, h('a', {href: d.logs[c], class: 'log-link', dataset: {color: c}, target: '_blank', rel: 'noopener'},
        t('game.log_link', {name: c === 'black' ? state.game.black.name : state.game.white.name, color: label('color', c)})))));
  } else if (d) {
    $('#logs').textContent = t('game.logs_not_kept');
  }
  // The names the engines gave themselves, once the game is stored.
  for (const c of ['black', 'white']) {
    const nick = d && d[c] && d[c].nick;
    if (nick && nick !== state.game[c].name) $(`#nick-${c}`).textContent = nick;
  }
  // The game's record files, once it is finished.
  const exts = (state.game.view && state.game.view.records) || [];
  if (state.game.status === 'finished' && exts.length) {
    $('#downloads').replaceChildren(...exts.map((x, i) => h('span', null, i ? ' · ' : '',
      h('a', {href: `/api/games/${state.game.id}.${x}`, download: '', class: 'record-link'}, `.${x}`))));
  } else {
    $('#downloads').textContent = state.game.status === 'finished' ? t('game.no_record') : t('game.record_later');
  }
  // How each engine ran: in the sandbox or not, its peak memory, CPU time and end.
  if (d && d.sandbox) {
    const usage = d.usage || {};
    $('#engine-usage').replaceChildren(h('div', null, d.sandbox === 'on' ? t('game.sandbox_on') : t('game.sandbox_off')),
      ...['black', 'white'].filter((c) => usage[c]).map((c) => {
        const u = usage[c];
        return h('div', {class: 'usage', dataset: {color: c}}, h('span', {class: `disc-icon ${c}`, 'aria-label': label('color', c)}),
          ' ' + t('game.usage', {mib: Math.round(u.peak_memory_bytes / (1 << 20)), cpu: seconds(Math.round(u.cpu_ms)), end: exitText(u)}));
      }));
  }
}

// exitText says how an engine's process ended.
function exitText(u) {
  if (u.oom_killed) return t('exit.memory');
  if (u.signal) return t('exit.signal', {signal: u.signal});
  return t('exit.status', {code: u.exit_code});
}

// The clocks run between moves, so they are redrawn on a timer while live.
function tickClocks() {
  const toMove = sideToMove();
  const perMove = settings.move_time_ms || 0;
  const elapsed = performance.now() - state.moveAt;
  const total = state.remaining && (state.remaining.black || state.remaining.white);
  for (const color of ['black', 'white']) {
    const c = $(`#clock-${color}`);
    let txt = '';
    if (state.live) {
      if (total) {
        txt = clock(state.remaining[color] - (color === toMove ? elapsed : 0));
      } else if (color === toMove) {
        txt = perMove ? clock(perMove - elapsed) : clock(elapsed);
      } else if (perMove) {
        txt = clock(perMove);
      }
    }
    c.textContent = txt;
    c.classList.toggle('running', state.live && color === toMove);
  }
}

setInterval(() => { if (state.live) tickClocks(); }, 100);
render();
