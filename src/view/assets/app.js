// lucid view: the episodes of one or more runs, filtered and sorted here; an episode's body
// fetched when opened (from the server, or from the export's details files). The state lives in
// the address (#...), so a view can be shared and the back button works. Every text from a run is
// shown as text, never as markup.
'use strict';

// The server's API answers only requests that carry the page's secret (its <meta name="lucid-view">,
// which another site's page cannot read) in the X-Lucid-View header; beyond loopback also the
// launch's token in X-Lucid-Token. The token comes in the address's fragment (#token=..., never
// sent to a server), is kept in this tab's sessionStorage (per origin, so per port, and per tab)
// and taken out of the address. It is never a cookie: a host's cookies go to all of its ports.
const SECRET = document.querySelector('meta[name="lucid-view"]')?.content || '';
const TOKEN = (() => {
  const h = new URLSearchParams(location.hash.slice(1));
  const given = h.get('token');
  if (given) {
    try { sessionStorage.setItem('lucid-view-token', given); } catch (e) { /* storage off: this load only */ }
    h.delete('token');
    history.replaceState(null, '', location.pathname + location.search + (h.toString() ? '#' + h.toString() : ''));
    return given;
  }
  try { return sessionStorage.getItem('lucid-view-token') || ''; } catch (e) { return ''; }
})();
// GET or POST `path` of the server's API: its JSON (an error's `error` included), or an Error
// when the answer is not JSON (refused, say).
async function api(path, init) {
  const o = init || {};
  const res = await fetch(path, { ...o, credentials: 'omit', headers: { ...(o.headers || {}), 'X-Lucid-View': SECRET, ...(TOKEN ? { 'X-Lucid-Token': TOKEN } : {}) } });
  const text = await res.text();
  try { return JSON.parse(text); } catch (e) { throw new Error(`${res.status} ${res.statusText}: ${text}`); }
}
const CHUNK = 500;
const PAGE = 200;
let D = null;
let ROWS = [];
const BY_KEY = new Map();
const BODIES = new Map();

function load(src) {
  return new Promise((ok, bad) => {
    const s = document.createElement('script');
    s.src = src;
    s.onload = ok;
    s.onerror = () => bad(new Error('cannot load ' + src));
    document.head.appendChild(s);
  });
}

// Element helper: el('td', {class: 'x', onclick: f}, 'text', child, ...).
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat(Infinity)) {
    if (k === undefined || k === null) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

const fmt = (v) => (v === null || v === undefined ? '–' : typeof v === 'object' ? JSON.stringify(v) : String(v));
const uCell = (u) => el('td', { class: u === 1 ? 'u1' : u === 0 ? 'u0' : 'muted' }, fmt(u));
const short = (s, n) => { s = fmt(s); return s.length > n ? s.slice(0, n - 1) + '…' : s; };
// A long text in a table cell: cut to n characters, the whole text in its title.
const textCell = (s, n) => el('td', { class: 'text', title: s === null || s === undefined ? '' : String(s) }, short(s, n));
// The address of a memory's life (the episode whose stored memory it is).
const lifeHref = (key) => '#' + new URLSearchParams({ mem: key }).toString();
const simText = (x) => (x === null || x === undefined ? '–' : Number(x).toFixed(3));

function params() { return new URLSearchParams(location.hash.slice(1)); }
// The address with `updates` applied (null removes a key).
function hrefWith(updates) {
  const h = params();
  for (const [k, v] of Object.entries(updates)) {
    if (v === null || v === undefined || v === '') h.delete(k); else h.set(k, v);
  }
  return '#' + h.toString();
}
function go(updates) { location.hash = hrefWith(updates); }

// Filters: every one a key of the address.
const FILTERS = ['run', 'arm', 'arms', 'seed', 'u', 'r', 'stored', 'flagged', 'channel', 'verifier', 'vote', 'text', 'hits'];
let hitSet = null; // keys matched by the server's search of model text

function filtered(h) {
  const f = Object.fromEntries(FILTERS.map((k) => [k, h.get(k)]));
  const text = (f.text || '').toLowerCase();
  const num = (v) => (v === 'none' ? null : Number(v));
  let out = ROWS.filter((r) =>
    (!f.run || r.run === f.run) && (!f.arm || r.arm === f.arm) && (f.arms !== 'memory' || r.arm !== D.no_memory) && (!f.seed || String(r.seed) === f.seed) &&
    (!f.u || r.u === num(f.u)) && (!f.r || r.r === num(f.r)) && (!f.stored || r.stored_q === num(f.stored)) &&
    (!f.flagged || String(!!r.flagged) === f.flagged) && (!f.channel || r.channels.includes(f.channel)) &&
    (!f.verifier || !f.vote || voteOf(r, f.verifier) === f.vote) &&
    (!text || (r.question || '').toLowerCase().includes(text) || (r.artifact || '').toLowerCase().includes(text)) &&
    (!f.hits || !hitSet || hitSet.has(r.key)));
  const sort = h.get('sort');
  if (sort) {
    const dir = h.get('desc') ? -1 : 1;
    const val = (r) => (sort.startsWith('v_') ? r[sort] : sort === 'memories' ? r.retrieved.length : r[sort]);
    out = out.slice().sort((a, b) => {
      const x = val(a), y = val(b);
      if (x === y) return a.i - b.i;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * dir;
    });
  }
  return out;
}

// A verifier's vote on a row: accept (v >= 0.5), reject, or none.
function voteOf(r, v) {
  const x = r[v];
  return x === null || x === undefined ? 'none' : x >= 0.5 ? 'accept' : 'reject';
}

function distinct(f) { return [...new Set(ROWS.map(f))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)); }

