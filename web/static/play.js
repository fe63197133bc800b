// play.js: /play, a person plays an engine (or another person) on a
// clickable board (issue 39). /play is the form that starts a game;
// /play/{id}#seat=<token> is the game, played through the seat's API
// (GET .../seat waits for the next turn, POST .../move, .../resign).

import {$, h, api, t, label, errorText} from 'taikai/app.js';
import {drawBoard, coordLabels, describeBoard, moveLabel} from 'taikai/board.js';

const NS = 'http://www.w3.org/2000/svg';
const CELL = 100;

function svgEl(tag, attrs) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

const gameMatch = location.pathname.match(/^\/play\/(\d+)$/);
if (gameMatch) {
  playGame(Number(gameMatch[1]));
} else {
  setup();
}

// ---- the form ----

async function setup() {
  const form = $('#play-form');
  const game = $('#p-game');
  const rule = $('#p-rule');
  const engine = $('#p-engine');
  const want = Number(new URLSearchParams(location.search).get('engine') || 0);
  let list = [];
  try {
    list = (await api('/api/engines')).engines || [];
  } catch (err) {
    $('#p-error').textContent = errorText(err);
  }
  const chosen = list.find((e) => e.id === want);
  if (chosen) game.value = chosen.game;
  const fill = () => {
    const rules = (game.selectedOptions[0].dataset.rules || '').split(',').filter(Boolean);
    rule.replaceChildren(...rules.map((r) => h('option', {value: r}, label('rule', r))));
    rule.closest('.field').hidden = rules.length < 2;
    const mine = list.filter((e) => e.game === game.value);
    engine.replaceChildren(
      ...mine.map((e) => h('option', {value: String(e.id)}, e.name)),
      h('option', {value: 'person'}, t('play.person')),
    );
    if (chosen && chosen.game === game.value) engine.value = String(chosen.id);
  };
  game.addEventListener('change', fill);
  fill();
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    $('#p-error').textContent = '';
    const person = engine.value === 'person';
    const body = {
      engine: person ? null : Number(engine.value), game: game.value, color: $('#p-color').value,
      move_time_ms: Math.round(Number($('#p-time').value || 1) * 1000),
    };
    if (!rule.closest('.field').hidden) body.rule = rule.value;
    $('#p-start').disabled = true;
    try {
      const p = await api('/api/play', {method: 'POST', body});
      sessionStorage.setItem(`taikai-seat-${p.game_id}`, p.seat_token);
      if (p.second) sessionStorage.setItem(`taikai-second-${p.game_id}`, p.second.url);
      location.assign(p.url);
    } catch (err) {
      $('#p-error').textContent = errorText(err);
      $('#p-start').disabled = false;
    }
  });
}

// ---- the game ----

