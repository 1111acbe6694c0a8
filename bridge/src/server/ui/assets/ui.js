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

  // ---- Validation: the bridge's, with its words. ----
  //
  // The bridge validates with the `jsonschema` crate (bridge/src/catalog/validate.rs): draft
  // 2020-12 unless `$schema` names an older draft, formats not asserted. This mirrors it: the
  // keywords in the order the crate runs them (PRIORITY), each error with the crate's message and
  // the instance path it reports, then keyed by top-level parameter as the bridge's
  // `parameter_errors`; tests/browser/catalog_page.py compares the two on the same inputs. A
  // keyword not checked here (`if`, `contains`, `dependentRequired`, …) is left to the server,
  // whose 422 the answer shows: the page may let through an input the server refuses, and refuses
  // none the server accepts (as far as a `pattern` means the same to JavaScript's RegExp).

  // The bridge reports at most this many errors (validate.rs's MAX_ERRORS).
  var MAX_ERRORS = 20;
  // Nested `$ref`s deeper than this are left to the server (a schema may refer to itself).
  var MAX_DEPTH = 64;

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

  function has(object, name) { return Object.prototype.hasOwnProperty.call(object, name); }

  // JSON equality as the crate applies it (`enum`, `const`, `uniqueItems`): numbers by value,
  // objects whatever the order of their keys.
  function equal(a, b) {
    var kind = typeOf(a);
    if (typeof a === 'number' || typeof b === 'number') { return a === b; }
    if (kind !== typeOf(b)) { return false; }
    if (kind === 'array') {
      return a.length === b.length && a.every(function (item, i) { return equal(item, b[i]); });
    }
    if (kind === 'object') {
      var keys = Object.keys(a);
      return keys.length === Object.keys(b).length &&
        keys.every(function (k) { return has(b, k) && equal(a[k], b[k]); });
    }
    return a === b;
  }

  // A value as the crate prints it (serde_json's compact form).
  function show(value) { return JSON.stringify(value); }

  // A number as Rust prints an f64 (`multipleOf`'s divisor): never in exponent form.
  function plain(n) {
    var m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(String(n));
    if (!m) { return String(n); }
    var digits = m[2] + (m[3] || '');
    var point = m[2].length + Number(m[4]);
    if (point <= 0) { return m[1] + '0.' + '0'.repeat(-point) + digits; }
    if (point >= digits.length) { return m[1] + digits + '0'.repeat(point - digits.length); }
    return m[1] + digits.slice(0, point) + '.' + digits.slice(point);
  }

  // A number as the decimal it prints as, [mantissa, decimals]: 0.1 is 1/10, as the crate reads
  // it, not the binary fraction a float holds.
  function decimal(n) {
    var m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(String(n));
    var fraction = m[3] || '';
    return [BigInt(m[1] + m[2] + fraction), fraction.length - Number(m[4] || 0)];
  }

  // Whether `value / of` is an integer, in decimal, as the crate decides `multipleOf`.
  function isMultiple(value, of) {
    if (value === 0) { return true; }
    if (Math.abs(value) < of) { return false; }
    var v = decimal(value);
    var d = decimal(of);
    var shared = Math.min(v[1], d[1]);
    var divisor = d[0] * BigInt(10) ** BigInt(v[1] - shared);
    return divisor !== BigInt(0) && (v[0] * BigInt(10) ** BigInt(d[1] - shared)) % divisor === BigInt(0);
  }

  // `enum`'s options as the crate lists them: "a, b or c", or the first two and how many more.
  function options(list) {
    if (list.length > 3) {
      return list.slice(0, 2).map(show).join(', ') + ' or ' + (list.length - 2) + ' other candidates';
    }
    return list.map(function (option, i) {
      return (i === 0 ? '' : i === list.length - 1 ? ' or ' : ', ') + show(option);
    }).join('');
  }

  // The order the crate runs a schema's keywords in, whatever the schema's own order (cheap checks
  // first: its `keyword_priority`), so several errors on one parameter read as the server's do.
  var PRIORITY = {
    type: 1, const: 5, enum: 6, minimum: 10, maximum: 11, exclusiveMinimum: 12,
    exclusiveMaximum: 13, multipleOf: 14, minLength: 20, maxLength: 21, minItems: 22,
    maxItems: 23, minProperties: 24, maxProperties: 25, required: 26, pattern: 30,
    uniqueItems: 35, properties: 40, patternProperties: 41, additionalProperties: 42, items: 44,
    prefixItems: 45, allOf: 50, anyOf: 51, oneOf: 52, not: 53, $ref: 70
  };

  // The crate lists several types in this order, whatever the schema's.
  var TYPE_ORDER = ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object'];

  function plural(n, one, many) { return n + ' ' + (n === 1 ? one : many); }

  // A JSON pointer segment (`~` and `/` escaped), as instance paths are written.
  function segment(name) { return String(name).replace(/~/g, '~0').replace(/\//g, '~1'); }

  // What `$ref` names inside the tool's own schema (`#`, `#/$defs/…`, `#/definitions/…`, any
  // pointer); `undefined` for anything else (an anchor, another document): the server decides.
  function resolve(ref, root) {
    if (typeof ref !== 'string' || ref.charAt(0) !== '#') { return undefined; }
    if (ref === '#') { return root; }
    if (ref.charAt(1) !== '/') { return undefined; }
    var at = root;
    var parts = ref.slice(2).split('/');
    for (var i = 0; i < parts.length; i++) {
      var name;
      try { name = decodeURIComponent(parts[i]); } catch (e) { return undefined; }
      name = name.replace(/~1/g, '/').replace(/~0/g, '~');
      if (at === null || typeof at !== 'object' || !has(at, name)) { return undefined; }
      at = at[name];
    }
    return at;
  }

  // Drafts 4 to 7 ignore every keyword beside a `$ref`; 2019-09 and 2020-12 apply them all.
  function legacyDraft(root) {
    return typeof root.$schema === 'string' && /draft-0[4-7]/.test(root.$schema);
  }

  // Checks `value` against `schema`; each error is pushed as {path, kind, message, names}, `path`
  // the instance pointer's segments.
  function validate(value, schema, path, errors, root, depth) {
    if (schema === false) { errors.push({ path: path, message: 'False schema does not allow ' + show(value) }); return; }
    if (!schema || typeof schema !== 'object' || depth > MAX_DEPTH) { return; }
    var shown = show(value);
    var kind = typeOf(value);
    var at = function (more) { return path.concat([segment(more)]); };
    var fail = function (message) { errors.push({ path: path, message: message }); };
    var passes = function (sub) {
      var found = [];
      validate(value, sub, path, found, root, depth + 1);
      return found.length === 0;
    };
    var keys = Object.keys(schema).filter(function (k) { return has(PRIORITY, k); });
    keys.sort(function (a, b) { return PRIORITY[a] - PRIORITY[b]; });
    if (has(schema, '$ref') && legacyDraft(root)) { keys = ['$ref']; }
    // `properties` is checked with `additionalProperties` when that is `false` or a schema: a
    // name is additional when no property or pattern claims it.
    var closed = schema.additionalProperties === false ||
      (schema.additionalProperties !== null && typeof schema.additionalProperties === 'object');
    // The crate checks a lone `required` name of an object closed this way in the same walk,
    // after the additional names.
    var requiredLast = schema.additionalProperties === false && Array.isArray(schema.required) &&
      schema.required.length === 1 && has(schema, 'properties') && !has(schema, 'patternProperties');
    var checkRequired = function () {
      if (kind !== 'object' || !Array.isArray(schema.required)) { return; }
      schema.required.forEach(function (name) {
        if (!has(value, name)) { errors.push({ path: path, kind: 'required', names: [name], message: show(name) + ' is a required property' }); }
      });
    };
    keys.forEach(function (keyword) {
      var arg = schema[keyword];
      switch (keyword) {
        case '$ref': {
          var target = resolve(arg, root);
          if (target !== undefined) { validate(value, target, path, errors, root, depth + 1); }
          break;
        }
        case 'type': {
          var types = [].concat(arg);
          if (!types.some(function (t) { return fits(value, t); })) {
            if (types.length === 1) {
              fail(shown + ' is not of type "' + types[0] + '"');
            } else {
              var sorted = TYPE_ORDER.filter(function (t) { return types.indexOf(t) >= 0; });
              fail(shown + ' is not of types ' + sorted.map(function (t) { return '"' + t + '"'; }).join(', '));
            }
          }
          break;
        }
        case 'enum':
          if (Array.isArray(arg) && !arg.some(function (e) { return equal(e, value); })) {
            fail(shown + ' is not one of ' + options(arg));
          }
          break;
        case 'const':
          if (!equal(arg, value)) { fail(show(arg) + ' was expected'); }
          break;
        case 'minimum':
          if (typeof value === 'number' && typeof arg === 'number' && value < arg) { fail(shown + ' is less than the minimum of ' + arg); }
          break;
        case 'maximum':
          if (typeof value === 'number' && typeof arg === 'number' && value > arg) { fail(shown + ' is greater than the maximum of ' + arg); }
          break;
        case 'exclusiveMinimum':
          if (typeof value === 'number' && typeof arg === 'number' && value <= arg) { fail(shown + ' is less than or equal to the minimum of ' + arg); }
          break;
        case 'exclusiveMaximum':
          if (typeof value === 'number' && typeof arg === 'number' && value >= arg) { fail(shown + ' is greater than or equal to the maximum of ' + arg); }
          break;
        case 'multipleOf':
          if (typeof value === 'number' && typeof arg === 'number' && arg > 0 && !isMultiple(value, arg)) {
            fail(shown + ' is not a multiple of ' + plain(arg));
          }
          break;
        case 'minLength':
          if (typeof value === 'string' && Array.from(value).length < arg) { fail(shown + ' is shorter than ' + plural(arg, 'character', 'characters')); }
          break;
        case 'maxLength':
          if (typeof value === 'string' && Array.from(value).length > arg) { fail(shown + ' is longer than ' + plural(arg, 'character', 'characters')); }
          break;
        case 'pattern':
          if (typeof value === 'string' && typeof arg === 'string') {
            try { if (!new RegExp(arg, 'u').test(value)) { fail(shown + ' does not match "' + arg + '"'); } } catch (e) { /* the server decides */ }
          }
          break;
        case 'minItems':
          if (kind === 'array' && value.length < arg) { fail(shown + ' has less than ' + plural(arg, 'item', 'items')); }
          break;
        case 'maxItems':
          if (kind === 'array' && value.length > arg) { fail(shown + ' has more than ' + plural(arg, 'item', 'items')); }
          break;
        case 'uniqueItems':
          if (kind === 'array' && arg === true && value.some(function (item, i) {
            return value.slice(i + 1).some(function (other) { return equal(item, other); });
          })) {
            fail(shown + ' has non-unique elements');
          }
          break;
        case 'prefixItems':
          if (kind === 'array' && Array.isArray(arg)) {
            arg.forEach(function (sub, i) { if (i < value.length) { validate(value[i], sub, at(i), errors, root, depth); } });
          }
          break;
        case 'items':
          if (kind === 'array') {
            if (Array.isArray(arg)) {
              arg.forEach(function (sub, i) { if (i < value.length) { validate(value[i], sub, at(i), errors, root, depth); } });
            } else {
              var first = Array.isArray(schema.prefixItems) ? schema.prefixItems.length : 0;
              value.slice(first).forEach(function (item, i) { validate(item, arg, at(first + i), errors, root, depth); });
            }
          }
          break;
        case 'minProperties':
          if (kind === 'object' && Object.keys(value).length < arg) { fail(shown + ' has less than ' + plural(arg, 'property', 'properties')); }
          break;
        case 'maxProperties':
          if (kind === 'object' && Object.keys(value).length > arg) { fail(shown + ' has more than ' + plural(arg, 'property', 'properties')); }
          break;
        case 'required':
          if (!requiredLast) { checkRequired(); }
          break;
        case 'properties':
          if (kind === 'object' && !closed && arg && typeof arg === 'object') {
            Object.keys(value).forEach(function (name) {
              if (has(arg, name)) { validate(value[name], arg[name], at(name), errors, root, depth); }
            });
          }
          break;
        case 'patternProperties':
          if (kind === 'object' && !closed && arg && typeof arg === 'object') {
            Object.keys(value).forEach(function (name) {
              matching(arg, name).forEach(function (sub) { validate(value[name], sub, at(name), errors, root, depth); });
            });
          }
          break;
        case 'additionalProperties':
          if (kind === 'object' && closed) {
            var props = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
            var patterns = schema.patternProperties && typeof schema.patternProperties === 'object' ? schema.patternProperties : {};
            var unexpected = [];
            Object.keys(value).forEach(function (name) {
              var claimed = matching(patterns, name);
              if (has(props, name)) { validate(value[name], props[name], at(name), errors, root, depth); }
              claimed.forEach(function (sub) { validate(value[name], sub, at(name), errors, root, depth); });
              if (has(props, name) || claimed.length) { return; }
              if (arg === false) { unexpected.push(name); } else { validate(value[name], arg, at(name), errors, root, depth); }
            });
            if (unexpected.length) {
              errors.push({
                path: path, kind: 'additional', names: unexpected,
                message: 'Additional properties are not allowed (' +
                  unexpected.map(function (n) { return "'" + n + "'"; }).join(', ') +
                  (unexpected.length === 1 ? ' was unexpected)' : ' were unexpected)')
              });
            }
          }
          if (requiredLast) { checkRequired(); }
          break;
        case 'allOf':
          if (Array.isArray(arg)) { arg.forEach(function (sub) { validate(value, sub, path, errors, root, depth + 1); }); }
          break;
        case 'anyOf':
          if (Array.isArray(arg) && !arg.some(passes)) {
            fail(shown + " is not valid under any of the schemas listed in the 'anyOf' keyword");
          }
          break;
        case 'oneOf':
          if (Array.isArray(arg)) {
            var valid = arg.filter(passes).length;
            if (valid === 0) { fail(shown + " is not valid under any of the schemas listed in the 'oneOf' keyword"); }
            if (valid > 1) { fail(shown + " is valid under more than one of the schemas listed in the 'oneOf' keyword"); }
          }
          break;
        case 'not':
          if (passes(arg)) { fail(show(arg) + ' is not allowed for ' + shown); }
          break;
        default:
          break;
      }
    });
  }

  // The schemas of the `patternProperties` whose patterns match `name`.
  function matching(patterns, name) {
    return Object.keys(patterns).filter(function (pattern) {
      try { return new RegExp(pattern, 'u').test(name); } catch (e) { return false; }
    }).map(function (pattern) { return patterns[pattern]; });
  }

  // The errors keyed by top-level parameter, as the bridge's `parameter_errors` (validate.rs's
  // `check`): a missing or unknown parameter under its own name; a nested error under its
  // parameter, saying where (`at /c: …`); an error about the whole input under `input`.
  function parameterErrors(input, schema) {
    if (typeOf(input) !== 'object') { return { input: 'the input must be a JSON object' }; }
    var found = [];
    validate(input, schema, [], found, schema && typeof schema === 'object' ? schema : {}, 0);
    // No prototype: a parameter may be called anything, `__proto__` included.
    var errors = Object.create(null);
    var add = function (key, message) { errors[key] = has(errors, key) ? errors[key] + '; ' + message : message; };
    for (var n = 0; n < found.length; n++) {
      var error = found[n];
      if (n === MAX_ERRORS) { add('input', 'more errors were not reported'); break; }
      if (error.path.length === 0) {
        if (error.kind === 'required') {
          add(error.names[0], 'is required');
        } else if (error.kind === 'additional') {
          error.names.forEach(function (name) { add(name, 'is not a parameter of this tool'); });
        } else {
          add('input', error.message);
        }
      } else {
        var param = error.path[0].replace(/~1/g, '/').replace(/~0/g, '~');
        var rest = error.path.slice(1);
        add(param, rest.length ? 'at /' + rest.join('/') + ': ' + error.message : error.message);
      }
    }
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
      var errors = Object.create(null);
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