function select(name, label, options, h) {
  const s = el('select', { name, onchange: (e) => go({ [name]: e.target.value, page: null }) },
    el('option', { value: '' }, 'any'),
    options.map(([v, t]) => el('option', { value: v, selected: h.get(name) === String(v) }, t)));
  return el('label', {}, label, s);
}

// The preset view of the first page: inflated memories (stored as trusted, U = 0) by harm.
const PRESET_HARM = 'arms=memory&stored=1&u=0&sort=harm&desc=1';

function listView(h) {
  const rows = filtered(h);
  const multi = D.runs.length > 1;
  const bar = el('div', { class: 'filters' },
    multi ? select('run', 'run', D.runs.map((r) => [r.name, r.name]), h) : null,
    select('arm', 'arm', distinct((r) => r.arm).map((a) => [a, a]), h),
    select('seed', 'seed', distinct((r) => r.seed).map((s) => [s, s]), h),
    select('u', 'U', [['1', 'right'], ['0', 'wrong'], ['none', 'not evaluated']], h),
    select('r', 'self-grade', [['1', 'correct'], ['0', 'incorrect'], ['none', 'none']], h),
    select('stored', 'stored label', [['1', 'trusted'], ['0', 'untrusted']], h),
    select('flagged', 'flagged', [['true', 'yes'], ['false', 'no']], h),
    select('channel', 'channel fired', distinct((r) => r.channels).flat().filter((c, i, a) => a.indexOf(c) === i).map((c) => [c, c]), h),
    D.verifiers.length ? select('verifier', 'verifier', D.verifiers.map((v) => [v, v]), h) : null,
    D.verifiers.length ? select('vote', 'vote', [['accept', 'accepts'], ['reject', 'rejects'], ['none', 'none']], h) : null,
    el('label', {}, 'question / answer', el('input', {
      type: 'search', id: 'text', value: h.get('text') || '', placeholder: 'text',
      onchange: (e) => go({ text: e.target.value, page: null }),
    })),
    D.served ? el('label', {}, 'model text', el('input', {
      type: 'search', id: 'hits', value: h.get('hits') || '', placeholder: 'search calls and plans',
      onchange: (e) => go({ hits: e.target.value, page: null }),
    })) : el('span', { class: 'muted' }, 'search of model text: with the server (lucid view RUN)'),
    el('span', { id: 'count' }, `${rows.length} of ${ROWS.length} episodes`),
    el('a', { id: 'preset-harm', href: '#' + PRESET_HARM, title: 'stored as trusted but wrong (U = 0), most harmful first: ' +
      'harm = later episodes shown the memory that went wrong on a task the ' + D.no_memory + ' arm got right (pipelines/reports/harm.sql)' },
    'inflated memories by harm'));
  const cols = [multi ? ['run', 'run'] : null, ['arm', 'arm'], ['seed', 'seed'], ['step', 'step'], ['question', 'question'],
    ['artifact', 'answer'], ['r', 'r'], ['u', 'U'], ['stored_q', 'stored'], ['channels', 'channels fired'],
    ['memories', 'memories shown'], ['shown_later', 'shown later'], ['later_right', 'later right'], ['later_wrong', 'later wrong'], ['harm', 'harm'],
    ...D.verifiers.map((v) => [v, v])].filter(Boolean);
  // Its own memory's later life, one click to the memory's page (not the row's episode).
  const life = (r, v) => el('td', { class: 'num' }, el('a', { class: 'life', href: lifeHref(r.key), title: 'this memory’s life',
    onclick: (e) => e.stopPropagation() }, fmt(v)));
  const sort = h.get('sort');
  const head = el('tr', {}, cols.map(([k, t]) => el('th', {
    onclick: () => go({ sort: k, desc: sort === k && !h.get('desc') ? '1' : null }),
  }, t + (sort === k ? (h.get('desc') ? ' ▾' : ' ▴') : ''))));
  const shown = Number(h.get('page') || 1) * PAGE;
  const cursor = Number(h.get('cursor') || 0);
  const body = rows.slice(0, shown).map((r, i) => el('tr', {
    class: 'row' + (i === cursor ? ' cursor' : ''), 'data-key': r.key, onclick: () => go({ ep: r.key, cursor: i }),
  },
  multi ? el('td', {}, r.run) : null, el('td', {}, r.arm), el('td', {}, r.seed), el('td', {}, r.step),
  textCell(r.question, 90), textCell(r.artifact, 60),
  el('td', {}, fmt(r.r)), uCell(r.u), el('td', {}, fmt(r.stored_q)),
  el('td', {}, r.channels.map((c) => el('span', { class: 'chip' }, c))),
  el('td', { class: 'num' }, r.retrieved.length), life(r, r.shown_later), life(r, r.later_right),
  life(r, r.later_wrong), life(r, r.harm),
  D.verifiers.map((v) => el('td', { class: voteOf(r, v) === 'accept' ? 'yes' : voteOf(r, v) === 'reject' ? 'no' : 'muted' }, fmt(r[v])))));
  const more = rows.length > shown
    ? el('button', { onclick: () => go({ page: String(Number(h.get('page') || 1) + 1) }) }, `show ${Math.min(PAGE, rows.length - shown)} more`)
    : null;
  return [bar, el('table', { id: 'episodes' }, el('thead', {}, head), el('tbody', {}, body)), more];
}

