// The pages' only script: draws boards from the server's JSON drawings, follows a live match
// over server-sent events and replays finished matches and uploaded logs, keeps the home
// page's running matches live, sorts tables and sends the admin forms. No dependencies.
"use strict";
(function () {
  var COLOURS = {red: "#d1242f", white: "#fff", black: "#222", blue: "#1f6feb", yellow: "#e3b341", green: "#2da44e", orange: "#f0883e"};

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function piece(content) {
    var span = el("span", "piece");
    var colour = COLOURS[content.toLowerCase()];
    if (colour) { span.className = "piece disc"; span.style.background = colour; span.title = content; }
    else span.textContent = content;
    return span;
  }

  function smallBoard(board, small, places, labels) {
    var table = el("table", "grid");
    table.dataset.functor = board.functor;
    if (labels) {
      var head = el("tr"); head.appendChild(el("th"));
      board.columnLabels.forEach(function (label) { head.appendChild(el("th", "", label)); });
      table.appendChild(head);
    }
    small.forEach(function (row, r) {
      var tr = el("tr");
      if (labels) tr.appendChild(el("th", "", board.rowLabels[r]));
      row.forEach(function (content, c) {
        var td = el("td");
        td.dataset.place = places[r][c].join(" ");
        td.dataset.content = content;
        if (content) td.appendChild(piece(content));
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
    return table;
  }

  function drawBoard(container, drawing) {
    container.textContent = "";
    if (!drawing) return;
    drawing.boards.forEach(function (board) {
      var outer = el("div", "outer");
      outer.style.gridTemplateColumns = "repeat(" + board.boards[0].length + ", auto)";
      var single = board.boards.length === 1 && board.boards[0].length === 1;
      board.boards.forEach(function (outerRow, i) {
        outerRow.forEach(function (small, j) {
          outer.appendChild(smallBoard(board, small, board.places[i][j], single));
        });
      });
      container.appendChild(outer);
    });
    if (drawing.facts.length) {
      var list = el("ul", "facts-list");
      drawing.facts.forEach(function (fact) { list.appendChild(el("li", "", fact)); });
      container.appendChild(list);
    }
  }
  window.ggpDrawBoard = drawBoard;

  function Viewer(root) {
    this.root = root;
    this.frames = [];
    this.index = 0;
    this.following = true;
    this.timer = null;
    this.info = null;
    this.end = null;
    var self = this;
    function $(id) { return root.querySelector("#" + id); }
    this.$ = $;
    $("first").onclick = function () { self.go(0); };
    $("prev").onclick = function () { self.go(self.index - 1); };
    $("next").onclick = function () { self.go(self.index + 1); };
    $("last").onclick = function () { self.go(self.frames.length - 1); self.following = true; };
    $("play").onclick = function () { self.toggle(); };
    $("slider").oninput = function () { self.go(Number(this.value)); };
  }
  Viewer.prototype.reset = function () { this.frames = []; this.index = 0; this.end = null; this.following = true; this.$("moves").textContent = ""; this.$("errors").textContent = ""; };
  Viewer.prototype.setInfo = function (info) {
    this.info = info;
    var table = this.$("roles"); table.textContent = "";
    var head = el("tr");
    ["Role", "Player", "Clock (ms)", "Goal"].forEach(function (t) { head.appendChild(el("th", "", t)); });
    table.appendChild(head);
    info.roles.forEach(function (role, i) {
      var tr = el("tr"); tr.dataset.role = role;
      tr.appendChild(el("td", "", role));
      tr.appendChild(el("td", "", info.players[i] || ""));
      tr.appendChild(el("td", "clock", "-"));
      tr.appendChild(el("td", "goal-cell"));
      table.appendChild(tr);
    });
    if (info.status) this.$("status").textContent = info.status;
  };
  Viewer.prototype.add = function (frame) {
    if (this.frames.length && frame.step <= this.frames[this.frames.length - 1].step) return;
    this.frames.push(frame);
    var roles = this.info ? this.info.roles : [];
    if (frame.moves) {
      var times = frame.times || [];
      var text = frame.moves.map(function (move, i) {
        return move + (times[i] !== null && times[i] !== undefined ? " (" + times[i] + " ms)" : "");
      }).join("  |  ");
      var li = el("li", "", text); li.dataset.step = frame.step;
      this.$("moves").appendChild(li);
    }
    var errors = this.$("errors");
    (frame.errors || []).forEach(function (code, i) {
      if (code) errors.appendChild(el("li", "", "step " + frame.step + ", " + (roles[i] || "role " + (i + 1)) + ": " + code));
    });
    this.$("slider").max = String(this.frames.length - 1);
    if (this.following) this.go(this.frames.length - 1, true);
  };
  Viewer.prototype.go = function (index, keepFollowing) {
    if (!this.frames.length) return;
    index = Math.max(0, Math.min(index, this.frames.length - 1));
    this.index = index;
    if (!keepFollowing) this.following = index === this.frames.length - 1 && !this.end;
    var frame = this.frames[index];
    var board = this.$("board");
    drawBoard(board, frame.board);
    board.dataset.step = String(frame.step);
    this.$("slider").value = String(index);
    this.$("step-label").textContent = "step " + frame.step + " of " + this.frames[this.frames.length - 1].step;
    var rows = this.$("roles").querySelectorAll("tr[data-role]");
    rows.forEach(function (tr, i) {
      var t = (frame.times || [])[i];
      tr.querySelector(".clock").textContent = t === null || t === undefined ? "-" : String(t);
    });
    this.$("moves").querySelectorAll("li").forEach(function (li) {
      li.classList.toggle("current", Number(li.dataset.step) === frame.step);
    });
    if (index >= this.frames.length - 1 && this.timer) this.toggle();
  };
  Viewer.prototype.toggle = function () {
    var self = this;
    if (this.timer) { clearInterval(this.timer); this.timer = null; this.$("play").innerHTML = "&#x25B6;"; return; }
    if (this.index >= this.frames.length - 1) this.go(0);
    this.$("play").innerHTML = "&#x7C;&#x7C;";
    this.timer = setInterval(function () { self.go(self.index + 1); }, Number(this.$("speed").value));
  };
  Viewer.prototype.finish = function (end) {
    this.end = end;
    var status = end.status + (end.reason ? " (" + end.reason + ")" : "");
    this.$("status").textContent = status;
    var goals = end.goals || [];
    this.$("roles").querySelectorAll("tr[data-role]").forEach(function (tr, i) {
      var cell = tr.querySelector(".goal-cell");
      cell.textContent = "";
      if (goals[i] !== undefined && goals[i] !== null) cell.appendChild(el("span", "goal", goals[i]));
    });
    this.root.dataset.ended = "1";
  };

  function follow(root) {
    var viewer = new Viewer(root);
    var source = new EventSource(root.dataset.events);
    source.addEventListener("info", function (e) { viewer.setInfo(JSON.parse(e.data)); });
    source.addEventListener("step", function (e) { viewer.add(JSON.parse(e.data)); });
    source.addEventListener("end", function (e) {
      source.close();
      viewer.finish(JSON.parse(e.data));
    });
    source.onerror = function () { viewer.$("status").textContent = "reconnecting..."; };
    source.onopen = function () { if (!viewer.end && viewer.info) viewer.$("status").textContent = "running"; };
  }

  function replay(root) {
    var viewer = new Viewer(root);
    var form = document.getElementById("replay-form");
    var error = document.getElementById("replay-error");
    function show(body) {
      error.textContent = "";
      fetch("/replay/frames", {method: "POST", headers: {"Content-Type": "application/json"}, body: body})
        .then(function (r) { return r.json().then(function (data) { return [r.ok, data]; }); })
        .then(function (pair) {
          if (!pair[0]) { error.textContent = pair[1].error ? pair[1].error.message : "the log could not be read"; return; }
          var data = pair[1];
          viewer.reset(); viewer.setInfo(data.info);
          data.frames.forEach(function (f) { viewer.add(f); });
          viewer.finish(data.end);
          viewer.go(0);
        })
        .catch(function () { error.textContent = "the log could not be read"; });
    }
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var file = document.getElementById("log-file").files[0];
      var url = document.getElementById("log-url").value;
      if (file) file.text().then(show);
      else if (url) show(JSON.stringify({url: url}));
      else error.textContent = "choose a log file or give its URL";
    });
  }

  // A person's turn: the legal moves as buttons, squares a move ends on clickable, a countdown.
  function moveArguments(move) {
    return move.replace(/[()]/g, " ").trim().split(/\s+/).slice(1).join(" ");
  }

  function playPanel(panel) {
    var text = document.getElementById("turn-text");
    var countdown = document.getElementById("countdown");
    var legal = document.getElementById("legal");
    var shown = null;
    var deadline = 0;
    function send(move) {
      fetch(panel.dataset.move, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({move: move})})
        .then(function (r) {
          shown = null; legal.textContent = ""; clearClickable();
          text.textContent = r.ok ? "Sent " + move : "Not sent: it is not your turn any more";
        });
    }
    function clearClickable() {
      document.querySelectorAll("#board td.clickable").forEach(function (td) { td.classList.remove("clickable"); td.onclick = null; });
    }
    function markClickable(moves) {
      clearClickable();
      var board = document.getElementById("board");
      if (!shown || Number(board.dataset.step) !== shown.step) return;  // the board is behind
      document.querySelectorAll("#board td[data-place]").forEach(function (td) {
        var place = td.dataset.place;
        var ending = moves.filter(function (m) { var a = moveArguments(m); return a === place || a.endsWith(" " + place); });
        if (ending.length === 1) { td.classList.add("clickable"); td.onclick = function () { send(ending[0]); }; }
      });
    }
    new MutationObserver(function () { if (shown) markClickable(shown.legal); })
      .observe(document.getElementById("board"), {attributes: true, attributeFilter: ["data-step"]});
    function poll() {
      if (document.querySelector(".viewer[data-ended]")) { text.textContent = "The match is over."; countdown.textContent = ""; legal.textContent = ""; clearClickable(); return; }
      fetch(panel.dataset.turn).then(function (r) { return r.json(); }).then(function (data) {
        var turn = data.turn;
        if (!turn) { if (!shown) text.textContent = "Waiting for the other players..."; shown = null; legal.textContent = ""; clearClickable(); return; }
        deadline = Date.now() + turn.seconds_left * 1000;
        if (shown && shown.step === turn.step) return;
        shown = turn;
        countdown.textContent = Math.ceil(turn.seconds_left) + " s left";
        text.textContent = "Your move (" + data.role + "):";
        legal.textContent = "";
        turn.legal.forEach(function (move) {
          var button = el("button", "move", move); button.type = "button";
          button.onclick = function () { send(move); };
          legal.appendChild(button);
        });
        markClickable(turn.legal);
      }).catch(function () {}).then(function () { setTimeout(poll, 300); });
    }
    setInterval(function () {
      countdown.textContent = shown ? Math.max(0, Math.ceil((deadline - Date.now()) / 1000)) + " s left" : "";
    }, 200);
    poll();
  }

  function playForm(form) {
    var game = document.getElementById("play-game");
    var role = document.getElementById("play-role");
    game.onchange = function () {
      role.textContent = "";
      game.selectedOptions[0].dataset.roles.split(" ").forEach(function (r) { role.appendChild(el("option", "", r)); });
    };
  }


  // Tables with class "sortable": a click on a header sorts by that column, a second
  // click reverses. Cells sort by their data-value when they have one, else their text.
  function sortable(table) {
    var headers = table.querySelectorAll("thead th");
    headers.forEach(function (th, column) {
      if (!th.dataset.sort) return;
      th.tabIndex = 0;
      th.classList.add("sort-key");
      function sort() {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        headers.forEach(function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var numeric = th.dataset.sort === "number";
        function key(row) {
          var cell = row.cells[column];
          var text = cell ? (cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim()) : "";
          if (!numeric) return text.toLowerCase();
          var value = parseFloat(text);
          return isNaN(value) ? -Infinity : value;
        }
        rows.sort(function (a, b) {
          var x = key(a), y = key(b);
          var order = x < y ? -1 : x > y ? 1 : 0;
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
    });
  }

  // The home page: running matches come and go as they start and end, over server-sent events.
  function liveHome(list) {
    var none = document.getElementById("none-running");
    var recent = document.querySelector("#recent tbody");
    function card(match) {
      var li = el("li"); li.dataset.match = match.id; li.dataset.game = match.game;
      li.dataset.players = match.players.join(", ");
      var a = el("a", "", match.game); a.href = "/matches/" + encodeURIComponent(match.id);
      li.appendChild(a);
      li.appendChild(document.createTextNode(": " + match.players.join(" vs ")));
      return li;
    }
    function shown() { none.hidden = list.children.length > 0; }
    var source = new EventSource(list.dataset.live);
    source.addEventListener("running", function (e) {
      list.textContent = "";
      JSON.parse(e.data).matches.forEach(function (m) { list.appendChild(card(m)); });
      list.dataset.connected = "1";
      shown();
    });
    source.addEventListener("started", function (e) {
      var match = JSON.parse(e.data);
      if (!list.querySelector('li[data-match="' + CSS.escape(match.id) + '"]')) list.appendChild(card(match));
      shown();
    });
    source.addEventListener("ended", function (e) {
      var end = JSON.parse(e.data);
      var li = list.querySelector('li[data-match="' + CSS.escape(end.id) + '"]');
      if (li) list.removeChild(li);
      shown();
      if (!recent || !end.goals) return;
      var empty = recent.querySelector("tr.empty");
      if (empty) recent.removeChild(empty);
      var tr = el("tr"); tr.dataset.match = end.id; tr.className = "just-ended";
      var link = el("td"); var a = el("a", "", end.id); a.href = "/matches/" + encodeURIComponent(end.id); link.appendChild(a);
      tr.appendChild(link);
      tr.appendChild(el("td", "", li ? li.dataset.game : ""));
      tr.appendChild(el("td", "", li ? li.dataset.players : ""));
      tr.appendChild(el("td", "", end.goals.join(", ")));
      tr.appendChild(el("td", "", "just now"));
      recent.insertBefore(tr, recent.firstChild);
    });
  }

  function sendWithToken(method, path, body) {
    var token = document.getElementById("admin-token").value;
    var headers = {"Content-Type": "application/json"};
    if (token) headers.Authorization = "Bearer " + token;
    return fetch(path, {method: method, headers: headers, body: JSON.stringify(body)})
      .then(function (r) { return r.text().then(function (t) { var data = null; try { data = JSON.parse(t); } catch (err) { /* empty */ } return [r.status, data]; }); });
  }

  function showResult(status, data) {
    var result = document.getElementById("admin-result");
    result.textContent = data && data.error ? "refused (" + status + "): " + data.error.message : "done (" + status + ")";
    result.dataset.status = String(status);
  }

  // The tournament form: checked in the page first, then by the API; each problem is shown
  // beside its field.
  function tournamentForm(form) {
    function field(name) { return form.querySelector('[data-error-for="' + name + '"]'); }
    function clear() { form.querySelectorAll(".field-error").forEach(function (span) { span.textContent = ""; }); form.querySelectorAll("[aria-invalid]").forEach(function (input) { input.removeAttribute("aria-invalid"); }); }
    function problem(name, message) {
      var span = field(name.split(".")[0]) || field("name");
      if (span.textContent) span.textContent += "; ";
      span.textContent += message;
      var input = form.elements[name.split(".")[0]];
      if (input && input.setAttribute) input.setAttribute("aria-invalid", "true");
      return true;
    }
    var boxes = form.querySelectorAll('input[name="players"]'), ticked = 0;
    boxes.forEach(function (box) {  // the seeds are in the order the players are ticked
      box.addEventListener("change", function () { box.dataset.order = box.checked ? String(++ticked) : ""; });
    });
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      clear();
      var spec = {}, bad = false;
      ["name", "game", "format", "failure_rule"].forEach(function (name) { spec[name] = form.elements[name].value.trim(); });
      spec.players = Array.prototype.filter.call(boxes, function (box) { return box.checked; })
        .sort(function (a, b) { return Number(a.dataset.order) - Number(b.dataset.order); })
        .map(function (box) { return box.value; });
      spec.start = form.elements.start.checked;
      form.querySelectorAll('input[data-type="int"]').forEach(function (input) {
        var text = input.value.trim();
        if (!text && input.dataset.optional) return;
        if (!/^[0-9]+$/.test(text) || Number(text) < 1) { bad = problem(input.name, "a whole number, 1 or more"); return; }
        spec[input.name] = Number(text);
      });
      if (!spec.name) bad = problem("name", "give the tournament a name");
      if (spec.players.length < 2) bad = problem("players", "choose at least two players");
      if (spec.format === "swiss" && spec.rounds === undefined) bad = problem("rounds", "a Swiss tournament needs a number of rounds");
      if (spec.format !== "swiss" && spec.rounds !== undefined) bad = problem("rounds", "only a Swiss tournament has rounds");
      if (spec.format !== "single_elimination" && spec.best_of !== undefined) bad = problem("best_of", "only single elimination plays series");
      if (bad) { form.dataset.checked = "refused"; return; }
      sendWithToken("POST", "/api/tournaments", spec).then(function (pair) {
        showResult(pair[0], pair[1]);
        var error = pair[1] && pair[1].error;
        if (error) {
          if (error.details) error.details.forEach(function (d) { problem(String(d.field), String(d.message)); });
          else if (error.field) problem(error.field, error.message);
          form.dataset.checked = "refused";
          return;
        }
        form.dataset.checked = "created";
        form.dataset.created = pair[1].id;
        var link = el("a", "", "open " + pair[1].name); link.href = "/tournaments/" + encodeURIComponent(pair[1].id);
        document.getElementById("admin-result").appendChild(document.createTextNode(" "));
        document.getElementById("admin-result").appendChild(link);
      });
    });
  }

  var ALLOWED = {start: ["created"], pause: ["running"], resume: ["paused"], cancel: ["created", "running", "paused"]};

  function tournamentControls(row) {
    var status = row.querySelector(".t-status");
    function refresh() {
      row.querySelectorAll("button.t-action").forEach(function (button) {
        button.disabled = ALLOWED[button.dataset.action].indexOf(status.textContent.trim()) < 0;
      });
    }
    row.querySelectorAll("button.t-action").forEach(function (button) {
      button.addEventListener("click", function () {
        sendWithToken("POST", "/api/tournaments/" + encodeURIComponent(button.dataset.id) + "/" + button.dataset.action, {})
          .then(function (pair) {
            showResult(pair[0], pair[1]);
            if (pair[1] && pair[1].status) { status.textContent = pair[1].status; refresh(); }
          });
      });
    });
    refresh();
  }

  // Admin forms: each sends its fields to the API with the token; the API refuses without it.
  function adminForm(form) {
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var result = document.getElementById("admin-result");
      var path = form.dataset.path;
      var body = {};
      Array.prototype.forEach.call(form.elements, function (field) {
        if (!field.name) return;
        var key = "{" + field.name + "}";
        if (path.indexOf(key) >= 0) { path = path.replace(key, encodeURIComponent(field.value)); return; }
        body[field.name] = field.dataset.type === "bool" ? field.value === "true" : field.value;
      });
      var token = document.getElementById("admin-token").value;
      var headers = {"Content-Type": "application/json"};
      if (token) headers.Authorization = "Bearer " + token;
      fetch(path, {method: form.dataset.method, headers: headers, body: JSON.stringify(body)})
        .then(function (r) { return r.text().then(function (t) { return [r.status, t]; }); })
        .then(function (pair) {
          var message = "done (" + pair[0] + ")";
          try { var data = JSON.parse(pair[1]); if (data && data.error) message = "refused (" + pair[0] + "): " + data.error.message; } catch (err) { /* an empty answer */ }
          result.textContent = message;
          result.dataset.status = String(pair[0]);
        });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("#turn-panel").forEach(playPanel);
    document.querySelectorAll("#play-form").forEach(playForm);
    document.querySelectorAll("form.admin[data-path]").forEach(adminForm);
    document.querySelectorAll("#tournament-form").forEach(tournamentForm);
    document.querySelectorAll("#tournament-controls tr[data-tournament]").forEach(tournamentControls);
    document.querySelectorAll("table.sortable").forEach(sortable);
    document.querySelectorAll("#running[data-live]").forEach(liveHome);
    document.querySelectorAll("[data-drawing]").forEach(function (node) {
      drawBoard(node, JSON.parse(node.dataset.drawing));
    });
    document.querySelectorAll(".viewer[data-events]").forEach(follow);
    document.querySelectorAll(".viewer[data-replay]").forEach(replay);
  });
})();
