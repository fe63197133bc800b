// board.js: SVG boards, drawn from the view the server sends with a game:
// 'cells' style is squares on green with discs in them (Othello); 'points'
// style is N x N intersections on wood with stones on the points (Gomoku);
// with view.dark only the dark squares are played on (checkers), and a piece
// written X or O is a king. Every piece is a <circle class="stone" data-x
// data-y data-color> (data-king="1" for a king).

import {t} from 'taikai/app.js';

const NS = 'http://www.w3.org/2000/svg';
const CELL = 100;

function s(tag, attrs) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

function text(x, y, str, cls) {
  const t = s('text', {x, y, class: cls, 'text-anchor': 'middle', 'dominant-baseline': 'central'});
  t.textContent = str;
  return t;
}

/** emptyBoard is the start position as rows (the server sends it in the view). */
export function emptyBoard(view) {
  return view && view.start ? view.start.slice() : [];
}

/**
 * drawBoard replaces the content of svg with a board. It knows no game by
 * name: the server's view says how to draw it.
 *   view: {style: 'cells' (pieces in squares) | 'points' (stones on the
 *     intersections), stars: [[x, y]], coords: 'algebraic' | 'index'}
 *   board: rows of '.', 'x' (black), 'o' (white), 'X' / 'O' (kings)
 *   last: [x, y] of the last move or null; path: [[x, y]] the squares a
 *     moving piece went through, start first (checkers), or null;
 *   flipped: [[x, y]] turned over;
 *   five: [[x, y]] winning line; coords: draw coordinates.
 */
export function drawBoard(svg, {view, board, last = null, path = null, flipped = null, five = null, coords = true}) {
  const n = board.length;
  const cells = !view || view.style === 'cells';
  const squares = view && view.coords === 'squares'; // numbers on the squares, not the edges
  const lead = coords && !squares ? 64 : 10; // room for coordinates on the top and left
  const tail = coords && !squares ? 24 : 10;
  const span = n * CELL;
  const total = lead + span + tail;
  svg.setAttribute('viewBox', `0 0 ${total} ${total}`);
  svg.classList.toggle('cells', cells);
  svg.classList.toggle('points', !cells);
  svg.classList.toggle('dark', !!(view && view.dark));
  svg.replaceChildren();

  // Centre of cell or point (x, y).
  const cx = (x) => lead + x * CELL + CELL / 2;
  const cy = (y) => lead + y * CELL + CELL / 2;

  svg.append(s('rect', {x: lead - 6, y: lead - 6, width: span + 12, height: span + 12, rx: cells ? 10 : 14, class: 'b-frame'}));
  svg.append(s('rect', {x: lead, y: lead, width: span, height: span, class: 'b-surface'}));
  const grid = s('g', {class: 'b-grid'});
  const stars = (view && view.stars) || [];
  if (cells && view && view.dark) {
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        if ((x + y) % 2 === 1) grid.append(s('rect', {x: lead + x * CELL, y: lead + y * CELL, width: CELL, height: CELL, class: 'b-dark'}));
      }
    }
  } else if (cells) {
    for (let i = 1; i < n; i++) {
      grid.append(s('line', {x1: lead + i * CELL, y1: lead, x2: lead + i * CELL, y2: lead + span}));
      grid.append(s('line', {x1: lead, y1: lead + i * CELL, x2: lead + span, y2: lead + i * CELL}));
    }
    for (const [x, y] of stars) {
      grid.append(s('circle', {cx: lead + x * CELL + CELL, cy: lead + y * CELL + CELL, r: 8, class: 'b-star'}));
    }
  } else {
    for (let i = 0; i < n; i++) {
      grid.append(s('line', {x1: cx(i), y1: cy(0), x2: cx(i), y2: cy(n - 1)}));
      grid.append(s('line', {x1: cx(0), y1: cy(i), x2: cx(n - 1), y2: cy(i)}));
    }
    for (const [x, y] of stars) grid.append(s('circle', {cx: cx(x), cy: cy(y), r: 9, class: 'b-star'}));
  }
  svg.append(grid);

  if (coords && !squares) {
    const g = s('g', {class: 'b-coords'});
    for (let i = 0; i < n; i++) {
      const [col, row] = coordLabels(view, n, i, i);
      g.append(text(cx(i), lead / 2, col, 'b-coord'));
      g.append(text(lead / 2, cy(i), row, 'b-coord'));
    }
    svg.append(g);
  }

  const stones = s('g', {class: 'b-stones'});
  const r = cells ? 41 : 45;
  for (let y = 0; y < n; y++) {
    const row = board[y];
    for (let x = 0; x < n; x++) {
      const c = row[x];
      if (!'xoXO'.includes(c)) continue;
      const color = c.toLowerCase() === 'x' ? 'black' : 'white';
      const king = c === 'X' || c === 'O';
      const attrs = {cx: cx(x), cy: cy(y), r, class: `stone ${color}${king ? ' king' : ''}`, 'data-x': x, 'data-y': y, 'data-color': color};
      if (king) attrs['data-king'] = '1';
      stones.append(s('circle', attrs));
      if (king) stones.append(s('circle', {cx: cx(x), cy: cy(y), r: r / 2, class: `crown ${color}`}));
    }
  }
  svg.append(stones);
  // Checkers' square numbers go over the pieces, in the square's corner:
  // under them, a piece hid its square's number.
  if (coords && squares) {
    const g = s('g', {class: 'b-coords b-squares'});
    let k = 0;
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        if ((x + y) % 2 === 1) g.append(text(lead + x * CELL + 14, lead + y * CELL + 14, String(++k), 'b-sq'));
      }
    }
    svg.append(g);
  }

  const marks = s('g', {class: 'b-marks'});
  for (const [x, y] of flipped || []) {
    marks.append(s('circle', {cx: cx(x), cy: cy(y), r: 31, class: 'flipped', 'data-x': x, 'data-y': y}));
  }
  if (five && five.length) {
    const [a, b] = [five[0], five[five.length - 1]];
    marks.append(s('line', {x1: cx(a[0]), y1: cy(a[1]), x2: cx(b[0]), y2: cy(b[1]), class: 'five-line'}));
    for (const [x, y] of five) marks.append(s('circle', {cx: cx(x), cy: cy(y), r: r + 3, class: 'five', 'data-x': x, 'data-y': y}));
  }
  if (path && path.length > 1) {
    const points = path.map(([x, y]) => `${cx(x)},${cy(y)}`).join(' ');
    marks.append(s('polyline', {points, class: 'move-path', 'data-path': path.map((p) => p.join(',')).join(' ')}));
  }
  if (last) {
    const [x, y] = last;
    const on = board[y] && (board[y][x] === 'o' || board[y][x] === 'O') ? 'on-white' : 'on-black';
    marks.append(s('circle', {cx: cx(x), cy: cy(y), r: cells ? 14 : 15, class: `last-move ${on}`, 'data-x': x, 'data-y': y}));
  }
  svg.append(marks);
}