async function body(key) {
  if (BODIES.has(key)) return BODIES.get(key);
  if (D.served) {
    const out = await api('api/episode?key=' + encodeURIComponent(key));
    if (out.error) throw new Error(out.error);
    BODIES.set(key, out);
    return out;
  }
  const row = BY_KEY.get(key);
  await load(`details/${Math.floor(row.i / CHUNK)}.js`);
  return BODIES.get(key);
}
window.LUCID_DETAIL = (chunk) => { for (const [k, v] of Object.entries(chunk)) BODIES.set(k, v); };

// A row's fields as a list, leaving out `skip` and the empty ones (null: nothing recorded, or a
// column of another run's domain), which are named in one muted line. Text over several lines
// keeps its lines.
function dl(obj, skip) {
  const fields = Object.entries(obj || {}).filter(([k]) => !(skip || []).includes(k));
  const none = (v) => v === null || v === undefined;
  const empty = fields.filter(([, v]) => none(v)).map(([k]) => k);
  const value = (v) => (typeof v === 'string' && v.includes('\n') ? el('pre', {}, v) : fmt(v));
  return [
    el('dl', {}, fields.filter(([, v]) => !none(v)).map(([k, v]) => [el('dt', {}, k), el('dd', {}, value(v))])),
    empty.length ? el('p', { class: 'muted empty' }, 'empty: ' + empty.join(', ')) : null,
  ];
}

// The reference answer's column in each domain's `gold` table (text-to-SQL, factual QA, code),
// shown first; the table's other columns follow it.
const GOLD_ANSWER = ['gold_sql', 'answer', 'canonical_solution'];
function goldView(g) {
  if (!g) return el('p', { class: 'muted' }, 'No gold table in this run.');
  const main = GOLD_ANSWER.find((c) => g[c] !== null && g[c] !== undefined);
  return [main ? el('pre', { id: 'gold', class: 'gold' }, g[main]) : null, dl(g, ['run', 'question_id', main])];
}

