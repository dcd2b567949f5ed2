// evalq UI: live updates by polling with ETag, and sortable tables. No framework, no eval.
"use strict";

(function () {
  var main = document.querySelector("main[data-live]");
  var status = document.getElementById("live-status");

  function say(text) { if (status) { status.textContent = text; } }

  // Rows (a run on a board, a task on the tasks list) as the page first showed them: a row
  // that arrives later is marked new, one whose score (its data-score) or cells read
  // differently is marked updated, and a run whose score is the same but whose rank or
  // percentile moved (because another run arrived) is marked moved, apart and quieter.
  var ROWS = "tr[data-run], tr[data-task]";
  function keyOf(row) { return row.getAttribute("data-run") || "task:" + row.getAttribute("data-task"); }
  var seen = {};
  Array.prototype.forEach.call(document.querySelectorAll(ROWS), function (row) {
    seen[keyOf(row)] = { text: row.textContent, score: row.getAttribute("data-score") };
  });

  function change(row, before) {
    if (before === undefined) { return "new"; }
    var score = row.getAttribute("data-score");
    if (score !== null && before.score !== null) {
      if (score !== before.score) { return "updated"; }
      return before.text !== row.textContent ? "moved" : null;
    }
    return before.text !== row.textContent ? "updated" : null;
  }

  function markChanged() {
    var counts = { changed: 0, moved: 0 };
    Array.prototype.forEach.call(document.querySelectorAll(ROWS), function (row) {
      var kind = change(row, seen[keyOf(row)]);
      if (kind === null) { return; }
      row.setAttribute("data-changed", kind);
      row.classList.add(kind === "moved" ? "moved" : "changed");
      counts[kind === "moved" ? "moved" : "changed"]++;
    });
    return counts;
  }

  function swap(fresh) {
    var parts = document.querySelectorAll("[data-live-part]");
    for (var i = 0; i < parts.length; i++) {
      var part = parts[i];
      var next = fresh.getElementById(part.id);
      if (!next) { continue; }
      if (part.contains(document.activeElement) && document.activeElement !== document.body) {
        continue; // never pull the focus out from under the keyboard
      }
      part.replaceChildren.apply(part, Array.prototype.slice.call(next.childNodes).map(function (n) {
        return document.importNode(n, true);
      }));
      sortable(part);
    }
    document.body.setAttribute("data-live-version", String(Number(document.body.getAttribute("data-live-version") || "0") + 1));
  }

  function poll(etag, every) {
    if (document.hidden) { setTimeout(function () { poll(etag, every); }, every); return; }
    var headers = { "X-Evalq-Live": "1" };
    if (etag) { headers["If-None-Match"] = etag; }
    fetch(location.href, { headers: headers, cache: "no-store", credentials: "same-origin" })
      .then(function (response) {
        if (response.status === 401) { say("signed out: reload to sign in again"); return null; }
        if (response.status === 304) { return etag; }
        var tag = response.headers.get("ETag");
        return response.text().then(function (html) {
          swap(new DOMParser().parseFromString(html, "text/html"));
          var counts = markChanged();
          say("updated " + new Date().toLocaleTimeString() +
            (counts.changed ? "; " + counts.changed + " row(s) new or changed since the page loaded, highlighted" : "") +
            (counts.moved ? "; " + counts.moved + " run(s) only moved rank, marked ↕" : ""));
          return tag;
        });
      })
      .catch(function () { say("server not reachable; retrying"); return etag; })
      .then(function (tag) { if (tag !== null) { setTimeout(function () { poll(tag, every); }, every); } });
  }

  function value(cell) {
    var raw = cell.getAttribute("data-value");
    var text = raw === null ? cell.textContent.trim() : raw;
    var number = parseFloat(text);
    return { text: text, number: isNaN(number) || !/^-?[\d.]+(e-?\d+)?$/i.test(text) ? null : number };
  }

  function sortBy(table, index, th) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).filter(function (r) { return r.cells.length > index; });
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    rows.sort(function (a, b) {
      var x = value(a.cells[index]), y = value(b.cells[index]);
      if (x.number === null && y.number === null) { return x.text.localeCompare(y.text) * (ascending ? 1 : -1); }
      if (x.number === null) { return 1; }
      if (y.number === null) { return -1; }
      return (x.number - y.number) * (ascending ? 1 : -1);
    });
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function sortable(root) {
    var tables = root.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (table) {
      if (!table.tHead) { return; }
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
        th.tabIndex = 0;
        th.title = "Sort by this column (Enter)";
        th.addEventListener("click", function () { sortBy(table, index, th); });
        th.addEventListener("keydown", function (event) {
          if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(table, index, th); }
        });
      });
    });
  }

  // The labelling queue's keys: they only fill and send the plain form (which works without
  // script). 1-5 score the current rubric and move to the next, 0 clears it; p / f pass / fail;
  // n the note; Enter saves; s skips the run. Keys typed into the note or a list are left alone.
  function labelKeys() {
    var form = document.querySelector("#queue-run form[data-label-keys]");
    if (!form) { return; }
    var sets = form.querySelectorAll("fieldset.score");
    var current = 0;
    function mark() {
      for (var i = 0; i < sets.length; i++) { sets[i].classList.toggle("current", i === current); }
    }
    mark();
    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) { return; }
      var target = event.target;
      var tag = target && target.tagName;
      if (tag === "TEXTAREA" || tag === "SELECT" || tag === "BUTTON" || tag === "A") { return; }
      if (tag === "INPUT" && target.type !== "radio") { return; }
      var key = event.key;
      if (/^[0-5]$/.test(key) && sets.length) {
        var radios = sets[current].querySelectorAll('input[type="radio"]');
        radios[Number(key)].checked = true; // radio 0 is "none"
        current = Math.min(current + 1, sets.length - 1);
        mark();
      } else if (key === "p" || key === "f") {
        var decision = form.querySelector('input[name="passed"][value="' + (key === "p" ? "pass" : "fail") + '"]');
        if (decision) { decision.checked = true; }
      } else if (key === "n") {
        form.querySelector("textarea").focus();
      } else if (key === "s") {
        var skip = document.getElementById("skip");
        if (skip) { location.href = skip.href; }
      } else if (key === "Enter") {
        form.requestSubmit();
      } else {
        return;
      }
      event.preventDefault();
    });
  }

  sortable(document);
  labelKeys();
  if (main) {
    var every = Number(main.getAttribute("data-live")) || 5000;
    var served = document.querySelector('meta[name="evalq-etag"]');
    setTimeout(function () { poll(served ? served.getAttribute("content") : null, every); }, every);
  }
})();
