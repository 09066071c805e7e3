// The console's pages. Each renders into a node and answers a function that stops what it started (timers,
// streams). Every minion-controlled string is given to dom.js as text.

import { call, events, path } from './api.js';
import { el, fill, table, time, value } from './dom.js';

function problem(node, e) {
  fill(node, e.message);
  node.hidden = false;
}

function every(ms, refresh) {
  let timer = null;
  let stopped = false;
  const run = async () => {
    await refresh();
    if (!stopped) {
      timer = setTimeout(run, ms);
    }
  };
  run();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/**
 * The confirm step of a key change: the id and the fingerprint the admin is shown, to be compared with the minion's
 * own (brine-minion --fingerprint); the change is sent with that very fingerprint, so a key that changed meanwhile
 * is not touched (409).
 */
function confirmChange(panel, key, verb, done) {
  const status = el('p', { class: 'status', role: 'status' });
  const send = el('button', { type: 'button', id: 'confirm-change', class: verb === 'accept' ? 'primary' : 'danger' },
      verb.charAt(0).toUpperCase() + verb.slice(1) + ' this key');
  const cancel = el('button', { type: 'button', id: 'cancel-change' }, 'Cancel');
  cancel.addEventListener('click', () => fill(panel));
  send.addEventListener('click', async () => {
    send.disabled = true;
    cancel.disabled = true;
    try {
      const answer = await call('POST', '/api/keys/' + encodeURIComponent(key.id) + '/' + verb,
          { fingerprint: key.fingerprint });
      fill(panel, el('p', { class: 'done', id: 'change-result' }, key.id + ': ' + answer.result + '. ',
          answer.message));
    } catch (e) {
      fill(status, e.status === 409 ? 'Not done: ' + e.message : e.message);
      cancel.disabled = false;
    }
    done();
  });
  fill(panel, el('div', { class: 'confirm', id: 'confirm' },
      el('h2', {}, verb.charAt(0).toUpperCase() + verb.slice(1) + ' the ' + key.state + ' key of ', el('span',
          { class: 'id' }, key.id), '?'),
      el('p', {}, 'Fingerprint:'),
      el('p', { class: 'fingerprint', id: 'confirm-fingerprint' }, key.fingerprint),
      el('p', { class: 'hint' }, 'Compare it with the minion\'s own, as ', el('code', {}, 'brine-minion --fingerprint'),
          ' prints it on the minion. The master ' + verb + 's only the key with this fingerprint.'),
      key.same_key_as ? el('p', { class: 'warning' }, 'Same key as: ', key.same_key_as) : null,
      el('p', { class: 'buttons' }, send, ' ', cancel), status));
}

function keyRows(keys, panel, refresh, actions) {
  return keys.map((key) => [
    el('span', { class: 'id' }, key.id),
    key.state,
    el('code', { class: 'fingerprint' }, key.fingerprint),
    key.kind,
    key.same_key_as || '',
    el('span', { class: 'actions' }, actions(key).map((verb) => el('button', {
      type: 'button', class: 'action', 'data-verb': verb,
      onclick: () => confirmChange(panel, key, verb, refresh),
    }, verb.charAt(0).toUpperCase() + verb.slice(1) + '…'))),
  ]);
}

const HEADINGS = ['Id', 'State', 'Fingerprint', 'Kind', 'Same key as', ''];

export function pending(view) {
  const error = el('p', { class: 'error', hidden: true });
  const list = el('div', { id: 'pending-list' });
  const panel = el('div', { id: 'confirm-panel' });
  const more = el('p', { class: 'hint', hidden: true });
  fill(view, el('h1', {}, 'Pending keys'), el('p', { class: 'hint' }, 'Minions waiting for an admin. Refreshed every'
      + ' 2 s.'), error, list, more, panel);
  const refresh = async () => {
    try {
      const page = await call('GET', path('/api/keys', { state: 'pending', limit: 1000 }));
      error.hidden = true;
      fill(list, table('pending-keys', HEADINGS, keyRows(page.keys, panel, refresh, () => ['accept', 'reject']),
          'No key is pending.'));
      more.hidden = !page.next;
      fill(more, 'More than 1,000 keys are pending: see All keys for the rest.');
    } catch (e) {
      problem(error, e);
    }
  };
  return every(2000, refresh);
}

export function keys(view) {
  const error = el('p', { class: 'error', hidden: true });
  const match = el('input', { id: 'key-match', type: 'search', placeholder: 'id glob, e.g. web*', spellcheck: 'false' });
  const state = el('select', { id: 'key-state' }, ['', 'pending', 'accepted', 'rejected', 'denied'].map((s) =>
    el('option', { value: s }, s || 'any state')));
  const list = el('div', { id: 'key-list' });
  const panel = el('div', { id: 'confirm-panel' });
  const previous = el('button', { type: 'button', id: 'previous-page' }, '← Previous');
  const next = el('button', { type: 'button', id: 'next-page' }, 'Next →');
  const where = el('span', { class: 'hint' });
  // The cursors of the pages seen: the API pages by id ("after" the last id of the page before).
  let cursors = [''];
  const load = async () => {
    try {
      const page = await call('GET', path('/api/keys', { match: match.value.trim(), state: state.value, limit: 100,
        after: cursors[cursors.length - 1] }));
      error.hidden = true;
      const actions = (key) => key.state === 'accepted' ? ['reject', 'delete'] : key.state === 'pending'
        ? ['accept', 'reject', 'delete'] : ['accept', 'delete'];
      fill(list, table('all-keys', HEADINGS, keyRows(page.keys, panel, load, actions), 'No key matches.'));
      previous.disabled = cursors.length === 1;
      next.disabled = !page.next;
      next.dataset.after = page.next || '';
      fill(where, 'Page ' + cursors.length);
    } catch (e) {
      problem(error, e);
    }
  };
  const search = (event) => {
    event.preventDefault();
    cursors = [''];
    load();
  };
  previous.addEventListener('click', () => {
    cursors.pop();
    load();
  });
  next.addEventListener('click', () => {
    cursors.push(next.dataset.after);
    load();
  });
  state.addEventListener('change', search);
  fill(view, el('h1', {}, 'All keys'),
      el('form', { id: 'key-search', class: 'bar', onsubmit: search }, match, ' ', state, ' ',
          el('button', { type: 'submit' }, 'Search')),
      error, list, el('p', { class: 'bar' }, previous, ' ', where, ' ', next), panel);
  load();
  return () => {};
}

/** Arguments as typed: a JSON array, or words separated by spaces (as on brine's command line). */
function parseArgs(text) {
  const trimmed = text.trim();
  if (trimmed === '') {
    return [];
  }
  if (trimmed.startsWith('[')) {
    const parsed = JSON.parse(trimmed);
    if (!Array.isArray(parsed)) {
      throw new Error('arguments: expected a JSON array');
    }
    return parsed;
  }
  return trimmed.split(/\s+/);
}

function showJob(node, job) {
  const returns = Object.entries(job.returns || {});
  fill(node, el('div', { class: 'job', id: 'job-' + job.jid },
      el('h2', {}, 'Job ', el('code', {}, job.jid), ': ', job.fun, ' on ', job.target),
      el('p', { class: 'hint' }, time(job.time), ' by ', job.publisher, ' · ', String(returns.length), ' of ',
          String((job.minions || []).length), ' returned'),
      (job.missing || []).length ? el('p', { class: 'warning' }, 'Not returned: ', job.missing.join(', '),
          (job.unreachable || []).length ? ' (unreachable: ' + job.unreachable.join(', ') + ')' : '') : null,
      returns.length === 0 ? el('p', { class: 'empty' }, 'No return yet.') : el('div', { class: 'returns' },
          returns.map(([id, ret]) => el('section', { class: 'return' + (ret.success ? '' : ' failed') },
              el('h3', {}, el('span', { class: 'id' }, id), ' ', el('span', { class: 'retcode' },
                  'retcode ' + ret.retcode + (ret.success ? '' : ' (failed)'))),
              value(ret.return))))));
}

export function jobs(view, jid) {
  const error = el('p', { class: 'error', hidden: true });
  const target = el('input', { id: 'job-target', value: '*', required: true, spellcheck: 'false' });
  const type = el('select', { id: 'job-target-type' }, ['glob', 'list', 'pcre', 'grain', 'compound', 'nodegroup']
      .map((t) => el('option', { value: t }, t)));
  const fun = el('input', { id: 'job-fun', value: 'test.ping', required: true, spellcheck: 'false' });
  const args = el('input', { id: 'job-args', placeholder: 'arguments: words, or a JSON array', spellcheck: 'false' });
  const timeout = el('input', { id: 'job-timeout', type: 'number', min: 1, max: 86400, value: 30 });
  const detail = el('div', { id: 'job-detail' });
  const list = el('div', { id: 'job-list' });
  let stopped = false;
  const loadList = async () => {
    try {
      const listed = await call('GET', path('/api/jobs', { limit: 50 }));
      fill(list, table('jobs', ['Job', 'Function', 'Target', 'Minions', 'Time', 'Publisher'],
          [...listed.jobs].reverse().map((job) => [
            el('a', { href: '#jobs/' + encodeURIComponent(job.jid) }, job.jid), job.fun, job.target,
            String(job.minions.length), time(job.time), job.publisher]), 'No job yet.'));
    } catch (e) {
      problem(error, e);
    }
  };
  const follow = async (id, seconds) => {
    try {
      showJob(detail, await call('GET', path('/api/jobs/' + encodeURIComponent(id))));
      if (seconds > 0 && !stopped) {
        showJob(detail, await call('GET', path('/api/jobs/' + encodeURIComponent(id), { wait: seconds })));
      }
    } catch (e) {
      problem(error, e);
    }
  };
  const publish = async (event) => {
    event.preventDefault();
    error.hidden = true;
    let request;
    try {
      request = { target: target.value.trim(), target_type: type.value, fun: fun.value.trim(),
        args: parseArgs(args.value), timeout: Number(timeout.value) };
    } catch (e) {
      problem(error, e);
      return;
    }
    try {
      const published = await call('POST', '/api/jobs', request);
      fill(detail, el('p', { class: 'hint' }, 'Published ', published.jid, ' to ', String(published.minions.length),
          ' minions; waiting for their returns…'));
      await loadList();
      await follow(published.jid, Math.min(request.timeout, 300));
    } catch (e) {
      problem(error, e);
    }
  };
  fill(view, el('h1', {}, 'Jobs'),
      el('form', { id: 'publish', class: 'bar', onsubmit: publish },
          el('label', {}, 'Target ', target), ' ', type, ' ', el('label', {}, 'Function ', fun), ' ', args, ' ',
          el('label', {}, 'Timeout (s) ', timeout), ' ', el('button', { type: 'submit', id: 'publish-button',
            class: 'primary' }, 'Run')),
      error, detail, el('h2', {}, 'Recent jobs'), list);
  loadList();
  if (jid) {
    follow(jid, 0);
  }
  return () => {
    stopped = true;
  };
}

/** Events kept on the page; older ones drop off. */
const KEPT_EVENTS = 500;

export function live(view) {
  const tag = el('input', { id: 'event-tag', value: '*', spellcheck: 'false' });
  const state = el('span', { id: 'event-state', class: 'hint' }, 'connecting…');
  const pause = el('button', { type: 'button', id: 'event-pause' }, 'Pause');
  const list = el('ol', { id: 'event-list', reversed: true });
  let paused = false;
  let stop = () => {};
  const start = () => {
    stop();
    fill(list);
    stop = events(tag.value.trim() || '*', (id, event) => {
      if (paused) {
        return;
      }
      list.prepend(el('li', { class: 'event' }, el('span', { class: 'time' }, time(event.time_ms)), ' ',
          el('code', { class: 'tag' }, event.tag), value(event.data, 600)));
      while (list.children.length > KEPT_EVENTS) {
        list.lastChild.remove();
      }
    }, (s, message) => fill(state, s + (message ? ': ' + message : '')));
  };
  pause.addEventListener('click', () => {
    paused = !paused;
    fill(pause, paused ? 'Resume' : 'Pause');
  });
  fill(view, el('h1', {}, 'Events'),
      el('form', { class: 'bar', onsubmit: (e) => { e.preventDefault(); start(); } },
          el('label', {}, 'Tag ', tag), ' ', el('button', { type: 'submit' }, 'Watch'), ' ', pause, ' ', state),
      el('p', { class: 'hint' }, 'The master\'s event stream, as brine events shows it, newest first (the last '
          + KEPT_EVENTS + ').'), list);
  start();
  return () => stop();
}

export function fleet(view) {
  const error = el('p', { class: 'error', hidden: true });
  const summary = el('div', { id: 'fleet-summary' });
  fill(view, el('h1', {}, 'Fleet'), el('p', { class: 'hint' }, 'Accepted minions in session with this master now'
      + ' (up) or not (down), as brine manage status. Refreshed every 5 s.'), error, summary);
  return every(5000, async () => {
    try {
      const minions = await call('GET', '/api/minions');
      error.hidden = true;
      fill(summary,
          el('p', { class: 'counts' }, el('span', { class: 'up', id: 'up-count' }, String(minions.up.length)), ' up · ',
              el('span', { class: 'down', id: 'down-count' }, String(minions.down.length)), ' down'),
          el('h2', {}, 'Down'), minions.down.length ? el('ul', { id: 'down-list', class: 'ids' }, minions.down.map(
              (id) => el('li', { class: 'id' }, id))) : el('p', { class: 'empty' }, 'None.'),
          el('h2', {}, 'Up'), minions.up.length ? el('ul', { id: 'up-list', class: 'ids' }, minions.up.map(
              (id) => el('li', { class: 'id' }, id))) : el('p', { class: 'empty' }, 'None.'));
    } catch (e) {
      problem(error, e);
    }
  });
}