// `text` to the clipboard (the Clipboard API where the page may use it, else a selection copied).
function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const t = el('textarea', { class: 'offscreen', readonly: true });
  t.value = text;
  document.body.append(t);
  t.select();
  const ok = document.execCommand('copy');
  t.remove();
  return ok ? Promise.resolve() : Promise.reject(new Error('the browser refused to copy'));
}

// One episode as JSON: its body as fetched (in an export, its details file's object), copied or
// saved as a file.
function jsonTools(key, b) {
  const text = JSON.stringify(b, null, 2);
  const said = el('span', { class: 'muted', id: 'copied' });
  const save = () => {
    const a = el('a', { href: URL.createObjectURL(new Blob([text], { type: 'application/json' })), download: key.replace(/\|/g, '_') + '.json' });
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  };
  return el('div', { class: 'bar' },
    el('button', { id: 'copy-json', onclick: () => copyText(text).then(() => { said.textContent = 'copied'; }, (e) => { said.textContent = String(e); }) }, 'Copy as JSON'),
    el('a', { href: '#', id: 'save-json', onclick: (e) => { e.preventDefault(); save(); } }, 'save as .json'), said);
}

function episodeView(h) {
  const key = h.get('ep');
  const row = BY_KEY.get(key);
  if (!row) return el('p', { class: 'error' }, 'no episode ' + key);
  const rows = filtered(h);
  const at = rows.findIndex((r) => r.key === key);
  const nav = el('div', { class: 'bar' },
    el('a', { href: hrefWith({ ep: null }) }, '← episodes'),
    at > 0 ? el('a', { href: hrefWith({ ep: rows[at - 1].key }), id: 'prev' }, '‹ previous') : null,
    at >= 0 && at + 1 < rows.length ? el('a', { href: hrefWith({ ep: rows[at + 1].key }), id: 'next' }, 'next ›') : null,
    el('span', { class: 'muted' }, at >= 0 ? `${at + 1} of ${rows.length} in the filter` : 'outside the filter'),
    el('a', { href: '#' + new URLSearchParams({ mem: key }).toString() }, 'this memory’s life'));
  const holder = el('div', { id: 'episode' }, el('p', { class: 'muted' }, 'Loading…'));
  body(key).then((b) => holder.replaceChildren(...episodeBody(row, b).filter(Boolean)))
    .catch((e) => holder.replaceChildren(el('p', { class: 'error' }, String(e))));
  return [nav, holder];
}

