// The console's shell: the login (a token kept in sessionStorage only), the navigation by #page, and the log-out
// when the master refuses the token.

import { call, logIn, logOut, onLoggedOut, token } from './api.js';
import { fill } from './dom.js';
import * as pages from './pages.js';

const view = document.getElementById('view');
const login = document.getElementById('login');
const nav = document.getElementById('nav');
const logout = document.getElementById('logout');
const notice = document.getElementById('notice');
const input = document.getElementById('token');

const PAGES = { pending: pages.pending, keys: pages.keys, jobs: pages.jobs, events: pages.live, fleet: pages.fleet };

let stop = () => {};

function say(message) {
  fill(notice, message || '');
  notice.hidden = !message;
}

function showLogin(message) {
  stop();
  stop = () => {};
  fill(view);
  view.hidden = true;
  nav.hidden = true;
  logout.hidden = true;
  login.hidden = false;
  say(message);
  input.value = '';
  input.focus();
}

function route() {
  if (!token()) {
    showLogin(notice.hidden ? '' : notice.textContent);
    return;
  }
  stop();
  login.hidden = true;
  nav.hidden = false;
  logout.hidden = false;
  view.hidden = false;
  const [name, ...rest] = location.hash.replace(/^#/, '').split('/');
  const page = Object.hasOwn(PAGES, name) ? name : 'pending';
  for (const link of nav.querySelectorAll('a')) {
    link.classList.toggle('current', link.dataset.page === page);
  }
  stop = PAGES[page](view, rest.length ? decodeURIComponent(rest.join('/')) : undefined) || (() => {});
}

onLoggedOut(showLogin);

document.getElementById('login-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const value = input.value.trim();
  input.value = '';
  if (!value) {
    return;
  }
  logIn(value);
  try {
    await call('GET', '/api/minions');
  } catch (e) {
    if (e.status !== 401) {
      // The token may be fine and the master busy, or the token limited to what it may see: let the pages say.
      say(e.message);
    }
    if (!token()) {
      return;
    }
  }
  say('');
  route();
});

logout.addEventListener('click', () => {
  logOut();
  showLogin('Logged out. The token is forgotten by this tab; it stays valid until revoked (brine-key api-token'
      + ' revoke NAME).');
});

window.addEventListener('hashchange', route);
route();
