// Portcullis console: the little the pages need from a script, with no inline code (the
// Content-Security-Policy allows scripts from this origin only).
//  - forms with data-confirm ask before they change anything;
//  - a page region with data-refresh="N" reloads the page every N seconds while visible;
//  - a submitted form's buttons are disabled, so a double click sends it once.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const form of document.querySelectorAll("form")) {
    form.addEventListener("submit", (ev) => {
      const question = form.getAttribute("data-confirm");
      if (question && !window.confirm(question)) {
        ev.preventDefault();
        return;
      }
      if (form.method.toLowerCase() === "post") {
        for (const b of form.querySelectorAll("button")) {
          b.disabled = true;
        }
      }
    });
  }
  const region = document.querySelector("[data-refresh]");
  if (region) {
    const seconds = Math.max(15, parseInt(region.getAttribute("data-refresh"), 10) || 60);
    window.setInterval(() => {
      if (document.visibilityState === "visible") {
        window.location.reload();
      }
    }, seconds * 1000);
  }
});