function episodeBody(row, b) {
  const ep = b.episode || {};
  const known = ['seed', 'arm', 'step', 'question_id', 'retrieved', 'channels', 'plan', 'grade', 'r', 'stored_q', 'flagged', 'run'];
  const art = D.runs.find((r) => r.name === row.run)?.artifact;
  const channels = (ep.channels || []).map((c) => el('tr', {}, el('td', {}, c.name),
    el('td', { class: c.fired ? 'no' : 'muted' }, c.fired ? 'fired' : 'silent'), el('td', {}, fmt(c.detail))));
  const memories = (b.memories || []).map((m) => el('tr', {},
    el('td', {}, m.key ? el('a', { href: '#' + new URLSearchParams({ ep: m.key }).toString() }, m.step) : m.step),
    textCell(m.question, 70), textCell(m.artifact, 50),
    el('td', { class: m.shown_label === 1 ? 'yes' : 'no' }, m.shown_label === 1 ? 'trusted' : 'untrusted'),
    uCell(m.u), el('td', {}, simText(m.similarity)),
    el('td', { title: m.policy || '' }, m.p_first === undefined || m.p_first === null ? '–' : Number(m.p_first).toFixed(3)),
    el('td', {}, fmt(m.same_db)),
    el('td', {}, m.key ? el('a', { href: lifeHref(m.key) }, 'life') : '')));
  // Each call's prompt: from this machine's response cache (under the call's key) where it holds it.
  const calls = (b.calls || []).map((c) => el('div', { class: 'call ' + c.role },
    el('h3', {}, `${c.role} — ${c.backend} ${c.model || ''}`),
    el('div', { class: 'muted' }, `${c.cache_hit ? 'cached' : 'called'} · ${fmt(c.latency_ms && Math.round(c.latency_ms))} ms · ` +
      `${fmt(c.tokens_in)} in / ${fmt(c.tokens_out)} out · attempts ${fmt(c.attempts)} · key ${short(c.key, 18)}`),
    c.error ? el('pre', { class: 'error' }, c.error) : null,
    el('h4', {}, c.prompt_from ? `Prompt (from ${c.prompt_from})` : 'Prompt'),
    c.prompt !== undefined && c.prompt !== null ? el('pre', { class: 'prompt' }, c.prompt)
      : el('p', { class: 'muted prompt' }, 'Not on this machine: the run keeps the reply; the messages sent are in the response cache of the machine that ran it, under key ' + short(c.key, 18) + '.'),
    el('h4', {}, 'Reply'),
    el('pre', { class: 'reply' }, fmt(c.text))));
  const votes = Object.entries(b.votes || {}).map(([v, r]) => el('div', {}, el('h3', {}, v), dl(r, ['run', 'seed', 'arm', 'step', 'question_id'])));
  return [
    jsonTools(row.key, b),
    el('h2', {}, row.question || '(no question)'),
    el('section', {}, el('h3', {}, 'Task'), dl(b.task, ['run', 'question'])),
    ep.plan ? el('section', {}, el('h3', {}, 'Plan'), el('pre', {}, ep.plan)) : null,
    el('section', {}, el('h3', {}, `Artifact (${art || 'answer'})`), el('pre', { id: 'artifact' }, fmt(row.artifact)),
      el('h3', {}, 'Observation'), dl(ep, known.concat([art]))),
    el('section', { id: 'gold-answer' }, el('h3', {}, 'Gold answer (the reference, after the fact)'), goldView(b.gold)),
    el('section', {}, el('h3', {}, 'Grades'), el('dl', {},
      el('dt', {}, 'self-grade'), el('dd', {}, `${fmt(ep.grade)} (r = ${fmt(ep.r)})`),
      el('dt', {}, 'stored label'), el('dd', {}, fmt(ep.stored_q)),
      el('dt', {}, 'U (gold, after the fact)'), el('dd', { class: row.u === 1 ? 'u1' : row.u === 0 ? 'u0' : '' }, fmt(row.u))),
    b.evaluation ? dl(b.evaluation, ['run', 'seed', 'arm', 'step', 'question_id']) : null),
    el('section', {}, el('h3', {}, 'Channels (answer-free)'), channels.length ? el('table', {}, channels) : el('p', { class: 'muted' }, 'none')),
    el('section', {}, el('h3', {}, `Memories shown (${memories.length})`), memories.length
      ? el('table', { id: 'memories' }, el('tr', {}, ['step', 'question', 'answer', 'label shown', 'U', 'similarity', 'p(drawn first)', 'same group', ''].map((t) => el('th', {}, t))), memories)
      : el('p', { class: 'muted' }, 'none')),
    el('section', {}, el('h3', {}, 'Its own memory later'),
      el('p', {}, el('a', { href: lifeHref(row.key) }, `Shown to ${fmt(row.shown_later)} later episodes; ${fmt(row.later_right)} of them went right.`))),
    votes.length ? el('section', {}, el('h3', {}, 'Verifiers'), votes) : null,
    el('section', { id: 'calls' }, el('h3', {}, `Model calls (${calls.length})`),
      el('p', { class: 'muted' }, 'Each call\'s reply is in the run; the messages it sent are read from this machine\'s response cache under the call\'s key (cut at 64 KiB, keys redacted), where it holds them.'), calls),
  ];
}

