// livegrid.js: a grid of small live boards, one card per running game, each a
// link to its game page. Fed by /ws/live (and /ws/tournaments) messages.
import {h, href, resultText, t} from 'taikai/app.js';
import {drawBoard, count, lastMove, miniBoard} from 'taikai/board.js';

export class LiveGrid {
  /**
   * container holds the cards; empty is shown when there are none; keep(game)
   * says whether a game belongs here; label(game) is an optional caption.
   */
  constructor(container, empty, {keep = () => true, label = () => ''} = {}) {
    this.container = container;
    this.empty = empty;
    this.keep = keep;
    this.label = label;
    this.cards = new Map(); // game id -> card
    this.dirty = new Set();
    this.frame = 0;
  }

  /** snapshot replaces every card with the running games listed. */
  snapshot(running) {
    const seen = new Set();
    for (const r of running || []) {
      if (!this.keep(r.game)) continue;
      seen.add(r.game.id);
      const c = this.card(r.game);
      c.board = r.board;
      c.last = r.last || null;
      c.ply = r.game.plies || (r.last ? r.last.ply : 0);
      c.ended = false;
      this.touch(c);
    }
    for (const [id, c] of this.cards) {
      if (!seen.has(id)) this.remove(c);
    }
    this.showEmpty();
  }

  started(game, board) {
    if (!this.keep(game)) return;
    const c = this.card(game);
    c.board = board;
    c.ply = 0;
    c.last = null;
    this.touch(c);
    this.showEmpty();
  }

  move(m) {
    const c = this.cards.get(m.game_id);
    if (!c) return;
    c.board = m.board;
    c.ply = m.ply;
    c.last = m;
    this.touch(c);
  }

  /** ended shows the result on the card for a few seconds, then removes it. */
  ended(game) {
    const c = this.cards.get(game.id);
    if (!c) return;
    c.ended = true;
    c.el.classList.add('ended');
    c.resultEl.textContent = game.status === 'aborted' ? t('game.aborted') : resultText(game.result) || t('game.over');
    c.resultEl.hidden = false;
    setTimeout(() => {
      if (this.cards.get(game.id) === c && c.ended) this.remove(c);
    }, 5000);
  }

  // ---- cards ----

  card(game) {
    let c = this.cards.get(game.id);
    if (c) return c;
    const svg = miniBoard();
    const countB = h('span', {class: 'count'});
    const countW = h('span', {class: 'count'});
    const plyEl = h('span', {class: 'ply'});
    const resultEl = h('span', {class: 'card-result', hidden: true});
    const el = h('a', {class: 'game-card', href: href(`/games/${game.id}`), dataset: {gameId: game.id, game: game.game}},
      h('div', {class: 'card-board'}, svg, resultEl),
      h('div', {class: 'card-player'}, h('span', {class: 'disc-icon black', 'aria-label': t('color.black')}), h('span', {class: 'name', text: game.black.name}), countB),
      h('div', {class: 'card-player'}, h('span', {class: 'disc-icon white', 'aria-label': t('color.white')}), h('span', {class: 'name', text: game.white.name}), countW),
      h('div', {class: 'card-foot'}, plyEl, h('span', {class: 'card-label', text: this.label(game)})));
    c = {game, el, svg, countB, countW, plyEl, resultEl, board: null, last: null, ply: 0, ended: false};
    this.cards.set(game.id, c);
    // Oldest game first, as the server lists them.
    const after = [...this.cards.values()].filter((o) => o !== c && o.game.id > game.id).sort((a, b) => a.game.id - b.game.id)[0];
    this.container.insertBefore(el, after ? after.el : null);
    return c;
  }

  remove(c) {
    c.el.remove();
    this.cards.delete(c.game.id);
    this.dirty.delete(c);
    this.showEmpty();
  }

  showEmpty() {
    if (this.empty) this.empty.hidden = this.cards.size > 0;
  }

  // Boards are redrawn once per animation frame, however fast moves come.
  touch(c) {
    this.dirty.add(c);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.draw());
  }

  draw() {
    this.frame = 0;
    for (const c of this.dirty) {
      if (!c.board) continue;
      drawBoard(c.svg, {view: c.game.view, board: c.board, ...lastMove(c.last), coords: false});
      const n = count(c.board);
      c.countB.textContent = n.black;
      c.countW.textContent = n.white;
      c.plyEl.textContent = t('live.ply', {ply: c.ply});
      c.svg.setAttribute('aria-label', t('live.board', {ply: c.ply, black: n.black, white: n.white}));
    }
    this.dirty.clear();
  }

  /** relabel updates the captions (when tournament names arrive). */
  relabel() {
    for (const c of this.cards.values()) c.el.querySelector('.card-label').textContent = this.label(c.game);
  }
}