/**
 * coordLabels names column x and row y as the view's coordinates do:
 * algebraic (a..., rows from 1 at the top), renju (a..., rows from 1 at the
 * bottom) or index (0-based, as the protocol counts).
 */
export function coordLabels(view, n, x, y) {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  switch (view && view.coords) {
    case 'algebraic': return [letters[x], String(y + 1)];
    case 'renju': return [letters[x], String(n - y)];
  }
  return [String(x), String(y)];
}

/**
 * moveLabel is a move as the move list shows it: the game's notation, and
 * for renju coordinates the usual letter-number form with the protocol's x,y
 * beside it ("h8 · 7,7").
 */
export function moveLabel(view, n, m) {
  if (m.x === null || m.x === undefined || !view || view.coords !== 'renju') return m.text;
  const [col, row] = coordLabels(view, n, m.x, m.y);
  return `${col}${row} · ${m.x},${m.y}`;
}

/** count returns the number of black and white stones on a board. */
export function count(board) {
  let black = 0;
  let white = 0;
  for (const row of board) {
    for (const c of row) {
      if (c === 'x' || c === 'X') black++;
      else if (c === 'o' || c === 'O') white++;
    }
  }
  return {black, white};
}

/**
 * lastMove is where a move leaves its mark: the point it placed, or for a
 * move along a path (checkers) the square it ended on and the whole path.
 */
export function lastMove(m) {
  if (!m || m.x === null || m.x === undefined) return {last: null, path: null};
  if (m.path && m.path.length) {
    return {last: m.path[m.path.length - 1], path: [[m.x, m.y], ...m.path]};
  }
  return {last: [m.x, m.y], path: null};
}

/** miniBoard makes a small board element for the live grids. */
export function miniBoard() {
  return s('svg', {class: 'board mini', role: 'img', 'aria-label': t('game.board')});
}

/**
 * describeBoard writes a board into table as text, for screen readers: a
 * caption, the columns' names as headers, and per row its name as a row
 * header and each square's content in words. words holds the texts (black,
 * white, blackKing, whiteKing, empty): the page's own, board.js has none.
 */
export function describeBoard(table, {view, board, caption, words}) {
  const n = board.length;
  // Numbered squares (checkers) are named by column and row here.
  const named = view && view.coords === 'squares' ? {...view, coords: 'algebraic'} : view;
  const word = {x: words.black, o: words.white, X: words.blackKing, O: words.whiteKing};
  const cap = document.createElement('caption');
  cap.textContent = caption;
  const head = document.createElement('tr');
  head.append(document.createElement('td'));
  for (let x = 0; x < n; x++) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.translate = false; // a coordinate, in no language
    th.textContent = coordLabels(named, n, x, 0)[0];
    head.append(th);
  }
  const thead = document.createElement('thead');
  thead.append(head);
  const tbody = document.createElement('tbody');
  for (let y = 0; y < n; y++) {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.scope = 'row';
    th.translate = false;
    th.textContent = coordLabels(named, n, 0, y)[1];
    tr.append(th);
    for (let x = 0; x < n; x++) {
      const td = document.createElement('td');
      td.textContent = word[board[y][x]] || words.empty;
      tr.append(td);
    }
    tbody.append(tr);
  }
  table.replaceChildren(cap, thead, tbody);
}