function memoryView(h) {
  const key = h.get('mem');
  const row = BY_KEY.get(key);
  if (!row) return el('p', { class: 'error' }, 'no episode ' + key);
  const later = ROWS.filter((r) => r.run === row.run && r.seed === row.seed && r.arm === row.arm && r.step > row.step)
    .map((r) => [r, r.retrieved.find((m) => m[0] === row.step)]).filter(([, m]) => m);
  const right = later.filter(([r]) => r.u === 1).length;
  const trusted = later.filter(([, m]) => m[1] === 1).length;
  // The memory's own gold answer is in its episode's body.
  const gold = el('div', { id: 'memory-gold' }, el('p', { class: 'muted' }, 'Loading…'));
  body(key).then((b) => gold.replaceChildren(...[goldView(b.gold)].flat(Infinity).filter(Boolean)))
    .catch((e) => gold.replaceChildren(el('p', { class: 'error' }, String(e))));
  return [
    el('div', { class: 'bar' }, el('a', { href: '#' + new URLSearchParams({ ep: key }).toString() }, '← its episode')),
    el('h2', {}, 'Memory: ' + (row.question || key)),
    el('div', { class: 'pair' },
      el('div', {}, el('h3', {}, 'Its answer'), el('pre', { id: 'memory-answer' }, fmt(row.artifact))),
      el('div', {}, el('h3', {}, 'Gold answer'), gold)),
    el('dl', {}, el('dt', {}, 'U'), el('dd', { class: row.u === 1 ? 'u1' : row.u === 0 ? 'u0' : '' }, fmt(row.u)),
      el('dt', {}, 'self-grade r'), el('dd', {}, fmt(row.r)), el('dt', {}, 'stored label'), el('dd', {}, fmt(row.stored_q))),
    el('p', { class: 'stat', id: 'life' }, `Shown to ${later.length} later episodes (${trusted} as trusted); ${right} of them went right.`),
    el('table', { id: 'later' }, el('tr', {}, ['step', 'question', 'their answer', 'U', 'similarity', 'label shown', 'r'].map((t) => el('th', {}, t))),
      later.map(([r, m]) => el('tr', { class: 'row', onclick: () => go({ ep: r.key, mem: null }) }, el('td', {}, r.step),
        textCell(r.question, 70), el('td', {}, el('div', { class: 'answer' }, fmt(r.artifact))), uCell(r.u),
        el('td', {}, simText(m[2])), el('td', {}, m[1] === 1 ? 'trusted' : 'untrusted'), el('td', {}, fmt(r.r))))),
  ];
}

function compareView(h) {
  const cells = distinct((r) => r.run + '|' + r.arm);
  const a = h.get('a') || cells[0];
  const b = h.get('b') || cells[1] || cells[0];
  const pick = (name, v) => el('label', {}, name, el('select', { name, onchange: (e) => go({ [name]: e.target.value }) },
    cells.map((c) => el('option', { value: c, selected: c === v }, c.replace('|', ' / ')))));
  const [ra, aa] = a.split('|');
  const [rb, ab] = b.split('|');
  const side = (run, arm) => new Map(ROWS.filter((r) => r.run === run && r.arm === arm).map((r) => [r.seed + '|' + r.question_id, r]));
  const A = side(ra, aa);
  const B = side(rb, ab);
  // Changed: U or the answer's text differs (a rewording with the same U counts); U changed only:
  // what the paired difference counts.
  const changedOnly = h.get('changed') !== '0';
  const uOnly = h.get('uonly') === '1';
  const pairs = [...A.entries()].filter(([k]) => B.has(k)).map(([k, x]) => [x, B.get(k)])
    .filter(([x, y]) => (uOnly ? x.u !== y.u : !changedOnly || x.u !== y.u || x.artifact !== y.artifact));
  // U is execution accuracy (EX) in text-to-SQL, the answer's accuracy in the other domains.
  const domain = (run) => D.runs.find((r) => r.name === run)?.artifact;
  const metric = domain(ra) === 'sql' && domain(rb) === 'sql' ? 'EX' : 'accuracy';
  const stats = D.compare.map((s) => {
    if (s.run_a === ra && s.arm_a === aa && s.run_b === rb && s.arm_b === ab) return s;
    if (s.run_a === rb && s.arm_a === ab && s.run_b === ra && s.arm_b === aa) return { ...s, diff: -s.diff, lo: -s.hi, hi: -s.lo };
    return null;
  }).filter(Boolean);
  return [
    el('div', { class: 'filters' }, pick('a', a), pick('b', b),
      el('label', { title: 'U or the answer\'s text differs' }, el('input', { type: 'checkbox', id: 'changed', checked: changedOnly || uOnly, disabled: uOnly, onchange: (e) => go({ changed: e.target.checked ? null : '0' }) }), 'changed only'),
      el('label', { title: 'only the questions whose U differs, as the paired difference counts them' }, el('input', { type: 'checkbox', id: 'uonly', checked: uOnly, onchange: (e) => go({ uonly: e.target.checked ? '1' : null }) }), 'U changed only')),
    el('table', { id: 'paired' }, el('tr', {}, ['seed', 'pairs', 'U differs', `A − B (${metric} points)`, '95 % interval'].map((t) => el('th', {}, t))),
      stats.map((s) => el('tr', {}, el('td', {}, s.seed), el('td', {}, s.n), el('td', {}, s.changed), el('td', {}, fmt(s.diff)), el('td', {}, `[${fmt(s.lo)}, ${fmt(s.hi)}]`)))),
    el('p', { class: 'muted' }, 'Paired on the question within a seed; the interval is a bootstrap over questions (pipelines/reports/compare_runs.sql). ' +
      '“U differs” counts the questions whose U changed; “changed only” below also lists answers reworded with the same U.'),
    el('h3', { id: 'pairs-count' }, `${pairs.length} question${pairs.length === 1 ? '' : 's'}${uOnly ? ' whose U changed' : changedOnly ? ' that changed' : ''}`),
    el('table', { id: 'pairs' }, el('tr', {}, ['seed', 'question', 'A answer', 'A U', 'B answer', 'B U'].map((t) => el('th', {}, t))),
      pairs.slice(0, 1000).map(([x, y]) => el('tr', { class: 'row', onclick: () => go({ view: null, ep: x.key }) }, el('td', {}, x.seed),
        el('td', { class: 'text' }, short(x.question, 70)), el('td', { class: 'text' }, short(x.artifact, 40)), uCell(x.u),
        el('td', { class: 'text' }, short(y.artifact, 40)), uCell(y.u)))),
  ];
}

