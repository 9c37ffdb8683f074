(function () {
  "use strict";
  // Filter and sort for every [data-filterable] block: rows are the [data-row] children of its [data-rows].
  function lower(s) { return (s || "").toLowerCase(); }

  function applyFilter(scope) {
    var box = scope.querySelector("input[data-filter-text]");
    var query = box ? lower(box.value.trim()) : "";
    var selects = Array.prototype.slice.call(scope.querySelectorAll("select[data-filter-key]"));
    var rows = scope.querySelectorAll("[data-row]");
    var shown = 0;
    Array.prototype.forEach.call(rows, function (row) {
      var ok = !query || lower(row.textContent).indexOf(query) !== -1;
      selects.forEach(function (sel) {
        var want = sel.value;
        var have = (row.getAttribute("data-" + sel.getAttribute("data-filter-key")) || "").split(" ");
        if (want && have.indexOf(want) === -1) { ok = false; }
      });
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    var count = scope.querySelector("[data-shown]");
    if (count) { count.textContent = shown + " of " + rows.length + " shown"; }
  }

  function compare(x, y) {
    var a = Number(x), b = Number(y);
    if (x !== "" && y !== "" && !isNaN(a) && !isNaN(b)) { return a - b; }
    return x.localeCompare(y);
  }

  function sortRows(scope, button) {
    var key = "data-sort-" + button.getAttribute("data-sort");
    var container = scope.querySelector("[data-rows]");
    var rows = Array.prototype.filter.call(container.children, function (el) { return el.hasAttribute("data-row"); });
    var descending = button.getAttribute("aria-sort") === "ascending";
    Array.prototype.forEach.call(scope.querySelectorAll("button[data-sort]"), function (b) {
      b.removeAttribute("aria-sort");
    });
    button.setAttribute("aria-sort", descending ? "descending" : "ascending");
    rows.sort(function (r1, r2) {
      var c = compare(r1.getAttribute(key) || "", r2.getAttribute(key) || "");
      return descending ? -c : c;
    });
    rows.forEach(function (row) { container.appendChild(row); });
  }

  Array.prototype.forEach.call(document.querySelectorAll("[data-filterable]"), function (scope) {
    scope.addEventListener("input", function () { applyFilter(scope); });
    scope.addEventListener("change", function () { applyFilter(scope); });
    Array.prototype.forEach.call(scope.querySelectorAll("button[data-sort]"), function (button) {
      button.addEventListener("click", function () { sortRows(scope, button); });
    });
    applyFilter(scope);
  });
}());
