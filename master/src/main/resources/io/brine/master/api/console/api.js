// The API as the console calls it: the token from sessionStorage as a bearer header (never in a URL or a cookie);
// a 401 forgets the token and logs the user out with the master's message.

const TOKEN_KEY = 'brine.api.token';

let loggedOut = () => {};

/** Called with a message when the master refuses the token. */
export function onLoggedOut(callback) {
  loggedOut = callback;
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function logIn(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
}

export function logOut() {
  sessionStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function refused(message) {
  logOut();
  loggedOut('The master refused the token (' + message + '). Log in again with a valid token.');
  return new ApiError(401, message);
}

function headers() {
  const value = token();
  if (!value) {
    throw refused('no token');
  }
  return { Authorization: 'Bearer ' + value };
}

const FETCH = { cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer', redirect: 'error' };

/** Calls the API; answers its JSON document, or throws an ApiError with the master's message. */
export async function call(method, path, body) {
  const init = { ...FETCH, method, headers: headers() };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'the master did not answer: ' + e.message);
  }
  let document = null;
  try {
    document = await response.json();
  } catch (e) {
    document = null;
  }
  const message = document && typeof document.message === 'string' ? document.message : response.statusText;
  if (response.status === 401) {
    throw refused(message);
  }
  if (!response.ok) {
    throw new ApiError(response.status, message);
  }
  return document;
}

/** A path with its query, each value encoded. */
export function path(base, query) {
  const parts = [];
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== '') {
      parts.push(encodeURIComponent(name) + '=' + encodeURIComponent(value));
    }
  }
  return parts.length ? base + '?' + parts.join('&') : base;
}

// An event block is at most this long: a longer one means the stream is not what the console expects.
const MAX_BUFFER = 8 * 1024 * 1024;

/**
 * The event stream (server-sent events) read through fetch, since EventSource cannot send a header. Reconnects after
 * a cut with Last-Event-ID, so that no event the master still keeps is missed. Answers a function that stops it.
 */
export function events(tag, onEvent, onState) {
  let stopped = false;
  let lastId = null;
  let controller = null;
  const run = async () => {
    while (!stopped) {
      controller = new AbortController();
      let init;
      try {
        init = { ...FETCH, headers: headers(), signal: controller.signal };
      } catch (e) {
        return;
      }
      if (lastId !== null) {
        init.headers['Last-Event-ID'] = lastId;
      }
      try {
        const response = await fetch(path('/api/events', { tag }), init);
        if (response.status === 401) {
          const document = await response.json().catch(() => null);
          refused(document && document.message ? document.message : 'unauthorized');
          return;
        }
        if (!response.ok) {
          const document = await response.json().catch(() => null);
          onState('error', document && document.message ? document.message : response.statusText);
        } else {
          onState('live');
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done || stopped) {
              break;
            }
            buffer += value;
            let end;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              let id = null;
              let data = '';
              for (const line of block.split('\n')) {
                if (line.startsWith('id: ')) {
                  id = line.slice(4);
                } else if (line.startsWith('data: ')) {
                  data += line.slice(6);
                }
              }
              if (data) {
                lastId = id;
                try {
                  onEvent(id, JSON.parse(data));
                } catch (e) {
                  onState('error', 'an event that is not JSON was skipped');
                }
              }
            }
            if (buffer.length > MAX_BUFFER) {
              controller.abort();
              break;
            }
          }
        }
      } catch (e) {
        if (stopped) {
          return;
        }
        onState('error', e.message);
      }
      if (!stopped) {
        onState('reconnecting');
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
  };
  run();
  return () => {
    stopped = true;
    if (controller) {
      controller.abort();
    }
  };
}