// A run's report: served, it opens in a tab through a ticket (a tab cannot send the token's
// header); the ticket is asked for when the link is drawn.
function reportLink(run) {
  const a = el('a', { class: 'report', target: '_blank', rel: 'noopener' }, `${run} report`);
  api('api/ticket', { method: 'POST' }).then((t) => {
    if (t.ticket) a.setAttribute('href', `report/~${t.ticket}/${encodeURIComponent(run)}/report.html`);
  }).catch(() => {});
  return a;
}

function sqlView(h) {
  if (!D.served) {
    return el('p', { class: 'muted' }, 'The SQL box needs the server: run `lucid view RUN`. This export holds the table, the episodes, the memories and the comparison.');
  }
  const reports = D.runs.filter((r) => r.report).map((r) => reportLink(r.name));
  const box = el('textarea', { id: 'sql', spellcheck: 'false' }, h.get('sql') || 'SELECT arm, count(*) AS episodes, avg(r) AS self_grade FROM episodes GROUP BY arm ORDER BY arm');
  const out = el('div', { id: 'result' });
  const run = async () => {
    out.replaceChildren(el('p', { class: 'muted' }, 'Running…'));
    let r;
    try { r = await api('api/query', { method: 'POST', body: box.value }); } catch (e) { r = { error: String(e) }; }
    if (r.error) { out.replaceChildren(el('p', { class: 'error' }, r.error)); return; }
    out.replaceChildren(...sqlResult(r));
  };
  box.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); go({ sql: box.value }); } });
  if (h.get('sql')) run();
  const l = D.sql_limits || {};
  return [el('p', { class: 'muted' }, 'Read-only SQL over the runs, their tables named as `lucid query` names them (no DDL, DML, COPY or SET). Ctrl+Enter runs.'),
    el('p', { class: 'muted', id: 'sql-bounds' }, `Bounded: memory ${D.sql_bounds}; ${l.seconds} s a query, ${l.at_once} at once; ` +
      `the first ${l.rows} rows or ${l.answer_mib} MiB of values; a value made by repeat, lpad, rpad, array_repeat, range at most ${l.value_kib} KiB; ` +
      `the query's text at most ${l.sql_kib} KiB. A query past a bound is stopped and says which.`),
    box, el('div', { class: 'bar' }, el('button', { id: 'run', onclick: () => go({ sql: box.value }) }, 'Run'), reports), out];
}