function playGame(id) {
  $('#play-setup').hidden = true;
  $('#play-game').hidden = false;
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('seat');
  if (fromHash) sessionStorage.setItem(`taikai-seat-${id}`, fromHash);
  const token = fromHash || sessionStorage.getItem(`taikai-seat-${id}`);
  const status = $('#play-status');
  if (!token) {
    status.textContent = t('play.no_seat');
    return;
  }
  $('#play-watch').href = `/games/${id}`;
  $('#play-watch').textContent = `/games/${id}`;
  const second = sessionStorage.getItem(`taikai-second-${id}`);
  if (second) {
    $('#play-second').hidden = false;
    const a = $('#play-second-link');
    a.href = second;
    a.textContent = new URL(second, location.href).href;
  }

  const st = {view: null, seat: null, sel: [], cursor: [0, 0], busy: false, turnSince: performance.now(), timer: 0, note: ''};
  const svg = $('#play-board');
  const focus = $('#play-board-focus');

  const seatFetch = async (path, method = 'GET', body) => {
    const res = await fetch(`/api/games/${id}/${path}`, {
      method, headers: {'Authorization': `Bearer ${token}`, 'Content-Type': 'application/json'},
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await res.json().catch(() => null);
    if (!res.ok) {
      const err = new Error((data && data.error && data.error.message) || res.statusText);
      err.status = res.status;
      err.error = data && data.error;
      throw err;
    }
    return data;
  };

  const mine = () => st.seat && !st.seat.over && st.seat.turn === st.seat.color;
  const isCheckers = () => st.view && st.view.coords === 'squares';
  const lead = () => (st.view && st.view.coords === 'squares' ? 10 : 64);
  const full = (m) => [[m.x, m.y], ...(m.path || [])];
  const same = (a, b) => a[0] === b[0] && a[1] === b[1];

  // targets are the squares a click may choose now: legal points, or for
  // checkers the pieces that can move, then each next landing square.
  const targets = () => {
    if (!mine()) return [];
    const legal = st.seat.legal.filter((m) => m.x !== null);
    if (!isCheckers()) return legal.map((m) => [m.x, m.y]);
    const out = [];
    for (const m of legal) {
      const f = full(m);
      if (st.sel.length >= f.length || !st.sel.every((p, i) => same(p, f[i]))) continue;
      const next = f[st.sel.length];
      if (!out.some((p) => same(p, next))) out.push(next);
    }
    return out;
  };

  const squareName = (x, y) => {
    const n = st.seat.board.length;
    const [col, row] = coordLabels(st.view && st.view.coords === 'squares' ? {...st.view, coords: 'algebraic'} : st.view, n, x, y);
    return `${col}${row}`;
  };

  const draw = () => {
    const v = st.seat;
    const lastMv = v.moves.length ? v.moves[v.moves.length - 1] : null;
    const last = lastMv && lastMv.x !== null ? [lastMv.x, lastMv.y] : null;
    drawBoard(svg, {view: st.view, board: v.board, last});
    const n = v.board.length;
    const L = lead();
    const layer = svgEl('g', {class: 'play-layer'});
    for (const [x, y] of v.forbidden || []) {
      const cx = L + x * CELL + CELL / 2;
      const cy = L + y * CELL + CELL / 2;
      layer.append(svgEl('path', {d: `M${cx - 22} ${cy - 22}L${cx + 22} ${cy + 22}M${cx + 22} ${cy - 22}L${cx - 22} ${cy + 22}`,
        class: 'forbidden-mark', 'data-x': x, 'data-y': y}));
    }
    for (const [x, y] of st.sel) {
      layer.append(svgEl('rect', {x: L + x * CELL + 4, y: L + y * CELL + 4, width: CELL - 8, height: CELL - 8, class: 'play-selected', 'data-x': x, 'data-y': y}));
    }
    for (const [x, y] of targets()) {
      // Small on a Gomoku board, where most points are legal.
      layer.append(svgEl('circle', {cx: L + x * CELL + CELL / 2, cy: L + y * CELL + CELL / 2, r: st.view.style === 'points' ? 9 : 14, class: 'legal-dot', 'data-x': x, 'data-y': y}));
    }
    if (mine()) {
      // Shown while the board has the focus (CSS).
      const [x, y] = st.cursor;
      layer.append(svgEl('rect', {x: L + x * CELL + 2, y: L + y * CELL + 2, width: CELL - 4, height: CELL - 4, class: 'play-cursor'}));
    }
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        layer.append(svgEl('rect', {x: L + x * CELL, y: L + y * CELL, width: CELL, height: CELL, class: 'play-cell', 'data-x': x, 'data-y': y}));
      }
    }
    svg.append(layer);
    const words = {black: t('square.black'), white: t('square.white'), blackKing: t('square.black_king'), whiteKing: t('square.white_king'), empty: t('square.empty')};
    describeBoard($('#play-board-text'), {view: st.view, board: v.board, caption: t('board.caption', {ply: v.plies, total: v.plies}), words});
  };

  const render = () => {
    const v = st.seat;
    $('#name-black').textContent = v.black;
    $('#name-white').textContent = v.white;
    $('#play-black').classList.toggle('to-move', v.turn === 'black');
    $('#play-white').classList.toggle('to-move', v.turn === 'white');
    $('#play-moves').replaceChildren(...v.moves.map((m, i) => h('li', {class: `move ${m.color}`, value: i + 1}, moveLabel(st.view, v.board.length, m))));
    $('#play-pass').hidden = !(mine() && v.legal.some((m) => m.x === null));
    $('#play-resign').disabled = v.over;
    draw();
    clearInterval(st.timer);
    $('#clock-black').textContent = '';
    $('#clock-white').textContent = '';
    if (v.over) {
      const res = v.result === 'draw' ? t('play.draw') : v.result === v.color ? t('play.you_won') : v.result ? t('play.you_lost') : t('play.over');
      const why = v.reason ? t('play.by', {reason: label('reason', v.reason) + (v.cause ? ` (${label('cause', v.cause)})` : '')}) : '';
      status.textContent = `${res} ${why}`.trim();
      $('#play-result').textContent = status.textContent;
      const replay = $('#play-replay');
      replay.hidden = false;
      replay.href = `/games/${id}`;
      return;
    }
    if (mine()) {
      status.textContent = st.note || t('play.your_move', {count: v.legal.length});
      return;
    }
    const other = v.turn === 'black' ? v.black : v.white;
    const tick = () => {
      const s = ((performance.now() - st.turnSince) / 1000).toFixed(1);
      status.textContent = v.turn === 'none' ? t('play.waiting') : t('play.thinking', {name: other, seconds: s});
      if (v.turn !== 'none') $(`#clock-${v.turn}`).textContent = v.move_time_ms ? `${s} / ${(v.move_time_ms / 1000).toFixed(1)} s` : `${s} s`;
    };
    tick();
    st.timer = setInterval(tick, 200);
  };

  const show = (v) => {
    if (!v.board) {
      // The game has not begun: its seat has no position yet.
      status.textContent = t('play.waiting');
      return;
    }
    // Views come on two connections, the move's answer and the long poll:
    // one can be older than the view shown, and would take back the
    // engine's reply for a moment (the person's legal squares gone, then
    // back). A seat's versions only grow; the stored game's view, once it
    // is over, has none.
    if (st.seat && !v.over && v.version < st.seat.version) return;
    const moved = !st.seat || v.turn !== st.seat.turn || v.plies !== st.seat.plies;
    if (moved) st.turnSince = performance.now();
    st.seat = v;
    st.view = v.view;
    // A selection belongs to one position: a move played ends it, the
    // person's own included when the answer to it already holds the
    // engine's reply (else no legal square would be shown).
    if (moved || !mine()) st.sel = [];
    render();
  };

  const send = async (body) => {
    st.busy = true;
    st.note = '';
    try {
      show(await seatFetch('move', 'POST', body));
    } catch (err) {
      st.sel = [];
      if (err.status === 422) {
        // A forbidden Gomoku point also names its pattern (double three, ...).
        const detail = err.error && err.error.message_params && err.error.message_params.detail;
        const why = label('violation', err.error && err.error.message_key);
        st.note = t('play.refused', {why: detail ? `${why}: ${label('foul', detail.replace(/ /g, '_'))}` : why});
      } else if (err.status === 409) {
        st.note = t('play.not_your_turn');
      } else {
        st.note = err.message;
      }
      render();
    } finally {
      st.busy = false;
    }
  };

  const choose = (x, y) => {
    if (!mine() || st.busy) return;
    st.note = '';
    st.cursor = [x, y];
    if (!isCheckers()) {
      send({x, y});
      return;
    }
    const next = [...st.sel, [x, y]];
    const legal = st.seat.legal.filter((m) => m.x !== null).map(full);
    const matches = legal.filter((f) => f.length >= next.length && next.every((p, i) => same(p, f[i])));
    if (matches.length === 0) {
      st.sel = legal.some((f) => same(f[0], [x, y])) ? [[x, y]] : [];
      render();
      return;
    }
    const done = matches.find((f) => f.length === next.length);
    if (done) {
      st.sel = next;
      send({path: done});
      return;
    }
    st.sel = next;
    render();
  };

  // The square is found from where the click is, not from its target: a
  // move's answer may redraw the board between the press and the release.
  svg.addEventListener('click', (ev) => {
    if (!st.seat) return;
    const ctm = svg.getScreenCTM();
    if (!ctm) return;
    const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(ctm.inverse());
    const n = st.seat.board.length;
    const x = Math.floor((p.x - lead()) / CELL);
    const y = Math.floor((p.y - lead()) / CELL);
    if (x >= 0 && y >= 0 && x < n && y < n) choose(x, y);
  });
  focus.addEventListener('keydown', (ev) => {
    if (!st.seat) return;
    const n = st.seat.board.length;
    const [x, y] = st.cursor;
    const moves = {ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1]};
    if (moves[ev.key]) {
      ev.preventDefault();
      const [dx, dy] = moves[ev.key];
      st.cursor = [Math.min(n - 1, Math.max(0, x + dx)), Math.min(n - 1, Math.max(0, y + dy))];
      const [cx, cy] = st.cursor;
      const row = st.seat.board[cy] || '';
      const what = {x: t('square.black'), o: t('square.white'), X: t('square.black_king'), O: t('square.white_king')}[row[cx]] || t('square.empty');
      const legal = targets().some((p) => same(p, st.cursor));
      $('#play-cursor').textContent = t(legal ? 'play.cursor_legal' : 'play.cursor', {square: squareName(cx, cy), content: what});
      draw();
    } else if (ev.key === 'Enter' || ev.key === ' ') {
      ev.preventDefault();
      choose(x, y);
    } else if (ev.key === 'Escape') {
      st.sel = [];
      draw();
    }
  });
  $('#play-pass').addEventListener('click', () => send({pass: true}));
  $('#play-resign').addEventListener('click', async () => {
    try {
      show(await seatFetch('resign', 'POST'));
    } catch (err) {
      st.note = err.message;
      render();
    }
  });

  // The seat's view, again and again: each answer comes when it is this
  // seat's turn, the other side moved, or the game ended.
  const poll = async () => {
    let failures = 0;
    for (;;) {
      try {
        const after = st.seat ? `?since=${st.seat.version}` : '';
        const v = await seatFetch(`seat${after}`);
        failures = 0;
        // While a move of the person's is sent, its own answer is shown
        // instead: ask again, and end only once the end has been shown.
        const shown = !st.busy;
        if (shown) show(v);
        if (!v.board) await new Promise((r) => setTimeout(r, 200)); // not begun: ask again soon
        if (v.over && v.result && shown) return;
        // Over, or nobody's turn (its seats closed, the game not stored
        // yet): stored in a moment.
        if (v.over || !shown || v.turn === 'none') await new Promise((r) => setTimeout(r, 300));
      } catch (err) {
        if (err.status === 401 || err.status === 403) {
          status.textContent = t('play.no_seat');
          return;
        }
        if (!err.status) console.error(err); // a bug of this page, not the network's
        failures++;
        await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** failures)));
      }
    }
  };
  poll();
}
