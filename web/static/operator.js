// The operator page: each <time datetime> is shown in the browser's own
// zone and locale (the server wrote it in its zone, which works without
// this script).
"use strict";

function localTimes() {
  for (const el of document.querySelectorAll("time[datetime]")) {
    const d = new Date(el.dateTime);
    if (!isNaN(d)) {
      el.title = el.textContent;
      el.textContent = d.toLocaleString();
    }
  }
}

localTimes();
