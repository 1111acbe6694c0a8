// The catalog page's only script (served from the binary). Pages work without it for browsing and
// reading; it adds: the credential (kept in this tab's sessionStorage, sent as a header, never a
// cookie), search as you type, and the try-it form (validated here, sent to POST /tools/call).
// It never writes catalog text as HTML: only textContent and DOM nodes.
(function () {
  'use strict';

  var KEY = 'otc-bridge-credential';

  function stored() {
    try { return JSON.parse(sessionStorage.getItem(KEY) || 'null'); } catch (e) { return null; }
  }

  function authHeaders() {
    var c = stored();
    if (!c || !c.value) { return {}; }
    return c.kind === 'bearer' ? { 'Authorization': 'Bearer ' + c.value } : { 'X-API-Key': c.value };
  }

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = text; }
    if (cls) { node.className = cls; }
    return node;
  }

  // Fetches a page with the stored credential and puts its <main> in place of this one.
  function load(url, push) {
    return fetch(url, { headers: authHeaders(), credentials: 'omit', cache: 'no-store' })
      .then(function (res) {
        return res.text().then(function (text) {
          var doc = new DOMParser().parseFromString(text, 'text/html');
          var main = doc.querySelector('main');
          if (!main) { return; }
          if (res.status === 401) { sessionStorage.removeItem(KEY); }
          if (push) { history.pushState({}, '', url); }
          document.title = doc.title;
          var current = document.querySelector('main');
          var fresh = document.importNode(main, true);
          current.replaceWith(fresh);
          init(fresh);
          updateForget();
        });
      });
  }

  function updateForget() {
    var forget = document.getElementById('forget');
    if (forget) { forget.hidden = !stored(); }
  }

  // With a credential, links and the search form fetch pages with it instead of navigating
  // (a plain navigation could not send the header).
  function keyed() { return !!stored(); }

  document.addEventListener('click', function (event) {
    var link = event.target.closest && event.target.closest('a[href^="/"]');
    if (!link || !keyed() || event.ctrlKey || event.metaKey || event.shiftKey) { return; }
    event.preventDefault();
    load(link.getAttribute('href'), true);
  });

  window.addEventListener('popstate', function () {
    if (keyed()) { load(location.href, false); }
  });

  function searchUrl(q) { return '/ui/search?q=' + encodeURIComponent(q); }

  function initSearch() {
    var form = document.querySelector('form.search');
    var input = document.getElementById('q');
    if (!form || !input) { return; }
    var timer = null;
    form.addEventListener('submit', function (event) {
      if (!keyed()) { return; }
      event.preventDefault();
      load(searchUrl(input.value), true);
    });
    // Search as you type: the same search, a moment after the last key.
    input.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        var q = input.value.trim();
        if (!q) { return; }
        var onSearch = location.pathname === '/ui/search';
        load(searchUrl(q), false).then(function () {
          if (onSearch) { history.replaceState({}, '', searchUrl(q)); } else { history.pushState({}, '', searchUrl(q)); }
        });
      }, 250);
    });
  }

  function initKeyForm(root) {
    var form = root.querySelector('#key-form');
    if (!form) { return; }
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var value = root.querySelector('#key').value.trim();
      if (!value) { return; }
      var kind = root.querySelector('#key-kind').value === 'bearer' ? 'bearer' : 'api-key';
      sessionStorage.setItem(KEY, JSON.stringify({ kind: kind, value: value }));
      load(location.href, false);
    });
  }

  // ---- Validation: the checks of the bridge's input schema validation, with its words. ----

  function typeOf(value) {
    if (value === null) { return 'null'; }
    if (Array.isArray(value)) { return 'array'; }
    if (typeof value === 'number') { return Number.isInteger(value) ? 'integer' : 'number'; }
    return typeof value;
  }

  function fits(value, type) {
    var actual = typeOf(value);
    return actual === type || (type === 'number' && actual === 'integer');
  }

  function equal(a, b) { return JSON.stringify(a) === JSON.stringify(b); }

  function validate(value, schema, at, errors) {
    if (!schema || typeof schema !== 'object') { return; }
    var shown = JSON.stringify(value);
    var types = schema.type === undefined ? null : [].concat(schema.type);
    if (types && !types.some(function (t) { return fits(value, t); })) {
      errors.push([at, shown + ' is not of type ' + types.map(function (t) { return '"' + t + '"'; }).join(', ')]);
      return;
    }
    if (Array.isArray(schema.enum) && !schema.enum.some(function (e) { return equal(e, value); })) {
      errors.push([at, shown + ' is not one of ' + JSON.stringify(schema.enum)]);
    }
    if (schema.const !== undefined && !equal(schema.const, value)) {
      errors.push([at, JSON.stringify(schema.const) + ' was expected']);
    }
    if (typeof value === 'number') {
      if (typeof schema.minimum === 'number' && value < schema.minimum) { errors.push([at, shown + ' is less than the minimum of ' + schema.minimum]); }
      if (typeof schema.maximum === 'number' && value > schema.maximum) { errors.push([at, shown + ' is greater than the maximum of ' + schema.maximum]); }
    }
    if (typeof value === 'string') {
      var length = Array.from(value).length;
      if (typeof schema.minLength === 'number' && length < schema.minLength) { errors.push([at, shown + ' is shorter than ' + schema.minLength + ' character' + (schema.minLength === 1 ? '' : 's')]); }
      if (typeof schema.maxLength === 'number' && length > schema.maxLength) { errors.push([at, shown + ' is longer than ' + schema.maxLength + ' character' + (schema.maxLength === 1 ? '' : 's')]); }
      if (typeof schema.pattern === 'string') {
        try { if (!new RegExp(schema.pattern, 'u').test(value)) { errors.push([at, shown + ' does not match "' + schema.pattern + '"']); } } catch (e) { /* the server decides */ }
      }
    }
    if (Array.isArray(value)) {
      if (typeof schema.minItems === 'number' && value.length < schema.minItems) { errors.push([at, shown + ' has less than ' + schema.minItems + ' item' + (schema.minItems === 1 ? '' : 's')]); }
      if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) { errors.push([at, shown + ' has more than ' + schema.maxItems + ' item' + (schema.maxItems === 1 ? '' : 's')]); }
      if (schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items)) {
        value.forEach(function (item, i) { validate(item, schema.items, at + '/' + i, errors); });
      }
    }
    if (typeOf(value) === 'object') {
      var props = schema.properties || {};
      (schema.required || []).forEach(function (name) {
        if (!(name in value)) { errors.push([at + '/' + name, 'is required']); }
      });
      Object.keys(value).forEach(function (name) {
        if (Object.prototype.hasOwnProperty.call(props, name)) {
          validate(value[name], props[name], at + '/' + name, errors);
        } else if (schema.additionalProperties === false) {
          errors.push([at + '/' + name, 'is not a parameter of this tool']);
        } else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
          validate(value[name], schema.additionalProperties, at + '/' + name, errors);
        }
      });
    }
  }

  // Errors keyed by top-level parameter, as the bridge's `parameter_errors`: a nested error says
  // where (`at /c: …`).
  function parameterErrors(input, schema) {
    var found = [];
    if (typeOf(input) !== 'object') { return { input: 'the input must be a JSON object' }; }
    validate(input, schema, '', found);
    var errors = {};
    found.forEach(function (pair) {
      var parts = pair[0].split('/').slice(1);
      var key = parts.length ? parts[0] : 'input';
      var rest = parts.slice(1).join('/');
      var message = rest ? 'at /' + rest + ': ' + pair[1] : pair[1];
      errors[key] = errors[key] ? errors[key] + '; ' + message : message;
    });
    return errors;
  }

  // ---- Try it ----

  function readField(field) {
    var raw = field.value;
    var kind = field.dataset.kind;
    if (raw.trim() === '') { return { unset: true }; }
    switch (kind) {
      case 'string': return { value: raw };
      case 'boolean': return { value: raw === 'true' };
      case 'integer':
      case 'number': {
        var n = Number(raw.trim());
        // Not a number: sent as the text, so the message says which type was expected.
        return { value: isFinite(n) ? n : raw };
      }
      default:
        try { return { value: JSON.parse(raw) }; } catch (e) { return { error: 'is not valid JSON: ' + e.message }; }
    }
  }

  function shellQuote(text) { return "'" + text.replace(/'/g, "'\\''") + "'"; }

  function initTry(root) {
    var form = root.querySelector('#try');
    if (!form) { return; }
    var schema = {};
    try { schema = JSON.parse(form.dataset.schema || '{}'); } catch (e) { schema = {}; }
    var tool = form.dataset.tool;
    var json = form.querySelector('#try-json');
    var fields = Array.prototype.slice.call(form.querySelectorAll('[data-name]'));
    var errorsBox = form.querySelector('#try-errors');
    var answer = root.querySelector('#try-answer');
    var bodyBox = root.querySelector('#try-body');
    var curlBox = root.querySelector('#try-curl');
    var fieldErrors = {};

    function fromFields() {
      var input = {};
      fieldErrors = {};
      fields.forEach(function (field) {
        var read = readField(field);
        if (read.error) { fieldErrors[field.dataset.name] = read.error; } else if (!read.unset) { input[field.dataset.name] = read.value; }
      });
      return input;
    }

    function requestBody(input) { return { request: { tool_id: tool, input: input } }; }

    function showRequest(input) {
      var body = JSON.stringify(requestBody(input));
      bodyBox.textContent = JSON.stringify(requestBody(input), null, 2);
      var auth = form.dataset.auth === 'required' ? ' -H "X-API-Key: $OTC_API_KEY"' : '';
      curlBox.textContent = 'curl -s ' + location.origin + '/tools/call -H \'content-type: application/json\'' + auth + ' -d ' + shellQuote(body);
    }

    function sync() {
      var input = fromFields();
      json.value = JSON.stringify(input, null, 2);
      showRequest(input);
    }

    fields.forEach(function (field) {
      field.addEventListener('input', sync);
      field.addEventListener('change', sync);
    });
    json.addEventListener('input', function () {
      try { showRequest(JSON.parse(json.value)); } catch (e) { /* shown on send */ }
    });
    sync();

    function showErrors(errors) {
      fields.forEach(function (field) {
        var box = root.querySelector('#' + field.id + '-error');
        var message = errors[field.dataset.name];
        if (box) { box.textContent = message ? message : ''; }
        if (message) { field.setAttribute('aria-invalid', 'true'); } else { field.removeAttribute('aria-invalid'); }
      });
      errorsBox.textContent = '';
      var names = Object.keys(errors);
      if (!names.length) { return; }
      errorsBox.appendChild(el('p', 'Not sent: the input does not fit the tool\'s schema.'));
      var list = el('ul');
      names.forEach(function (name) { list.appendChild(el('li', name + ': ' + errors[name])); });
      errorsBox.appendChild(list);
    }

    var copy = root.querySelector('#try-copy');
    if (copy) {
      copy.addEventListener('click', function () {
        if (navigator.clipboard) { navigator.clipboard.writeText(curlBox.textContent); }
      });
    }

    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var input;
      var errors = {};
      Object.keys(fieldErrors).forEach(function (k) { errors[k] = fieldErrors[k]; });
      try { input = JSON.parse(json.value); } catch (e) { errors.input = 'is not valid JSON: ' + e.message; }
      if (input !== undefined) {
        var found = parameterErrors(input, schema);
        Object.keys(found).forEach(function (k) { errors[k] = errors[k] ? errors[k] + '; ' + found[k] : found[k]; });
      }
      showErrors(errors);
      if (Object.keys(errors).length) {
        var first = form.querySelector('[aria-invalid="true"]') || json;
        first.focus();
        return;
      }
      if (form.dataset.destructive === 'true' && !window.confirm(tool + ' may change or delete data. Call it?')) {
        answer.textContent = '';
        answer.appendChild(el('p', 'Not sent: the call was cancelled.', 'muted'));
        return;
      }
      showRequest(input);
      answer.textContent = '';
      answer.appendChild(el('p', 'Calling…', 'muted'));
      var headers = authHeaders();
      headers['Content-Type'] = 'application/json';
      fetch('/tools/call', { method: 'POST', headers: headers, body: JSON.stringify(requestBody(input)), credentials: 'omit' })
        .then(function (res) {
          return res.text().then(function (text) {
            var body = null;
            try { body = JSON.parse(text); } catch (e) { body = null; }
            showAnswer(res.status, body, text);
          });
        })
        .catch(function (e) { showAnswer(0, null, String(e)); });
    });

    function showAnswer(status, body, text) {
      answer.textContent = '';
      var box = el('div');
      var result = body && body.result;
      if (status === 200 && result && result.success === true) {
        box.className = 'answer-ok';
        box.appendChild(el('p', 'Value'));
        box.appendChild(el('pre', JSON.stringify(result.value, null, 2)));
      } else if (status === 200 && result && result.error) {
        var error = result.error;
        box.className = 'answer-bad';
        box.appendChild(el('p', 'Tool error (the call reached the tool): ' + error.message));
        var retry = error.can_retry ? 'Can retry' + (error.retry_after_ms ? ' after ' + error.retry_after_ms + ' ms' : '') + '.' : 'Do not retry as is.';
        box.appendChild(el('p', retry));
        if (error.additional_prompt_content) { box.appendChild(el('p', error.additional_prompt_content)); }
        if (error.developer_message) { box.appendChild(el('pre', error.developer_message)); }
      } else {
        box.className = 'answer-bad';
        var kinds = { 400: 'Refused (400): the request cannot be served', 401: 'Not authenticated (401)', 403: 'Refused (403)', 422: 'Invalid input (422)', 429: 'Limited (429)' };
        var word = kinds[status] || ('HTTP ' + status);
        box.appendChild(el('p', word + (body && body.message ? ': ' + body.message : '')));
        if (body && body.parameter_errors) {
          var list = el('ul');
          Object.keys(body.parameter_errors).forEach(function (k) { list.appendChild(el('li', k + ': ' + body.parameter_errors[k])); });
          box.appendChild(list);
        }
        if (body && body.developer_message) { box.appendChild(el('pre', body.developer_message)); }
        if (!body) { box.appendChild(el('pre', text)); }
      }
      answer.appendChild(box);
    }
  }

  function init(root) {
    initKeyForm(root);
    initTry(root);
  }

  document.addEventListener('DOMContentLoaded', function () {
    initSearch();
    var forget = document.getElementById('forget');
    if (forget) {
      forget.addEventListener('click', function () {
        sessionStorage.removeItem(KEY);
        location.reload();
      });
    }
    updateForget();
    var main = document.querySelector('main');
    if (main && main.querySelector('[data-needs-key]') && stored()) {
      load(location.href, false);
    } else if (main) {
      init(main);
    }
  });
}());
