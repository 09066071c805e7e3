// Building the page. Every string, whoever wrote it (a minion's id, a return, an event), becomes a text node:
// nothing here parses markup (no HTML string ever meets the DOM), and attributes are set by name.

/** An element with attributes (on* names become listeners) and children (strings become text nodes). */
export function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) {
      continue;
    }
    if (name.startsWith('on')) {
      node.addEventListener(name.slice(2), value);
    } else if (name === 'class') {
      node.className = value;
    } else {
      node.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) {
      continue;
    }
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of {@code node}. */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/** Characters of a value shown before "Show all". */
export const SHOWN = 2000;

/** A value as text: a string as it is, anything else as indented JSON; a long one cut, with a way to see all. */
export function value(data, shown = SHOWN) {
  const text = typeof data === 'string' ? data : JSON.stringify(data, null, 2);
  const pre = el('pre', { class: 'value' });
  if (text === undefined) {
    pre.textContent = String(data);
    return pre;
  }
  if (text.length <= shown) {
    pre.textContent = text;
    return pre;
  }
  pre.textContent = text.slice(0, shown);
  const more = el('button', { type: 'button', class: 'show-all' }, 'Show all (' + text.length.toLocaleString()
      + ' characters)');
  more.addEventListener('click', () => {
    pre.textContent = text;
    more.remove();
  });
  return el('div', { class: 'long-value' }, pre, el('p', { class: 'cut' }, '… cut at ' + shown.toLocaleString()
      + ' characters. '), more);
}

/** A time in ms as the browser's local date and time. */
export function time(ms) {
  return typeof ms === 'number' ? new Date(ms).toLocaleString() : String(ms);
}

/** A table of {@code rows}, each an array of cells (nodes or strings), under {@code headings}. */
export function table(id, headings, rows, empty) {
  if (rows.length === 0) {
    return el('p', { id, class: 'empty' }, empty);
  }
  return el('table', { id },
      el('thead', {}, el('tr', {}, headings.map((h) => el('th', {}, h)))),
      el('tbody', {}, rows.map((cells) => el('tr', {}, cells.map((c) => el('td', {}, c))))));
}
