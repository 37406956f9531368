// The language switch's links lead to the same page in the other language, where the
// section ids and the search are the same: they carry the reader's #section and ?q= along.
(function () {
  function carry() {
    document.querySelectorAll("a.language-link").forEach(function (link) {
      link.href = link.href.split(/[?#]/)[0] + location.search + location.hash;
    });
  }
  document.addEventListener("DOMContentLoaded", carry);
  window.addEventListener("hashchange", carry);
})();