// A query's result. A row naming an episode (seed, arm, step, and run unless one run is loaded)
// opens it.
function sqlResult(r) {
  const has = (c) => r.columns.includes(c);
  const names = has('seed') && has('arm') && has('step') && (has('run') || D.runs.length === 1);
  const keyOf = (row) => [has('run') ? row.run : D.runs[0].name, row.seed, row.arm, row.step].join('|');
  return [
    el('p', { class: 'muted' }, `${r.rows.length} row${r.rows.length === 1 ? '' : 's'}` + (r.rows.length >= r.limit ? ` (the first ${r.limit})` : r.more ? ` (the first ${r.answer_limit >> 20} MiB of values)` : '') +
      (names ? ' · a row opens its episode' : '')),
    el('table', { id: 'sql-result' }, el('tr', {}, names ? el('th', {}, '') : null, r.columns.map((c) => el('th', {}, c))),
      r.rows.map((row) => {
        const k = names ? keyOf(row) : null;
        const open = k !== null && BY_KEY.has(k);
        return el('tr', { class: open ? 'row' : null, onclick: open ? () => go({ ep: k }) : null },
          names ? el('td', {}, open ? el('a', { class: 'open', href: hrefWith({ ep: k }), onclick: (e) => e.stopPropagation() }, 'episode') : '') : null,
          r.columns.map((c) => el('td', {}, fmt(row[c]))));
      })),
  ];
}

async function render() {
  const h = params();
  const main = document.getElementById('main');
  const view = h.get('ep') ? 'episode' : h.get('mem') ? 'memory' : h.get('view') || 'list';
  for (const n of ['list', 'compare', 'sql']) document.getElementById('nav-' + n).classList.toggle('on', view === n);
  if (h.get('hits') && D.served && hitSet?.query !== h.get('hits')) {
    const found = await api('api/search?q=' + encodeURIComponent(h.get('hits'))).catch(() => []);
    hitSet = new Set(Array.isArray(found) ? found : []);
    hitSet.query = h.get('hits');
  }
  const views = { list: listView, episode: episodeView, memory: memoryView, compare: compareView, sql: sqlView };
  const t0 = performance.now();
  main.replaceChildren(...[].concat((views[view] || listView)(h)).filter(Boolean));
  document.body.dataset.view = view;
  // Timings the benchmark reads: this view's filter and render, and the page's open until now.
  document.body.dataset.renderMs = (performance.now() - t0).toFixed(1);
  if (!document.body.dataset.openMs) document.body.dataset.openMs = performance.now().toFixed(1);
}

function keys(e) {
  if (['INPUT', 'TEXTAREA', 'SELECT'].includes(e.target.tagName)) return;
  const h = params();
  if (e.key === '/') { e.preventDefault(); document.getElementById('text')?.focus(); return; }
  if (e.key === 'Escape') { go({ ep: null, mem: null }); return; }
  const step = e.key === 'j' || e.key === 'ArrowDown' ? 1 : e.key === 'k' || e.key === 'ArrowUp' ? -1 : 0;
  if (h.get('ep')) {
    if (!step) return;
    const rows = filtered(h);
    const at = rows.findIndex((r) => r.key === h.get('ep'));
    const next = rows[at + step];
    if (next) go({ ep: next.key });
  } else if (!h.get('mem') && (h.get('view') || 'list') === 'list') {
    const rows = filtered(h);
    const cursor = Number(h.get('cursor') || 0);
    if (step) { e.preventDefault(); go({ cursor: String(Math.max(0, Math.min(rows.length - 1, cursor + step))) }); }
    if (e.key === 'Enter' && rows[cursor]) go({ ep: rows[cursor].key });
  }
}

function start() {
  D = window.LUCID_DATA;
  ROWS = D.rows;
  ROWS.forEach((r, i) => { r.i = i; r.key = [r.run, r.seed, r.arm, r.step].join('|'); BY_KEY.set(r.key, r); });
  document.getElementById('runs').textContent = D.runs.map((r) => r.name).join(' · ') + ` — ${ROWS.length} episodes`;
  window.addEventListener('hashchange', render);
  document.addEventListener('keydown', keys);
  return render();
}

// The data: an export's page loads its data.js (window.LUCID_DATA) before this script; the
// server's page fetches api/data (JSON, never a script another site could load).
(window.LUCID_DATA ? Promise.resolve() : api('api/data').then((d) => {
  if (d.error) throw new Error(d.error);
  window.LUCID_DATA = d;
})).then(start).catch((e) => {
  document.getElementById('main').replaceChildren(el('p', { class: 'error' }, String(e)));
});
