// The search box narrows the list as one types: the server ranks with the
// same scorer as `skillsync search` and sends the rows back.
document.addEventListener("DOMContentLoaded", function () {
  var form = document.getElementById("search");
  var rows = document.getElementById("rows");
  if (!form || !rows) return;
  var pending = null;
  function refresh() {
    var params = new URLSearchParams(new FormData(form));
    params.set("rows", "1");
    if (pending) pending.abort();
    pending = new AbortController();
    fetch("/?" + params.toString(), { signal: pending.signal, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        rows.innerHTML = html;
        params.delete("rows");
        history.replaceState(null, "", "/?" + params.toString());
      })
      .catch(function () {});
  }
  form.addEventListener("input", refresh);
  form.addEventListener("change", refresh);
});
